package service_test

import (
	"encoding/json"
	"fmt"
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

func lease(t *testing.T, c *nodetest.Core, req core.LeaseRequest) []core.Job {
	t.Helper()
	jobs, err := c.Client.Lease(ctx, req)
	require.NoError(t, err)
	return jobs
}

// op makes a lease holder's call by its method's name, through the client's
// typed method, and stores its reply in reply (a *core.Job for fail, a
// *core.TouchReply for touch) unless reply is nil.
func op(t *testing.T, c *nodetest.Core, method string, o core.LeaseOp, reply any) error {
	t.Helper()
	switch method {
	case bus.MethodComplete:
		return c.Client.Complete(ctx, o)
	case bus.MethodFail:
		job, err := c.Client.Fail(ctx, o)
		if r, ok := reply.(*core.Job); ok && err == nil {
			*r = *job
		}
		return err
	case bus.MethodTouch:
		until, err := c.Client.Touch(ctx, o)
		if r, ok := reply.(*core.TouchReply); ok {
			r.LeaseUntil = until.UnixMilli()
		}
		return err
	case bus.MethodRelease:
		return c.Client.Release(ctx, o)
	case bus.MethodRejoin:
		return c.Client.Rejoin(ctx, o)
	case bus.MethodProgress:
		return c.Client.Progress(ctx, o)
	}
	t.Fatalf("op: %q is not a lease holder's method", method)
	return nil
}

func ptr(n int64) *int64 { return &n }

func TestLeaseByPriorityThenFIFOAcrossTypes(t *testing.T) {
	c, _ := newCore(t)
	var want []int64
	mk := func(typ string, p core.Priority) int64 {
		j, err := c.Client.Create(ctx, typ, nil, &core.CreateOpts{Priority: p})
		require.NoError(t, err)
		return j.ID
	}
	a1 := mk("a", core.PriorityNormal)
	b1 := mk("b", core.PriorityHigh)
	a2 := mk("a", core.PriorityHigh)
	mk("c", core.PriorityCritical) // not asked for
	b2 := mk("b", core.PriorityLow)
	want = []int64{b1, a2, a1, b2}

	var got []int64
	for range 4 {
		jobs := lease(t, c, core.LeaseRequest{Types: []string{"a", "b"}, Worker: "w1"})
		require.Len(t, jobs, 1)
		require.Equal(t, core.StateActive, jobs[0].State)
		require.NotEmpty(t, jobs[0].Lease)
		require.Equal(t, "w1", jobs[0].WorkerID)
		got = append(got, jobs[0].ID)
	}
	require.Equal(t, want, got)
	require.Empty(t, lease(t, c, core.LeaseRequest{Types: []string{"a", "b"}}))

	// Many per call, in the same order.
	for i := range 5 {
		mk("d", core.Priority(-i))
	}
	jobs := lease(t, c, core.LeaseRequest{Types: []string{"d"}, Max: 3})
	require.Len(t, jobs, 3)
	require.Equal(t, []core.Priority{-4, -3, -2}, []core.Priority{jobs[0].Priority, jobs[1].Priority, jobs[2].Priority})
	require.Equal(t, jobs[0].Lease, jobs[2].Lease, "one token per lease call")
}

func TestLeaseWaitsAndIsWokenByACreate(t *testing.T) {
	t.Parallel()
	parked := make(chan struct{}, 10)
	c := nodetest.NewCore(t, service.Config{OnLeaseWait: func([]string) { parked <- struct{}{} }})
	got := make(chan []core.Job, 1)
	go func() {
		jobs, _ := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"wake"}, Wait: 60_000})
		got <- jobs
	}()
	<-parked // the lease found nothing and waits
	job, err := c.Client.Create(ctx, "wake", nil, nil)
	require.NoError(t, err)
	select {
	case jobs := <-got:
		require.Len(t, jobs, 1)
		require.Equal(t, job.ID, jobs[0].ID)
	case <-time.After(10 * time.Second):
		t.Fatal("a waiting lease was not woken by a create (wait was 60 s)")
	}
}

func TestLeaseWaitEndsEmpty(t *testing.T) {
	c, _ := newCore(t)
	start := time.Now()
	require.Empty(t, lease(t, c, core.LeaseRequest{Types: []string{"none"}, Wait: 50}))
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
}

