package service_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestRetentionOnTheWireEchoesItsShapeAndRefusesBadOnes: create answers
// remove_on_complete and remove_on_fail as sent (true or {age, count}),
// and each bad shape is invalid, naming the field, and stores nothing.
func TestRetentionOnTheWireEchoesItsShapeAndRefusesBadOnes(t *testing.T) {
	c, _ := newCore(t)
	body, code := raw(t, c, bus.MethodCreate, `{"type":"t","remove_on_complete":{"count":1000},"remove_on_fail":true}`)
	require.Empty(t, code, body)
	var job core.Job
	require.NoError(t, json.Unmarshal([]byte(body), &job))
	require.Equal(t, core.Retention{Count: 1000}, job.RemoveOnComplete)
	require.Equal(t, core.RemoveAtOnce, job.RemoveOnFail)
	require.Contains(t, body, `"remove_on_complete":{"count":1000}`)
	require.Contains(t, body, `"remove_on_fail":true`)

	body, code = raw(t, c, bus.MethodCreate, `{"type":"t"}`)
	require.Empty(t, code, body)
	require.Contains(t, body, `"remove_on_complete":false`, "replies keep the field they always had")
	require.NotContains(t, body, `remove_on_fail`)

	for _, bad := range []struct{ body, want string }{
		{`{"type":"u","remove_on_complete":{"age":-1}}`, "remove_on_complete.age: -1 is negative"},
		{`{"type":"u","remove_on_fail":{"count":-1}}`, "remove_on_fail.count: -1 is negative"},
		{`{"type":"u","remove_on_fail":{"count":1,"size":2}}`, "remove_on_fail.size: unknown key"},
		{`{"type":"u","remove_on_complete":{"age":0,"count":0}}`, "remove_on_complete: age and count are both 0"},
		{`{"type":"u","remove_on_complete":"1d"}`, "remove_on_complete: expected true, false or"},
	} {
		msg, err := c.NATS.Conn.Request(c.Client.Subjects().Core(bus.MethodCreate), []byte(bad.body), 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, "invalid", msg.Header.Get(bus.HeaderKuebusCode), bad.body)
		require.Contains(t, msg.Header.Get(bus.HeaderError), bad.want, bad.body)
	}
	types, err := c.Client.Types(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"t"}, types, "no bad create stored anything")
}

// TestRemoveOnFailTrueDeletesAJobThatFailsForGood: it goes with its log
// once no attempt remains; the failed event still carries it.
func TestRemoveOnFailTrueDeletesAJobThatFailsForGood(t *testing.T) {
	c, _ := newCore(t)
	failed := events(t, c, c.Client.Subjects().JobEventsOf(bus.EventFailed, "tmp"))
	_, err := c.Client.Create(ctx, "tmp", 1, &core.CreateOpts{RemoveOnFail: core.RemoveAtOnce})
	require.NoError(t, err)
	j := lease(t, c, core.LeaseRequest{Types: []string{"tmp"}})[0]
	require.NoError(t, c.Client.AddLog(ctx, j.ID, "working"))
	require.NoError(t, op(t, c, bus.MethodFail, core.LeaseOp{ID: j.ID, Lease: j.Lease, Type: "tmp", Error: "boom"}, nil))
	ev := next(t, failed)
	require.Equal(t, j.ID, ev.ID)
	ok, err := c.Client.Exists(ctx, j.ID)
	require.NoError(t, err)
	require.False(t, ok)
	keys, err := c.Redis.Keys(ctx, "*:{tmp}:*").Result()
	require.NoError(t, err)
	for _, k := range keys {
		require.True(t, strings.HasSuffix(k, ":{tmp}:seq") || strings.HasSuffix(k, ":{tmp}:stats"),
			"hash, log and indexes gone; %s stays", k)
	}
}

