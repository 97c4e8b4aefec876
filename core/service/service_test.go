package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func newCore(t *testing.T) (*nodetest.Core, *nodetest.Clock) {
	t.Helper()
	t.Parallel()
	clock := nodetest.NewClock(t0)
	return nodetest.NewCore(t, service.Config{Now: clock.Now, MaxDataBytes: 4096}), clock
}

// events collects the events on a subject pattern, in order.
func events(t *testing.T, c *nodetest.Core, pattern string) <-chan *core.Event {
	t.Helper()
	ch := make(chan *core.Event, 1000)
	sub, err := c.Client.Subscribe(pattern, func(ev *core.Event) { ch <- ev })
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return ch
}

func next(t *testing.T, ch <-chan *core.Event) *core.Event {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
		return nil
	}
}

var ctx = context.Background()

func TestCreateGetExistsRemove(t *testing.T) {
	c, _ := newCore(t)
	evs := events(t, c, c.Client.Subjects().AllJobEvents())

	job, err := c.Client.Create(ctx, "email", map[string]string{"to": "a@example.com"}, &core.CreateOpts{
		Priority: core.PriorityHigh, MaxAttempts: 3, TTL: 5 * time.Second,
		Backoff: &core.Backoff{Type: core.BackoffExponential, Delay: 100 * time.Millisecond},
	})
	require.NoError(t, err)
	require.Positive(t, job.ID)
	require.Equal(t, core.StateInactive, job.State)
	require.Equal(t, core.PriorityHigh, job.Priority)
	require.Equal(t, 3, job.MaxAttempts)
	require.Equal(t, int64(5000), job.TTL)
	require.Equal(t, t0.UnixMilli(), job.CreatedAt)

	ev := next(t, evs)
	require.Equal(t, "enqueue", ev.Event)
	require.Equal(t, job.ID, ev.ID)
	require.Equal(t, "email", ev.Type)
	require.Equal(t, core.StateInactive, ev.Job.State)
	require.Nil(t, ev.Job.Data, "events carry the job without its data")

	got, err := c.Client.Get(ctx, job.ID)
	require.NoError(t, err)
	require.JSONEq(t, `{"to":"a@example.com"}`, string(got.Data))
	got.Data, job.Data = nil, nil
	require.Equal(t, job, got, "get returns what create stored")

	ok, err := c.Client.Exists(ctx, job.ID)
	require.NoError(t, err)
	require.True(t, ok)

	removed, err := c.Client.Remove(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, job.ID, removed.ID, "remove answers the job as it was")
	require.Equal(t, core.StateInactive, removed.State)
	require.Nil(t, removed.Data, "without data, as its event")
	gone := next(t, evs)
	require.Equal(t, "remove", gone.Event)
	require.Equal(t, removed, gone.Job)
	ok, err = c.Client.Exists(ctx, job.ID)
	require.NoError(t, err)
	require.False(t, ok)
	_, err = c.Client.Get(ctx, job.ID)
	require.ErrorIs(t, err, core.ErrNotFound)
	_, err = c.Client.Remove(ctx, job.ID)
	require.ErrorIs(t, err, core.ErrNotFound)
	n, err := c.Client.Count(ctx, "", "")
	require.NoError(t, err)
	require.Zero(t, n, "remove leaves no index entry behind")
}

func TestCreateBulkIsAllOrNothing(t *testing.T) {
	c, _ := newCore(t)
	jobs, err := c.Client.CreateBulk(ctx, []core.Spec{
		{Type: "email", Data: json.RawMessage(`1`)},
		{Type: "resize", Delay: 1000 * time.Millisecond},
		{Type: "email", Data: json.RawMessage(`2`)},
	})
	require.NoError(t, err)
	require.Len(t, jobs, 3)
	require.Equal(t, []string{"email", "resize", "email"}, []string{jobs[0].Type, jobs[1].Type, jobs[2].Type})
	require.Equal(t, core.StateDelayed, jobs[1].State)
	require.Less(t, jobs[0].ID, jobs[2].ID)

	_, err = c.Client.CreateBulk(ctx, []core.Spec{{Type: "email"}, {Type: "a.b"}})
	require.ErrorIs(t, err, core.ErrInvalid)
	require.ErrorContains(t, err, "jobs[1].type")
	n, err := c.Client.Count(ctx, "", "")
	require.NoError(t, err)
	require.Equal(t, int64(3), n, "a refused bulk stores nothing")
}