func TestCompleteStoresResultAndRefusesStaleTokens(t *testing.T) {
	c, clock := newCore(t)
	evs := events(t, c, c.Client.Subjects().JobEventsOf("complete", ""))
	created, err := c.Client.Create(ctx, "email", nil, &core.CreateOpts{UniqueKey: "u1"})
	require.NoError(t, err)
	j := lease(t, c, core.LeaseRequest{Types: []string{"email"}})[0]
	clock.Advance(250 * time.Millisecond)

	err = op(t, c, bus.MethodComplete, core.LeaseOp{ID: j.ID, Lease: "not-the-token"}, nil)
	require.ErrorIs(t, err, core.ErrConflict)
	require.NoError(t, op(t, c, bus.MethodComplete, core.LeaseOp{ID: j.ID, Lease: j.Lease, Result: json.RawMessage(`{"sent":true}`)}, nil))
	ev := next(t, evs)
	require.JSONEq(t, `{"sent":true}`, string(ev.Result))

	done, err := c.Client.Get(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateComplete, done.State)
	require.Equal(t, 1, done.Attempts)
	require.Equal(t, 100, done.Progress)
	require.Equal(t, int64(250), done.Duration)
	require.JSONEq(t, `{"sent":true}`, string(done.Result))
	st, err := c.Client.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(250), st.WorkTime)

	// A retry of the complete (its answer was lost) succeeds and changes
	// nothing but publishes its event again, marked repeated (the first
	// may never have been published); another operation with the same,
	// spent lease is a conflict.
	require.NoError(t, op(t, c, bus.MethodComplete, core.LeaseOp{ID: j.ID, Lease: j.Lease}, nil), "completing twice")
	rep := next(t, evs)
	require.Equal(t, j.ID, rep.ID, "the retried complete published its event again")
	require.True(t, rep.Repeated, "marked repeated")
	require.False(t, ev.Repeated, "the first was not")
	err = op(t, c, bus.MethodFail, core.LeaseOp{ID: j.ID, Lease: j.Lease, Error: "late"}, nil)
	require.ErrorIs(t, err, core.ErrConflict, "failing after the complete")
	same, err := c.Client.Get(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, done, same, "the retry changed nothing")
	// Events keep their order: the next complete event is another job's,
	// so the conflicting fail published none.
	other, err := c.Client.Create(ctx, "email", nil, nil)
	require.NoError(t, err)
	oj := lease(t, c, core.LeaseRequest{Types: []string{"email"}})[0]
	require.NoError(t, op(t, c, bus.MethodComplete, core.LeaseOp{ID: oj.ID, Lease: oj.Lease}, nil))
	require.Equal(t, other.ID, next(t, evs).ID, "the conflicting fail published no event")
	again, err := c.Client.Create(ctx, "email", nil, &core.CreateOpts{UniqueKey: "u1"})
	require.NoError(t, err)
	require.NotEqual(t, created.ID, again.ID, "a complete job gave its unique key up")
}

func TestRemoveOnComplete(t *testing.T) {
	c, _ := newCore(t)
	_, err := c.Client.Create(ctx, "tmp", 1, &core.CreateOpts{RemoveOnComplete: core.RemoveAtOnce})
	require.NoError(t, err)
	j := lease(t, c, core.LeaseRequest{Types: []string{"tmp"}})[0]
	require.NoError(t, c.Client.AddLog(ctx, j.ID, "working"))
	require.NoError(t, op(t, c, bus.MethodComplete, core.LeaseOp{ID: j.ID, Lease: j.Lease, Type: "tmp"}, nil))
	ok, err := c.Client.Exists(ctx, j.ID)
	require.NoError(t, err)
	require.False(t, ok)
	n, err := c.Client.Count(ctx, "", "tmp")
	require.NoError(t, err)
	require.Zero(t, n)
	keys, err := c.Redis.Keys(ctx, "*:{tmp}:log:*").Result()
	require.NoError(t, err)
	require.Empty(t, keys, "the log went with the job")
}

func TestFailRetriesWithBackoffThenFails(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backoff *core.Backoff
		waits   []int64 // before attempt 2, 3
	}{
		{"no backoff retries at once", nil, []int64{0, 0}},
		{"fixed backoff waits its delay", &core.Backoff{Type: core.BackoffFixed, Delay: 1000 * time.Millisecond}, []int64{1000, 1000}},
		{"exponential backoff follows Kue", &core.Backoff{Type: core.BackoffExponential, Delay: 1000 * time.Millisecond}, []int64{500, 1500}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, clock := newCore(t)
			evs := events(t, c, c.Client.Subjects().AllJobEvents())
			created, err := c.Client.Create(ctx, "flaky", nil, &core.CreateOpts{MaxAttempts: 3, Backoff: tc.backoff})
			require.NoError(t, err)
			require.Equal(t, "enqueue", next(t, evs).Event)
			for attempt := 1; attempt <= 3; attempt++ {
				jobs := lease(t, c, core.LeaseRequest{Types: []string{"flaky"}})
				require.Len(t, jobs, 1, "attempt %d", attempt)
				require.Equal(t, "start", next(t, evs).Event)
				var after core.Job
				require.NoError(t, op(t, c, bus.MethodFail, core.LeaseOp{ID: created.ID, Lease: jobs[0].Lease, Error: fmt.Sprintf("boom %d", attempt)}, &after))
				require.Equal(t, attempt, after.Attempts)
				require.Equal(t, fmt.Sprintf("boom %d", attempt), after.Error)
				ev := next(t, evs)
				require.Equal(t, fmt.Sprintf("boom %d", attempt), ev.Error)
				require.Equal(t, attempt, ev.Attempts)
				if attempt == 3 {
					require.Equal(t, core.StateFailed, after.State)
					require.Equal(t, "failed", ev.Event)
					break
				}
				require.Equal(t, "failed_attempt", ev.Event)
				wait := tc.waits[attempt-1]
				if wait == 0 {
					require.Equal(t, core.StateInactive, after.State)
					continue
				}
				require.Equal(t, core.StateDelayed, after.State)
				require.Equal(t, clock.Now().UnixMilli()+wait, after.PromoteAt)
				clock.Advance(time.Duration(wait-1) * time.Millisecond)
				mv, err := c.Client.Promote(ctx, 0)
				require.NoError(t, err)
				require.Zero(t, mv.Moved, "not before the backoff is over")
				clock.Advance(time.Millisecond)
				mv, err = c.Client.Promote(ctx, 0)
				require.NoError(t, err)
				require.Equal(t, 1, mv.Moved)
				require.Equal(t, "promotion", next(t, evs).Event)
			}
		})
	}
}