// TestCleanRemovesByTypeDefaultAndJobRuleAndAnnouncesIt: with the default
// {count: 1} for complete jobs of every type, clean keeps each type's
// newest complete job, but a job's own {count: 5} keeps it; failed jobs
// have no default and stay. queue.cleaned reports each type and state once.
func TestCleanRemovesByTypeDefaultAndJobRuleAndAnnouncesIt(t *testing.T) {
	t.Parallel()
	clock := nodetest.NewClock(t0)
	c := nodetest.NewCore(t, service.Config{Now: clock.Now, Retention: map[string]core.TypeRetention{
		service.AnyType: {Complete: core.Retention{Count: 1}},
	}})
	cleaned := events(t, c, c.Client.Subjects().Queue(bus.QueueCleaned))
	finish := func(typ string, opts *core.CreateOpts, fail bool) int64 {
		t.Helper()
		_, err := c.Client.Create(ctx, typ, nil, opts)
		require.NoError(t, err)
		j := lease(t, c, core.LeaseRequest{Types: []string{typ}})[0]
		o := core.LeaseOp{ID: j.ID, Lease: j.Lease, Type: typ}
		if fail {
			o.Error = "x"
			require.NoError(t, op(t, c, bus.MethodFail, o, nil))
		} else {
			require.NoError(t, op(t, c, bus.MethodComplete, o, nil))
		}
		clock.Advance(time.Millisecond)
		return j.ID
	}
	own := finish("a", &core.CreateOpts{RemoveOnComplete: core.Retention{Count: 5}}, false)
	gone := finish("a", nil, false)
	kept := finish("a", nil, false)
	failedJob := finish("a", nil, true)
	bGone := finish("b", nil, false)
	bKept := finish("b", nil, false)

	reply, err := c.Client.Clean(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, &core.CleanReply{Removed: 2}, reply)
	got := map[string]*core.Event{}
	for range 2 {
		ev := next(t, cleaned)
		got[ev.Type] = ev
	}
	for typ, ev := range got {
		require.Equal(t, bus.QueueCleaned, ev.Event)
		require.Equal(t, core.StateComplete, ev.State, typ)
		require.Equal(t, 1, ev.Removed, typ)
	}
	require.Len(t, got, 2)
	for id, want := range map[int64]bool{own: true, gone: false, kept: true, failedJob: true, bGone: false, bKept: true} {
		ok, err := c.Client.Exists(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, ok, "job %d", id)
	}

	reply, err = c.Client.Clean(ctx, 0)
	require.NoError(t, err)
	require.Zero(t, reply.Removed, "nothing more")
	select {
	case ev := <-cleaned:
		t.Fatalf("a clean that removed nothing published %+v", ev)
	default:
	}

	_, code := raw(t, c, bus.MethodClean, `{"limit":-1}`)
	require.Equal(t, "invalid", code)
}

// TestRetentionDefaultsAreChecked: a default that is true, negative, or for
// a name that is no type stops New.
func TestRetentionDefaultsAreChecked(t *testing.T) {
	t.Parallel()
	ns := bustest.NewServer(t)
	for name, r := range map[string]map[string]core.TypeRetention{
		"true":               {"a": {Complete: core.RemoveAtOnce}},
		"negative":           {"a": {Failed: core.Retention{Age: -time.Millisecond}}},
		"cancelled true":     {"a": {Cancelled: core.RemoveAtOnce}},
		"cancelled negative": {"a": {Cancelled: core.Retention{Count: -1}}},
		"bad type":           {"a.b": {Failed: core.Retention{Age: time.Millisecond}}},
	} {
		_, err := service.New(service.Config{Store: panickyStore{}, Conn: ns.Conn, Retention: r})
		require.ErrorContains(t, err, "Retention", name)
	}
}