// TestCreateBulkIDsOnlyAnswersTheIDs: with ids_only a create_bulk stores
// what it would without, and answers {"ids":[…]} in request order, a
// duplicate's being the id of the job holding its unique key; ids_only that
// is not a bool is refused and stores nothing.
func TestCreateBulkIDsOnlyAnswersTheIDs(t *testing.T) {
	c, _ := newCore(t)
	held, err := c.Client.Create(ctx, "email", nil, &core.CreateOpts{UniqueKey: "k"})
	require.NoError(t, err)
	ids, err := c.Client.CreateBulkIDs(ctx, []core.Spec{
		{Type: "email", Data: json.RawMessage(`1`)},
		{Type: "resize", Delay: 1000 * time.Millisecond},
		{Type: "email", UniqueKey: "k"},
	})
	require.NoError(t, err)
	require.Len(t, ids, 3)
	require.Equal(t, held.ID, ids[2], "the duplicate's id is its holder's")
	first, err := c.Client.Get(ctx, ids[0])
	require.NoError(t, err)
	require.Equal(t, json.RawMessage(`1`), first.Data)
	second, err := c.Client.Get(ctx, ids[1])
	require.NoError(t, err)
	require.Equal(t, core.StateDelayed, second.State)

	raw := bus.NewClient(c.NATS.Conn, 5*time.Second)
	var reply map[string]json.RawMessage
	require.NoError(t, raw.CallRaw(ctx, c.Client.Subjects().Core(bus.MethodCreateBulk),
		[]byte(`{"jobs":[{"type":"email"}],"ids_only":true}`), &reply))
	require.Equal(t, []string{"ids"}, slices.Collect(maps.Keys(reply)), "no jobs, only ids")

	err = raw.CallRaw(ctx, c.Client.Subjects().Core(bus.MethodCreateBulk),
		[]byte(`{"jobs":[{"type":"email"}],"ids_only":"yes"}`), nil)
	require.ErrorIs(t, err, core.ErrInvalid)
	require.ErrorContains(t, err, "ids_only")
	n, err := c.Client.Count(ctx, "", "")
	require.NoError(t, err)
	require.Equal(t, int64(4), n, "the refused call stored nothing")
}

func TestPriorityThenFIFO(t *testing.T) {
	c, _ := newCore(t)
	var want []int64
	create := func(p core.Priority) int64 {
		job, err := c.Client.Create(ctx, "work", nil, &core.CreateOpts{Priority: p})
		require.NoError(t, err)
		return job.ID
	}
	low1, normal1, crit, normal2, high, low2 := create(core.PriorityLow), create(core.PriorityNormal),
		create(core.PriorityCritical), create(core.PriorityNormal), create(core.PriorityHigh), create(core.PriorityLow)
	want = []int64{crit, high, normal1, normal2, low1, low2}
	require.Equal(t, want, rangeIDs(t, c, core.RangeRequest{State: core.StateInactive, To: 99}))

	desc := rangeIDs(t, c, core.RangeRequest{State: core.StateInactive, To: 99, Order: core.OrderDesc})
	require.Equal(t, []int64{low2, low1, normal2, normal1, high, crit}, desc)

	// A new priority keeps the job's place in the line of that priority: low2
	// became ready after normal2, so it goes behind it.
	_, err := c.Client.SetPriority(ctx, low2, core.PriorityNormal)
	require.NoError(t, err)
	require.Equal(t, []int64{crit, high, normal1, normal2, low2, low1},
		rangeIDs(t, c, core.RangeRequest{State: core.StateInactive, To: 99}))

	ids, err := c.Client.IDs(ctx, core.StateInactive)
	require.NoError(t, err)
	require.Equal(t, []int64{crit, high, normal1, normal2, low2, low1}, ids)
}