func TestExpiredLeaseIsRescuedAndTheOldTokenRefused(t *testing.T) {
	c, clock := newCore(t)
	evs := events(t, c, c.Client.Subjects().JobEventsOf("", "slow"))
	created, err := c.Client.Create(ctx, "slow", nil, &core.CreateOpts{TTL: time.Second, MaxAttempts: 1})
	require.NoError(t, err)
	require.Equal(t, "enqueue", next(t, evs).Event)
	first := lease(t, c, core.LeaseRequest{Types: []string{"slow"}})[0]
	require.Equal(t, clock.Now().UnixMilli()+1000, first.LeaseUntil)
	require.Equal(t, "start", next(t, evs).Event)

	// Touch extends the lease.
	clock.Advance(600 * time.Millisecond)
	var touched core.TouchReply
	require.NoError(t, op(t, c, bus.MethodTouch, core.LeaseOp{ID: created.ID, Lease: first.Lease}, &touched))
	require.Equal(t, clock.Now().UnixMilli()+1000, touched.LeaseUntil)
	clock.Advance(600 * time.Millisecond)
	mv, err := c.Client.Rescue(ctx, nil)
	require.NoError(t, err)
	require.Zero(t, mv.Moved, "the touch kept it")

	clock.Advance(400 * time.Millisecond) // now exactly at lease_until
	mv, err = c.Client.Rescue(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, 1, mv.Moved)
	require.Equal(t, "stalled", next(t, evs).Event)

	back, err := c.Client.Get(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, back.State)
	require.Zero(t, back.Attempts, "a stall does not use an attempt")
	require.Equal(t, 1, back.Stalls)

	second := lease(t, c, core.LeaseRequest{Types: []string{"slow"}})[0]
	require.NotEqual(t, first.Lease, second.Lease)
	for _, m := range []string{bus.MethodComplete, bus.MethodFail, bus.MethodTouch, bus.MethodRelease} {
		err := op(t, c, m, core.LeaseOp{ID: created.ID, Lease: first.Lease}, nil)
		require.ErrorIs(t, err, core.ErrConflict, m)
	}
	got, err := c.Client.Get(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateActive, got.State, "the stale calls changed nothing")

	// Past the stall limit (1) the job fails, saying why.
	clock.Advance(time.Second)
	mv, err = c.Client.Rescue(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, 1, mv.Moved)
	failed, err := c.Client.Get(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateFailed, failed.State)
	require.Contains(t, failed.Error, "lease expired")
}

func TestReleaseAndRejoinUseNoAttempt(t *testing.T) {
	c, clock := newCore(t)
	created, err := c.Client.Create(ctx, "r", nil, &core.CreateOpts{MaxAttempts: 2})
	require.NoError(t, err)
	j := lease(t, c, core.LeaseRequest{Types: []string{"r"}})[0]
	require.NoError(t, op(t, c, bus.MethodRelease, core.LeaseOp{ID: j.ID, Lease: j.Lease}, nil))
	got, err := c.Client.Get(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, got.State)
	require.Zero(t, got.Attempts)

	due := events(t, c, c.Client.Subjects().Queue(bus.QueueDue))
	j = lease(t, c, core.LeaseRequest{Types: []string{"r"}})[0]
	require.NoError(t, op(t, c, bus.MethodRejoin, core.LeaseOp{ID: j.ID, Lease: j.Lease, Delay: new(int64(3000))}, nil))
	got, err = c.Client.Get(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateDelayed, got.State)
	require.Zero(t, got.Attempts)
	require.Equal(t, clock.Now().UnixMilli()+3000, got.PromoteAt)
	require.Equal(t, got.PromoteAt, next(t, due).DueAt)
}

func TestProgress(t *testing.T) {
	c, _ := newCore(t)
	evs := events(t, c, c.Client.Subjects().JobEventsOf("progress", ""))
	_, err := c.Client.Create(ctx, "p", nil, nil)
	require.NoError(t, err)
	j := lease(t, c, core.LeaseRequest{Types: []string{"p"}})[0]
	require.NoError(t, op(t, c, bus.MethodProgress, core.LeaseOp{ID: j.ID, Lease: j.Lease, Complete: ptr(3), Total: ptr(8)}, nil))
	require.Equal(t, 37, *next(t, evs).Progress)
	got, err := c.Client.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, 37, got.Progress)
}