// TestCleanRemovesCancelledJobsPastTheirTypesDefault: with a default for
// cancelled jobs ({age: 1m} for every type, {count: 1} for b), clean
// removes those past it, announces queue.cleaned with state cancelled,
// and leaves the complete and failed jobs, which have no default, alone;
// a cancelled job's own remove_on_fail does not apply to it.
func TestCleanRemovesCancelledJobsPastTheirTypesDefault(t *testing.T) {
	t.Parallel()
	clock := nodetest.NewClock(t0)
	c := nodetest.NewCore(t, service.Config{Now: clock.Now, Retention: map[string]core.TypeRetention{
		service.AnyType: {Cancelled: core.Retention{Age: time.Minute}},
		"b":             {Cancelled: core.Retention{Count: 1}},
	}})
	cleaned := events(t, c, c.Client.Subjects().Queue(bus.QueueCleaned))
	cancelled := func(typ string, opts *core.CreateOpts) int64 {
		t.Helper()
		j, err := c.Client.Create(ctx, typ, nil, opts)
		require.NoError(t, err)
		_, err = c.Client.Cancel(ctx, j.ID, "")
		require.NoError(t, err)
		clock.Advance(time.Millisecond)
		return j.ID
	}
	old := cancelled("a", &core.CreateOpts{RemoveOnFail: core.Retention{Count: 100}})
	bOld := cancelled("b", nil)
	bNew := cancelled("b", nil)
	clock.Advance(time.Minute)
	young := cancelled("a", &core.CreateOpts{RemoveOnFail: core.RemoveAtOnce})
	_, err := c.Client.Create(ctx, "a", nil, nil)
	require.NoError(t, err)
	done := lease(t, c, core.LeaseRequest{Types: []string{"a"}})[0]
	require.NoError(t, op(t, c, bus.MethodComplete, core.LeaseOp{ID: done.ID, Lease: done.Lease, Type: "a"}, nil))

	reply, err := c.Client.Clean(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, &core.CleanReply{Removed: 2}, reply)
	got := map[string]*core.Event{}
	for range 2 {
		ev := next(t, cleaned)
		got[ev.Type] = ev
	}
	require.Len(t, got, 2)
	for typ, ev := range got {
		require.Equal(t, core.StateCancelled, ev.State, typ)
		require.Equal(t, 1, ev.Removed, typ)
	}
	for id, want := range map[int64]bool{old: false, young: true, bOld: false, bNew: true, done.ID: true} {
		ok, err := c.Client.Exists(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, ok, "job %d", id)
	}
}

// TestStatsGiveEachTypesDefaultRetention: stats names the default
// retention of each type that has one, its own entry or else "*"'s, on the
// wire as a job's retention is written; a type without one is left out.
func TestStatsGiveEachTypesDefaultRetention(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{Retention: map[string]core.TypeRetention{
		"email":         {Failed: core.Retention{Age: 24 * time.Hour}},
		service.AnyType: {Complete: core.Retention{Count: 100}},
	}})
	noDefaults := nodetest.NewCore(t, service.Config{})
	for _, typ := range []string{"email", "sms"} {
		_, err := c.Client.Create(t.Context(), typ, nil, nil)
		require.NoError(t, err)
		_, err = noDefaults.Client.Create(t.Context(), typ, nil, nil)
		require.NoError(t, err)
	}
	raw, code := rawStats(t, c)
	require.Empty(t, code)
	require.JSONEq(t, `{"email":{"failed":{"age":86400000}},"sms":{"complete":{"count":100}}}`, string(raw["retention"]))
	raw, _ = rawStats(t, noDefaults)
	require.NotContains(t, raw, "retention", "no type has a default")
}

// rawStats is c's stats reply, field by field as JSON.
func rawStats(t *testing.T, c *nodetest.Core) (map[string]json.RawMessage, string) {
	t.Helper()
	reply, code := raw(t, c, bus.MethodStats, `{}`)
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(reply), &fields), reply)
	return fields, code
}

// TestCleanRescoresJobsIndexedByID: jobs an earlier version indexed by id
// (score = id in their type's jobs) list by id over every state; a clean
// gives them their place in creation order, and they list newest first.
func TestCleanRescoresJobsIndexedByID(t *testing.T) {
	t.Parallel()
	clock := nodetest.NewClock(t0)
	c := nodetest.NewCore(t, service.Config{Now: clock.Now})
	var ids []int64 // in creation order
	for _, typ := range []string{"a", "b", "a"} {
		j, err := c.Client.Create(ctx, typ, nil, nil)
		require.NoError(t, err)
		ids = append(ids, j.ID)
		clock.Advance(time.Millisecond)
	}
	newest := []int64{ids[2], ids[1], ids[0]}
	every := func() []int64 {
		t.Helper()
		jobs, err := c.Client.Range(ctx, core.RangeRequest{From: 0, To: 9, Order: core.OrderDesc})
		require.NoError(t, err)
		var out []int64
		for _, j := range jobs {
			out = append(out, j.ID)
		}
		return out
	}
	require.Equal(t, newest, every(), "created by this version: newest first")
	for _, id := range ids { // as an earlier version indexed them
		typ := map[bool]string{true: "b", false: "a"}[id == ids[1]]
		require.NoError(t, c.Redis.ZAdd(ctx, c.RedisKey("{"+typ+"}:jobs"), redis.Z{Score: float64(id), Member: id}).Err())
	}
	require.Equal(t, []int64{ids[1], ids[2], ids[0]}, every(), "by id: b's block after a's")
	_, err := c.Client.Clean(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, newest, every(), "re-scored by the clean: newest first again")
}