func rangeIDs(t *testing.T, c *nodetest.Core, req core.RangeRequest) []int64 {
	t.Helper()
	jobs, err := c.Client.Range(ctx, req)
	require.NoError(t, err)
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

func TestDelayedJobIsNeverPromotedEarly(t *testing.T) {
	c, clock := newCore(t)
	evs := events(t, c, c.Client.Subjects().JobEventsOf("promotion", ""))
	job, err := c.Client.Create(ctx, "later", nil, &core.CreateOpts{Delay: time.Second})
	require.NoError(t, err)
	require.Equal(t, core.StateDelayed, job.State)
	require.Equal(t, t0.UnixMilli()+1000, job.PromoteAt)

	mv, err := c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, core.MoveReply{Moved: 0, NextDue: job.PromoteAt}, *mv)

	clock.Advance(999 * time.Millisecond)
	mv, err = c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Zero(t, mv.Moved, "one millisecond early is early")

	clock.Advance(time.Millisecond)
	mv, err = c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, core.MoveReply{Moved: 1, NextDue: 0}, *mv)
	ev := next(t, evs)
	require.Equal(t, job.ID, ev.ID)
	require.Equal(t, core.StateInactive, ev.Job.State)

	mv, err = c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Zero(t, mv.Moved, "promoting again moves nothing")
	got, err := c.Client.Get(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, got.State)
}

func TestPromoteHonoursLimitAcrossTypes(t *testing.T) {
	c, clock := newCore(t)
	var specs []core.Spec
	for i := range 30 {
		specs = append(specs, core.Spec{Type: fmt.Sprintf("t%d", i%3), Delay: time.Duration(10+i) * time.Millisecond})
	}
	_, err := c.Client.CreateBulk(ctx, specs)
	require.NoError(t, err)
	clock.Advance(time.Minute)
	total := 0
	for range 10 {
		mv, err := c.Client.Promote(ctx, 7)
		require.NoError(t, err)
		require.LessOrEqual(t, mv.Moved, 7)
		total += mv.Moved
		if mv.Moved == 0 {
			break
		}
	}
	require.Equal(t, 30, total)
	n, err := c.Client.Count(ctx, core.StateInactive, "")
	require.NoError(t, err)
	require.Equal(t, int64(30), n)
}

func TestUniqueKeyReturnsTheUnfinishedJob(t *testing.T) {
	c, _ := newCore(t)
	evs := events(t, c, c.Client.Subjects().JobEventsOf("enqueue", ""))
	opts := &core.CreateOpts{UniqueKey: "order-17"}
	first, err := c.Client.Create(ctx, "invoice", 1, opts)
	require.NoError(t, err)
	require.Equal(t, first.ID, next(t, evs).ID)

	again, err := c.Client.Create(ctx, "invoice", 2, opts)
	require.NoError(t, err)
	require.Equal(t, first.ID, again.ID)
	require.JSONEq(t, `1`, string(again.Data), "the first job, unchanged")

	other, err := c.Client.Create(ctx, "shipping", 3, opts)
	require.NoError(t, err)
	require.NotEqual(t, first.ID, other.ID, "unique keys are per job type")
	require.Equal(t, other.ID, next(t, evs).ID, "the duplicate published nothing")

	_, err = c.Client.SetState(ctx, first.ID, core.StateComplete)
	require.NoError(t, err)
	third, err := c.Client.Create(ctx, "invoice", 4, opts)
	require.NoError(t, err)
	require.NotEqual(t, first.ID, third.ID, "a finished job gives its key up")

	// The ids allocated for duplicates point nowhere.
	n, err := c.Client.Count(ctx, "", "invoice")
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
}

func TestLogs(t *testing.T) {
	c, clock := newCore(t)
	evs := events(t, c, c.Client.Subjects().JobEventsOf("log", ""))
	job, err := c.Client.Create(ctx, "email", nil, nil)
	require.NoError(t, err)
	var want []core.LogEntry
	for _, line := range []string{"first", "second", "third"} {
		clock.Advance(time.Second)
		require.NoError(t, c.Client.AddLog(ctx, job.ID, line))
		require.Equal(t, line, next(t, evs).Line)
		want = append(want, core.LogEntry{At: clock.Now().UnixMilli(), Line: line})
	}
	lines, err := c.Client.Log(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"first", "second", "third"}, lines)
	entries, err := c.Client.LogEntries(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, want, entries, "each line with its time")
	body, code := raw(t, c, bus.MethodLog, fmt.Sprintf(`{"id":%d}`, job.ID))
	require.Empty(t, code)
	require.Contains(t, body, fmt.Sprintf(`"entries":[{"at":%d,"line":"first"}`, want[0].At))

	require.ErrorIs(t, c.Client.AddLog(ctx, job.ID+1000, "x"), core.ErrNotFound)
	_, err = c.Client.Log(ctx, job.ID+1000)
	require.ErrorIs(t, err, core.ErrNotFound)
}