func TestBatchAppliesEachOpOnItsOwn(t *testing.T) {
	c, _ := newCore(t)
	for range 4 {
		_, err := c.Client.Create(ctx, "b", nil, &core.CreateOpts{MaxAttempts: 2})
		require.NoError(t, err)
	}
	jobs := lease(t, c, core.LeaseRequest{Types: []string{"b"}, Max: 4})
	require.Len(t, jobs, 4)
	r, err := c.Client.Batch(ctx, []core.LeaseOp{
		{Op: core.OpComplete, ID: jobs[0].ID, Lease: jobs[0].Lease, Type: "b"},
		{Op: core.OpFail, ID: jobs[1].ID, Lease: jobs[1].Lease, Error: "nope"},
		{Op: core.OpTouch, ID: jobs[2].ID, Lease: jobs[2].Lease},
		{Op: core.OpComplete, ID: jobs[3].ID, Lease: "stale"},
		{Op: core.OpComplete, ID: 99999, Lease: "x"},
		{Op: "explode", ID: jobs[3].ID, Lease: jobs[3].Lease},
	})
	require.NoError(t, err)
	require.Len(t, r, 6)
	require.Nil(t, r[0].Error)
	require.Equal(t, core.StateComplete, r[0].State)
	require.Equal(t, core.StateInactive, r[1].State, "one attempt left: retried")
	require.Positive(t, r[2].LeaseUntil)
	require.Equal(t, "conflict", r[3].Error.Code)
	require.Equal(t, "not_found", r[4].Error.Code)
	require.Equal(t, "invalid", r[5].Error.Code)
	require.Contains(t, r[5].Error.Message, `"explode"`)
}

func TestWorkerMethodsRefuseBadInput(t *testing.T) {
	c, _ := newCore(t)
	raw := bus.NewClient(c.NATS.Conn, 5*time.Second)
	subj := c.Client.Subjects()
	cases := []struct {
		method, body, code, want string
	}{
		{"lease", `{}`, "invalid", "types: no job types given"},
		{"lease", `{"types":["a.b"]}`, "invalid", `types: [0] "a.b"`},
		{"lease", `{"types":["a"],"max":-1}`, "invalid", "max: -1"},
		{"lease", `{"types":["a"],"wait":-5}`, "invalid", "wait: -5"},
		{"lease", `{"types":"a"}`, "invalid", "types: expected []string"},
		{"complete", `{"id":1}`, "invalid", "lease: missing"},
		{"complete", `{"id":-1,"lease":"x"}`, "invalid", "id: -1"},
		{"complete", `{"id":1,"lease":7}`, "invalid", "lease: expected string, got JSON number"},
		{"complete", `{"id":1,"lease":"x","error":"e"}`, "invalid", "only fail takes an error"},
		{"complete", `{"id":424242,"lease":"x"}`, "not_found", "job 424242 not found"},
		{"fail", `{"id":424242,"lease":"x","type":"nosuch"}`, "not_found", "job 424242 not found"},
		{"rejoin", `{"id":1,"lease":"x","delay":-1}`, "invalid", "delay: -1"},
		{"progress", `{"id":1,"lease":"x","complete":1}`, "invalid", "progress needs complete and total"},
		{"progress", `{"id":1,"lease":"x","complete":-1,"total":3}`, "invalid", "complete: -1 is negative"},
		{"progress", `{"id":1,"lease":"x","complete":1,"total":0}`, "invalid", "total: 0 is not positive"},
		{"touch", `{"id":1,"lease":"x","op":"complete"}`, "invalid", `op: "complete" does not belong in core.touch`},
		{"batch", `{"ops":[]}`, "invalid", "ops: no operations given"},
		{"rescue", `{"limit":-1}`, "invalid", "limit: -1"},
		{"rescue", `{"stall_limit":-1}`, "invalid", "stall_limit: -1"},
		{"rescue", `{"stall_limit":1000001}`, "invalid", "stall_limit: 1000001 is outside 0..1000000"},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.body, func(t *testing.T) {
			err := raw.CallRaw(ctx, subj.Core(tc.method), []byte(tc.body), nil)
			require.Error(t, err)
			require.Equal(t, bus.Code(tc.code), nodetest.ErrCode(err), err.Error())
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestFailFinalSkipsTheAttemptsLeft(t *testing.T) {
	c, _ := newCore(t)
	_, err := c.Client.Create(ctx, "f", nil, &core.CreateOpts{MaxAttempts: 5})
	require.NoError(t, err)
	j := lease(t, c, core.LeaseRequest{Types: []string{"f"}})[0]
	var after core.Job
	require.NoError(t, op(t, c, bus.MethodFail, core.LeaseOp{ID: j.ID, Lease: j.Lease, Error: "bad input", Final: true}, &after))
	require.Equal(t, core.StateFailed, after.State)
	require.Equal(t, 1, after.Attempts)
}

func TestStartEventsNeverCarryTheLeaseToken(t *testing.T) {
	c, _ := newCore(t)
	evs := events(t, c, c.Client.Subjects().JobEventsOf("start", ""))
	_, err := c.Client.Create(ctx, "s", nil, nil)
	require.NoError(t, err)
	j := lease(t, c, core.LeaseRequest{Types: []string{"s"}})[0]
	require.NotEmpty(t, j.Lease, "the holder gets the token")
	ev := next(t, evs)
	require.Equal(t, j.ID, ev.ID)
	require.Empty(t, ev.Job.Lease, "a listener must not")
}

func TestARerunByHandStartsItsStallsAfresh(t *testing.T) {
	c, clock := newCore(t)
	created, err := c.Client.Create(ctx, "st", nil, &core.CreateOpts{TTL: time.Second})
	require.NoError(t, err)
	for range 2 { // two stalls: past the limit of 1, the job fails
		lease(t, c, core.LeaseRequest{Types: []string{"st"}})
		clock.Advance(time.Second)
		_, err := c.Client.Rescue(ctx, nil)
		require.NoError(t, err)
	}
	failed, err := c.Client.Get(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateFailed, failed.State)
	retried, err := c.Client.SetState(ctx, created.ID, core.StateInactive)
	require.NoError(t, err)
	require.Zero(t, retried.Stalls)
	lease(t, c, core.LeaseRequest{Types: []string{"st"}})
	clock.Advance(time.Second)
	_, err = c.Client.Rescue(ctx, nil)
	require.NoError(t, err)
	again, err := c.Client.Get(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, again.State, "one stall after the re-run is within the limit")
}

// TestALeaseReplyNeverOutgrowsAMessage: jobs whose data would not fit in
// one reply are released at once instead of stranded leased to no one.
func TestALeaseReplyNeverOutgrowsAMessage(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	big := `"` + strings.Repeat("x", 400<<10) + `"`
	for range 3 {
		_, err := c.Client.CreateSpec(ctx, core.Spec{Type: "big", Data: json.RawMessage(big)})
		require.NoError(t, err)
	}
	jobs := lease(t, c, core.LeaseRequest{Types: []string{"big"}, Max: 3})
	require.Len(t, jobs, 2, "two fit in a 1 MiB message, the third does not")
	n, err := c.Client.Count(ctx, core.StateInactive, "big")
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "the third went back to the queue")
	third := lease(t, c, core.LeaseRequest{Types: []string{"big"}})
	require.Len(t, third, 1)
}

func TestALeaseWithItsOwnTTL(t *testing.T) {
	c, clock := newCore(t)
	_, err := c.Client.Create(ctx, "tt", nil, &core.CreateOpts{TTL: time.Minute})
	require.NoError(t, err)
	j := lease(t, c, core.LeaseRequest{Types: []string{"tt"}, TTL: 5000})[0]
	require.Equal(t, clock.Now().UnixMilli()+5000, j.LeaseUntil, "the lease's ttl, not the job's")
	clock.Advance(time.Second)
	var touched core.TouchReply
	require.NoError(t, op(t, c, bus.MethodTouch, core.LeaseOp{ID: j.ID, Lease: j.Lease}, &touched))
	require.Equal(t, clock.Now().UnixMilli()+5000, touched.LeaseUntil, "a touch extends by the lease's ttl")
	_, err = c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"tt"}, TTL: -1})
	require.ErrorIs(t, err, core.ErrInvalid)
	require.ErrorContains(t, err, "ttl: -1 ms")
}