func TestRangeCountTypesStats(t *testing.T) {
	c, clock := newCore(t)
	mk := func(typ string, delay int64) int64 {
		j, err := c.Client.CreateSpec(ctx, core.Spec{Type: typ, Delay: time.Duration(delay) * time.Millisecond})
		require.NoError(t, err)
		clock.Advance(time.Millisecond)
		return j.ID
	}
	a1, b1, a2, a3, b2 := mk("a", 0), mk("b", 0), mk("a", 0), mk("a", 5000), mk("b", 0)
	_, err := c.Client.SetState(ctx, a2, core.StateFailed)
	require.NoError(t, err)
	clock.Advance(time.Millisecond)
	_, err = c.Client.SetState(ctx, b1, core.StateFailed)
	require.NoError(t, err)

	types, err := c.Client.Types(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, types)

	// Ids come in blocks of one type each (a's before b's here), but every
	// state lists by creation time.
	require.Equal(t, []int64{a1, b1, a2, a3, b2}, rangeIDs(t, c, core.RangeRequest{To: 99}), "all jobs by creation, not by id")
	require.Equal(t, []int64{b1, a1}, rangeIDs(t, c, core.RangeRequest{From: 3, To: 4, Order: core.OrderDesc}))
	require.Equal(t, []int64{a2, b1}, rangeIDs(t, c, core.RangeRequest{State: core.StateFailed, To: 9}), "failed by finish time")
	require.Equal(t, []int64{b1}, rangeIDs(t, c, core.RangeRequest{State: core.StateFailed, Type: "b", To: 9}))
	require.Equal(t, []int64{a3}, rangeIDs(t, c, core.RangeRequest{State: core.StateDelayed, To: 9}))
	require.Equal(t, []int64{a1, b2}, rangeIDs(t, c, core.RangeRequest{State: core.StateInactive, To: 9}))
	require.Empty(t, rangeIDs(t, c, core.RangeRequest{State: core.StateInactive, From: 5, To: 9}))
	require.Empty(t, rangeIDs(t, c, core.RangeRequest{Type: "nosuchtype", To: 9}))

	for _, q := range []struct {
		state core.State
		typ   string
		want  int64
	}{{"", "", 5}, {core.StateFailed, "", 2}, {core.StateInactive, "a", 1}, {"", "b", 2}, {core.StateActive, "", 0}} {
		n, err := c.Client.Count(ctx, q.state, q.typ)
		require.NoError(t, err)
		require.Equal(t, q.want, n, "count %q %q", q.state, q.typ)
	}

	st, err := c.Client.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, core.StateCounts{Delayed: 1, Inactive: 2, Failed: 2}, st.StateCounts)
	require.Equal(t, core.StateCounts{Delayed: 1, Inactive: 1, Failed: 1}, st.Types["a"])
	require.Equal(t, core.StateCounts{Inactive: 1, Failed: 1}, st.Types["b"])
}

func TestSetStateByHand(t *testing.T) {
	c, clock := newCore(t)
	job, err := c.Client.Create(ctx, "email", nil, &core.CreateOpts{UniqueKey: "k", TTL: 2 * time.Second, Delay: 0})
	require.NoError(t, err)
	evs := events(t, c, c.Client.Subjects().JobEvents(job.ID))

	failed, err := c.Client.SetState(ctx, job.ID, core.StateFailed)
	require.NoError(t, err)
	require.Equal(t, core.StateFailed, failed.State)
	require.Equal(t, t0.UnixMilli(), failed.FailedAt)
	require.Equal(t, "failed", next(t, evs).Event)

	same, err := c.Client.SetState(ctx, job.ID, core.StateFailed)
	require.NoError(t, err)
	require.Equal(t, failed.UpdatedAt, same.UpdatedAt, "no change, no event")

	clock.Advance(time.Second)
	active, err := c.Client.SetState(ctx, job.ID, core.StateActive)
	require.NoError(t, err)
	require.Equal(t, clock.Now().UnixMilli()+2000, active.LeaseUntil)
	require.Zero(t, active.FailedAt, "a job that runs again is no longer failed")
	require.Equal(t, "start", next(t, evs).Event)

	retried, err := c.Client.SetState(ctx, job.ID, core.StateInactive)
	require.NoError(t, err)
	require.Zero(t, retried.LeaseUntil, "leaving active drops the lease")
	require.Equal(t, "enqueue", next(t, evs).Event)
	again, err := c.Client.Create(ctx, "email", nil, &core.CreateOpts{UniqueKey: "k"})
	require.NoError(t, err)
	require.Equal(t, job.ID, again.ID, "a retried job holds its unique key again")

	due := events(t, c, c.Client.Subjects().Queue(bus.QueueDue))
	delayed, err := c.Client.SetState(ctx, job.ID, core.StateDelayed)
	require.NoError(t, err)
	require.Equal(t, core.StateDelayed, delayed.State)
	require.Equal(t, delayed.PromoteAt, next(t, due).DueAt)
	require.Equal(t, []int64{job.ID}, rangeIDs(t, c, core.RangeRequest{State: core.StateDelayed, To: 9}))
	n, err := c.Client.Count(ctx, core.StateInactive, "")
	require.NoError(t, err)
	require.Zero(t, n)
}