// TestStallsPastTheLimitAreFailedAttempts: a job with ttl 1000 ms, three
// attempts and a worker that never finishes. Its first stall (the node's
// limit, 1) goes back without using an attempt; each later stall is a failed
// attempt that says the ttl ran out and retries with the job's backoff; the
// stall that uses the last attempt fails the job for good.
func TestStallsPastTheLimitAreFailedAttempts(t *testing.T) {
	c, clock := newCore(t)
	evs := events(t, c, c.Client.Subjects().JobEventsOf("*", ""))
	created, err := c.Client.Create(ctx, "hang", nil, &core.CreateOpts{TTL: time.Second, MaxAttempts: 3,
		Backoff: &core.Backoff{Type: core.BackoffFixed, Delay: 500 * time.Millisecond}})
	require.NoError(t, err)
	require.Equal(t, 1, created.StallLimit, "the node's default")
	require.Equal(t, "enqueue", next(t, evs).Event)

	stall := func() *core.Event {
		t.Helper()
		jobs := lease(t, c, core.LeaseRequest{Types: []string{"hang"}})
		require.Len(t, jobs, 1)
		require.Equal(t, "start", next(t, evs).Event)
		clock.Advance(time.Second)
		mv, err := c.Client.Rescue(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, 1, mv.Moved)
		return next(t, evs)
	}
	promote := func() {
		t.Helper()
		clock.Advance(500 * time.Millisecond)
		mv, err := c.Client.Promote(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, 1, mv.Moved)
		require.Equal(t, "promotion", next(t, evs).Event)
	}

	ev := stall()
	require.Equal(t, "stalled", ev.Event)
	require.Zero(t, ev.Job.Attempts)
	require.Equal(t, core.StateInactive, ev.Job.State)

	for attempt := 1; attempt <= 2; attempt++ {
		ev = stall()
		require.Equal(t, "failed_attempt", ev.Event, "attempt %d", attempt)
		require.Equal(t, attempt, ev.Attempts)
		require.Equal(t, "lease expired: ran past its ttl of 1000 ms", ev.Error)
		require.Equal(t, core.StateDelayed, ev.Job.State, "retried after its backoff")
		promote()
	}
	ev = stall()
	require.Equal(t, "failed", ev.Event)
	require.Equal(t, 3, ev.Attempts)
	got, err := c.Client.Get(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateFailed, got.State)
	require.Equal(t, 3, got.Attempts, "every attempt used")
	require.Equal(t, "lease expired: ran past its ttl of 1000 ms", got.Error)
}