func TestCreatingADelayedJobAnnouncesItsDueTime(t *testing.T) {
	c, _ := newCore(t)
	due := events(t, c, c.Client.Subjects().Queue(bus.QueueDue))
	_, err := c.Client.CreateBulk(ctx, []core.Spec{{Type: "x", Delay: 500 * time.Millisecond}, {Type: "x", Delay: 200 * time.Millisecond}, {Type: "x"}})
	require.NoError(t, err)
	ev := next(t, due)
	require.Equal(t, t0.UnixMilli()+200, ev.DueAt, "the earliest of the bulk, once")
}

// TestBadInputIsInvalidAndStoresNothing sends raw bodies, as a client in any
// language could, and checks each refusal names the field.
func TestBadInputIsInvalidAndStoresNothing(t *testing.T) {
	c, _ := newCore(t)
	raw := bus.NewClient(c.NATS.Conn, 5*time.Second)
	subj := c.Client.Subjects()
	big := `"` + strings.Repeat("x", 5000) + `"`
	cases := []struct {
		name, method, body, want string
	}{
		{"broken JSON", "create", `{"type":"email",`, "body: truncated JSON"},
		{"not an object", "create", `[1,2]`, "body: expected a JSON object, got JSON array"},
		{"type is a number", "create", `{"type":5}`, "type: expected string"},
		{"type with a dot", "create", `{"type":"a.b"}`, `type: "a.b" is not a job type`},
		{"type with a space", "create", `{"type":"a b"}`, `type: "a b" is not a job type`},
		{"type with a wildcard", "create", `{"type":"a*"}`, `type: "a*" is not a job type`},
		{"empty type", "create", `{"type":""}`, "type: \"\" is not a job type: must not be empty"},
		{"missing type", "create", `{"data":{}}`, "type:"},
		{"negative delay", "create", `{"type":"e","delay":-1}`, "delay: -1 ms is outside"},
		{"delay as a string", "create", `{"type":"e","delay":"5s"}`, "delay: expected int64, got JSON string"},
		{"unknown priority name", "create", `{"type":"e","priority":"urgent"}`, `priority: "urgent" is neither`},
		{"fractional priority", "create", `{"type":"e","priority":1.5}`, "priority: 1.5 is not an integer"},
		{"priority past the limit, as sent", "create", `{"type":"e","priority":9223372036854775807}`, "priority: 9223372036854775807 is outside ±9007199254740991"},
		{"negative attempts", "create", `{"type":"e","max_attempts":-2}`, "max_attempts: -2 is outside"},
		{"unknown backoff", "create", `{"type":"e","backoff":{"type":"linear","delay":5}}`, `backoff.type: "linear"`},
		{"negative ttl", "create", `{"type":"e","ttl":-5}`, "ttl: -5 ms"},
		{"misspelt field", "create", `{"type":"e","priorty":1}`, "priorty: unknown field"},
		{"data over the limit", "create", `{"type":"e","data":` + big + `}`, "data: 5002 bytes is over the limit of 4096"},
		{"empty bulk", "create_bulk", `{"jobs":[]}`, "jobs: no jobs given"},
		{"bad job in bulk", "create_bulk", `{"jobs":[{"type":"ok"},{"type":"ok","delay":-3}]}`, "jobs[1].delay"},
		{"id as a string", "get", `{"id":"7"}`, "id: expected int64, got JSON string"},
		{"negative id", "get", `{"id":-7}`, "id: -7 is not a job id"},
		{"zero id", "remove", `{}`, "id: 0 is not a job id"},
		{"unknown state", "set_state", `{"id":1,"state":"done"}`, `state: "done" is not a state`},
		{"missing priority", "set_priority", `{"id":1}`, "priority: missing"},
		{"range backwards", "range", `{"from":5,"to":1}`, "to: 1 is before from (5)"},
		{"range negative", "range", `{"from":-1,"to":1}`, "from: -1 is negative"},
		{"range too wide", "range", `{"from":0,"to":5000}`, "over the limit of 1000"},
		{"range bad order", "range", `{"to":1,"order":"up"}`, `order: "up" is not asc or desc`},
		{"range bad type", "range", `{"to":1,"type":"a>b"}`, `type: "a>b"`},
		{"count unknown state", "count", `{"state":"x"}`, `state: "x" is not a state`},
		{"ids without state", "ids", `{}`, `state: "" is not a state`},
		{"promote negative limit", "promote", `{"limit":-1}`, "limit: -1 is negative"},
		{"log line too long", "add_log", `{"id":1,"line":"` + strings.Repeat("y", 70000) + `"}`, "line: 70000 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := raw.CallRaw(ctx, subj.Core(tc.method), []byte(tc.body), nil)
			require.ErrorIs(t, err, core.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
		})
	}
	st, err := c.Client.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, core.StateCounts{}, st.StateCounts, "nothing was stored")
	types, err := c.Client.Types(ctx)
	require.NoError(t, err)
	require.Empty(t, types)
}