// TestAJobsOwnStallLimit: stall_limit on the spec overrides the node's; 0
// makes the first stall a failed attempt, and a bad one is refused.
func TestAJobsOwnStallLimit(t *testing.T) {
	c, clock := newCore(t)
	zero, two := 0, 2
	strict, err := c.Client.Create(ctx, "own", nil, &core.CreateOpts{TTL: time.Second, MaxAttempts: 2, StallLimit: &zero})
	require.NoError(t, err)
	lenient, err := c.Client.Create(ctx, "own", nil, &core.CreateOpts{TTL: time.Second, MaxAttempts: 1, StallLimit: &two})
	require.NoError(t, err)
	require.Equal(t, 2, lenient.StallLimit)
	for range 2 {
		lease(t, c, core.LeaseRequest{Types: []string{"own"}, Max: 2})
		clock.Advance(time.Second)
		_, err := c.Client.Rescue(ctx, nil)
		require.NoError(t, err)
	}
	s, err := c.Client.Get(ctx, strict.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateFailed, s.State, "two stalls, both failed attempts")
	require.Equal(t, 2, s.Attempts)
	l, err := c.Client.Get(ctx, lenient.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, l.State, "two stalls, within its limit")
	require.Zero(t, l.Attempts)

	bad := -1
	_, err = c.Client.Create(ctx, "own", nil, &core.CreateOpts{StallLimit: &bad})
	require.ErrorIs(t, err, core.ErrInvalid)
	require.ErrorContains(t, err, "stall_limit: -1 is outside 0..")
	n, err := c.Client.Count(ctx, "", "own")
	require.NoError(t, err)
	require.Equal(t, int64(2), n, "the bad spec stored nothing")
}

// TestARetriedFailChangesNothing: a worker that did not hear fail's answer
// sends it again, after the job was retried and leased by someone else: the
// retry succeeds and uses no second attempt; the new holder keeps its lease.
func TestARetriedFailChangesNothing(t *testing.T) {
	c, _ := newCore(t)
	created, err := c.Client.Create(ctx, "flaky", nil, &core.CreateOpts{MaxAttempts: 3})
	require.NoError(t, err)
	first := lease(t, c, core.LeaseRequest{Types: []string{"flaky"}})[0]
	fail := core.LeaseOp{ID: first.ID, Lease: first.Lease, Error: "boom"}
	require.NoError(t, op(t, c, bus.MethodFail, fail, nil))
	second := lease(t, c, core.LeaseRequest{Types: []string{"flaky"}})[0]

	var again core.Job
	require.NoError(t, op(t, c, bus.MethodFail, fail, &again), "the retry")
	fail.Op = core.OpFail
	batch, err := c.Client.Batch(ctx, []core.LeaseOp{fail})
	require.NoError(t, err)
	require.Nil(t, batch[0].Error, "the retry, batched")
	err = op(t, c, bus.MethodComplete, core.LeaseOp{ID: first.ID, Lease: first.Lease}, nil)
	require.ErrorIs(t, err, core.ErrConflict, "another operation with the spent lease")

	got, err := c.Client.Get(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateActive, got.State)
	require.Equal(t, 1, got.Attempts, "one attempt used")
	require.NoError(t, op(t, c, bus.MethodComplete, core.LeaseOp{ID: second.ID, Lease: second.Lease}, nil), "the new holder's lease holds")
}

func TestBatchLeasePartLeasesAfterTheOpsByTheLeaseRules(t *testing.T) {
	c, _ := newCore(t)
	low, err := c.Client.Create(ctx, "bl", "low", &core.CreateOpts{Priority: core.PriorityLow})
	require.NoError(t, err)
	first, err := c.Client.Create(ctx, "bl", "first", nil)
	require.NoError(t, err)
	gone, err := c.Client.Create(ctx, "bl", "cancelled", nil)
	require.NoError(t, err)
	_, err = c.Client.Cancel(ctx, gone.ID, "not wanted")
	require.NoError(t, err)
	high, err := c.Client.Create(ctx, "bl", "high", &core.CreateOpts{Priority: core.PriorityHigh})
	require.NoError(t, err)
	_, err = c.Client.Create(ctx, "blp", "paused", nil)
	require.NoError(t, err)
	require.NoError(t, c.Client.Pause(ctx, "blp"))

	held := lease(t, c, core.LeaseRequest{Types: []string{"bl"}})
	require.Len(t, held, 1)
	require.Equal(t, high.ID, held[0].ID)
	// The complete is applied before the lease part: the lease part asks for
	// three and gets the two left, by priority, none cancelled or paused.
	r, jobs, err := c.Client.BatchLease(ctx, []core.LeaseOp{
		{Op: core.OpComplete, ID: held[0].ID, Lease: held[0].Lease, Type: "bl"},
	}, core.BatchLease{Types: []string{"blp", "bl"}, Max: 3, Worker: "w1"})
	require.NoError(t, err)
	require.Len(t, r, 1)
	require.Nil(t, r[0].Error)
	require.Equal(t, core.StateComplete, r[0].State)
	require.Len(t, jobs, 2)
	require.Equal(t, []int64{first.ID, low.ID}, []int64{jobs[0].ID, jobs[1].ID})
	for _, j := range jobs {
		require.Equal(t, core.StateActive, j.State)
		require.NotEmpty(t, j.Lease)
		require.NotEqual(t, held[0].Lease, j.Lease)
		require.Positive(t, j.LeaseUntil)
		require.Equal(t, "w1", j.WorkerID)
	}
	// The tokens it gave are the jobs' leases: they complete them.
	r, jobs, err = c.Client.BatchLease(ctx, []core.LeaseOp{
		{Op: core.OpComplete, ID: jobs[0].ID, Lease: jobs[0].Lease, Type: "bl"},
		{Op: core.OpComplete, ID: jobs[1].ID, Lease: jobs[1].Lease, Type: "bl"},
	}, core.BatchLease{Types: []string{"bl"}})
	require.NoError(t, err)
	require.Nil(t, r[0].Error)
	require.Nil(t, r[1].Error)
	require.NotNil(t, jobs, "a lease part always answers with jobs, if none")
	require.Empty(t, jobs)

	// A batch with no lease part answers with no jobs field at all.
	raw := bus.NewClient(c.NATS.Conn, 5*time.Second)
	var plain json.RawMessage
	require.NoError(t, raw.CallRaw(ctx, c.Client.Subjects().Core(bus.MethodBatch),
		[]byte(`{"ops":[{"op":"touch","id":1,"lease":"x"}]}`), &plain))
	require.NotContains(t, string(plain), `"jobs"`)
}

func TestBatchWithABadLeasePartAppliesNothing(t *testing.T) {
	c, _ := newCore(t)
	_, err := c.Client.Create(ctx, "bb", nil, nil)
	require.NoError(t, err)
	held := lease(t, c, core.LeaseRequest{Types: []string{"bb"}})
	require.Len(t, held, 1)
	raw := bus.NewClient(c.NATS.Conn, 5*time.Second)
	complete := fmt.Sprintf(`{"op":"complete","id":%d,"lease":%q,"type":"bb"}`, held[0].ID, held[0].Lease)
	for _, tc := range []struct{ lease, want string }{
		{`{"types":[]}`, "lease: types: no job types given"},
		{`{"types":["a.b"]}`, `lease: types: [0] "a.b"`},
		{`{"types":["bb"],"max":1001}`, "lease: max: 1001"},
		{`{"types":["bb"],"wait":100}`, "wait"},
		{`{"types":["bb"],"worker":"` + strings.Repeat("w", core.MaxWorkerLen+1) + `"}`, "lease: worker:"},
	} {
		err := raw.CallRaw(ctx, c.Client.Subjects().Core(bus.MethodBatch),
			[]byte(`{"ops":[`+complete+`],"lease":`+tc.lease+`}`), nil)
		require.Error(t, err, tc.lease)
		require.Equal(t, bus.CodeInvalid, nodetest.ErrCode(err), err.Error())
		require.ErrorContains(t, err, tc.want)
	}
	job, err := c.Client.Get(ctx, held[0].ID)
	require.NoError(t, err)
	require.Equal(t, core.StateActive, job.State, "nothing of a refused batch was applied")
}