func TestNotFound(t *testing.T) {
	c, _ := newCore(t)
	for _, call := range []func() error{
		func() error { _, err := c.Client.Get(ctx, 424242); return err },
		func() error { _, err := c.Client.Remove(ctx, 424242); return err },
		func() error { _, err := c.Client.SetState(ctx, 424242, core.StateInactive); return err },
		func() error { _, err := c.Client.SetPriority(ctx, 424242, 1); return err },
		func() error { _, err := c.Client.Log(ctx, 424242); return err },
	} {
		err := call()
		require.ErrorIs(t, err, core.ErrNotFound)
		require.ErrorContains(t, err, "job 424242 not found")
	}
}

// TestDelayedJobsAreDueNoEarlierThanTheirDelayFromTheCall: core stamps a
// create with its clock rounded up to the millisecond and checks due times
// against its clock rounded down, so a job is never due before the moment
// the create call began plus its delay, whatever the sub-millisecond phase.
func TestDelayedJobsAreDueNoEarlierThanTheirDelayFromTheCall(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	clock := t0.Add(400 * time.Microsecond) // mid-millisecond
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	set := func(at time.Time) { mu.Lock(); clock = at; mu.Unlock() }
	c := nodetest.NewCore(t, service.Config{Now: now})
	callStart := now()
	job, err := c.Client.Create(ctx, "x", nil, &core.CreateOpts{Delay: 5 * time.Millisecond})
	require.NoError(t, err)
	require.GreaterOrEqual(t, job.PromoteAt, callStart.Add(5*time.Millisecond).UnixMilli())
	for _, after := range []time.Duration{4600 * time.Microsecond, 4999 * time.Microsecond} {
		set(callStart.Add(after))
		mv, err := c.Client.Promote(ctx, 0)
		require.NoError(t, err)
		require.Zero(t, mv.Moved, "promoted %v after the call, before its 5ms delay", after)
	}
	set(callStart.Add(5 * time.Millisecond))
	mv, err := c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Zero(t, mv.Moved, "the call began 0.4ms into a millisecond: due at the next whole one")
	set(time.UnixMilli(job.PromoteAt))
	mv, err = c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 1, mv.Moved)
}

func TestEnqueueMarksNewJobsOnly(t *testing.T) {
	c, _ := newCore(t)
	evs := events(t, c, c.Client.Subjects().JobEventsOf("enqueue", ""))
	job, err := c.Client.Create(ctx, "n", nil, nil)
	require.NoError(t, err)
	require.True(t, next(t, evs).New, "a new job")
	_, err = c.Client.SetState(ctx, job.ID, core.StateFailed)
	require.NoError(t, err)
	_, err = c.Client.SetState(ctx, job.ID, core.StateInactive)
	require.NoError(t, err)
	require.False(t, next(t, evs).New, "a re-run is not a new job")
}