// TestConcurrentLeasesOfOneTypeHandEachJobOnce: leases of one type run at
// once on a core (no turn: the script reads and takes the head together),
// and still no job goes to two of them.
func TestConcurrentLeasesOfOneTypeHandEachJobOnce(t *testing.T) {
	c, _ := newCore(t)
	specs := make([]core.Spec, 200)
	for i := range specs {
		specs[i] = core.Spec{Type: "many"}
	}
	_, err := c.Client.CreateBulk(ctx, specs)
	require.NoError(t, err)
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for {
				jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"many"}, Max: 3})
				if err != nil {
					t.Error(err)
					return
				}
				if len(jobs) == 0 {
					return
				}
				mu.Lock()
				for _, j := range jobs {
					seen[j.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Len(t, seen, 200, "every job leased")
	for id, n := range seen {
		require.Equal(t, 1, n, "job %d leased %d times", id, n)
	}
}

// A complete that nobody would hear is applied without reading the job
// back (StoreOp.Bare); when a subscriber turns up while it runs (Await
// subscribes, then reads the job), the event still goes, with the job read
// back, or, for a job removed as it completed, as much as core knows.
func TestACompleteNobodyHeardStillReachesWhoSubscribedMeanwhile(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	asked := map[string]int{}
	// The first ask of a complete event's subject finds no one; the next
	// finds the subscriber who came while the complete ran.
	listening := func(subject string) bool {
		if !strings.HasPrefix(subject, "job.complete.") {
			return true
		}
		mu.Lock()
		defer mu.Unlock()
		asked[subject]++
		return asked[subject] > 1
	}
	c := nodetest.NewCore(t, service.Config{Listening: listening})
	completes := events(t, c, c.Client.Subjects().JobEventsOf(bus.EventComplete, ""))
	for _, opts := range []*core.CreateOpts{nil, {RemoveOnComplete: core.RemoveAtOnce}} {
		created, err := c.Client.Create(ctx, "heard", 1, opts)
		require.NoError(t, err)
		j := lease(t, c, core.LeaseRequest{Types: []string{"heard"}})[0]
		results, err := c.Client.Batch(ctx, []core.LeaseOp{{Op: core.OpComplete, ID: j.ID, Lease: j.Lease, Type: "heard"}})
		require.NoError(t, err)
		require.Nil(t, results[0].Error)
		require.Equal(t, core.StateComplete, results[0].State)
		ev := next(t, completes)
		mu.Lock()
		require.Greater(t, asked[c.Client.Subjects().Job(bus.EventComplete, j.ID, "heard")], 1,
			"asked before the complete (no one: bare), then again for the event")
		mu.Unlock()
		require.Equal(t, j.ID, ev.Job.ID)
		require.Equal(t, core.StateComplete, ev.Job.State)
		require.Equal(t, 100, ev.Job.Progress)
		if opts == nil {
			require.Equal(t, created.CreatedAt, ev.Job.CreatedAt, "the job read back, whole")
			require.Equal(t, 1, ev.Job.Attempts)
		} else {
			require.Equal(t, "heard", ev.Job.Type, "removed as it completed: what the complete knows")
		}
	}
}

// TestASilentWorkersJobsComeBackBeforeTheirTTL (docs/protocol.md §3.37): the jobs of
// a worker not heard from for core.WorkerSilentAfter come back with the
// next rescue, whatever their ttl, as stalls, once per silence; a worker
// still beating keeps its jobs; the silent one's stale acknowledgements
// answer conflict.
func TestASilentWorkersJobsComeBackBeforeTheirTTL(t *testing.T) {
	c, clock := newCore(t)
	evs := events(t, c, c.Client.Subjects().JobEventsOf("stalled", "long"))
	for range 2 {
		_, err := c.Client.Create(ctx, "long", nil, &core.CreateOpts{TTL: time.Minute})
		require.NoError(t, err)
	}
	beat := func(worker string) {
		require.NoError(t, c.Client.Heartbeat(ctx, core.Heartbeat{Worker: worker, Types: []string{"long"}, Concurrency: 1}))
	}
	beat("dies")
	beat("lives")
	dead := lease(t, c, core.LeaseRequest{Types: []string{"long"}, Worker: "dies"})[0]
	alive := lease(t, c, core.LeaseRequest{Types: []string{"long"}, Worker: "lives"})[0]

	// the other worker beats on, so heartbeats are being stored, up to a
	// millisecond before the first one turns silent
	for _, step := range []time.Duration{900, 900, core.WorkerSilentAfter - 1801} {
		clock.Advance(step * time.Millisecond)
		beat("lives")
	}
	mv, err := c.Client.Rescue(ctx, nil)
	require.NoError(t, err)
	require.Zero(t, mv.Moved, "not silent yet")
	require.Equal(t, clock.Now().UnixMilli()+1, mv.NextDue, "the rescue comes back when the first worker may turn silent")

	clock.Advance(time.Millisecond)
	mv, err = c.Client.Rescue(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, 1, mv.Moved, "the silent worker's job, a minute before its ttl")
	ev := next(t, evs)
	require.Equal(t, dead.ID, ev.ID)
	back, err := c.Client.Get(ctx, dead.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, back.State)
	require.Equal(t, 1, back.Stalls, "counted as a stall")
	require.Zero(t, back.Attempts)
	kept, err := c.Client.Get(ctx, alive.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateActive, kept.State, "the worker that beats keeps its job")

	again := lease(t, c, core.LeaseRequest{Types: []string{"long"}, Worker: "lives"})[0]
	require.Equal(t, dead.ID, again.ID, "another worker runs it")
	for range 3 {
		clock.Advance(900 * time.Millisecond)
		beat("lives")
	}
	mv, err = c.Client.Rescue(ctx, nil)
	require.NoError(t, err)
	require.Zero(t, mv.Moved, "the worker found silent is not found so again, and its job is another's now")
	for _, m := range []string{bus.MethodComplete, bus.MethodTouch} {
		require.ErrorIs(t, op(t, c, m, core.LeaseOp{ID: dead.ID, Lease: dead.Lease}, nil), core.ErrConflict,
			"%s of the worker that comes back", m)
	}
}
