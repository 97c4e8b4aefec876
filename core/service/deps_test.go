package service_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

// completeOne leases the one ready job of jobType, which must be want,
// and completes it with result.
func completeOne(t *testing.T, c *nodetest.Core, jobType string, want int64, result string) {
	t.Helper()
	jobs := lease(t, c, core.LeaseRequest{Types: []string{jobType}, Max: 10})
	require.Len(t, jobs, 1, "one job of %s ready", jobType)
	require.Equal(t, want, jobs[0].ID)
	require.NoError(t, c.Client.Complete(ctx, core.LeaseOp{ID: want, Lease: jobs[0].Lease, Result: json.RawMessage(result)}))
}

// TestAJobWaitsForItsDependencyAndReadsItsResult: a job depending on an
// unfinished job is waiting (job.waiting), never leased; the completion of
// its dependency (of another type: a hand-over) makes it inactive (a
// promotion), and dependencies gives it the dependency's result.
func TestAJobWaitsForItsDependencyAndReadsItsResult(t *testing.T) {
	c, _ := newCore(t)
	waiting := events(t, c, c.Client.Subjects().JobEventsOf(bus.EventWaiting, ""))
	promoted := events(t, c, c.Client.Subjects().JobEventsOf(bus.EventPromotion, ""))
	parent, err := c.Client.Create(ctx, "extract", nil, nil)
	require.NoError(t, err)
	child, err := c.Client.Create(ctx, "load", nil, &core.CreateOpts{DependsOn: []int64{parent.ID}})
	require.NoError(t, err)
	require.Equal(t, core.StateWaiting, child.State)
	require.Equal(t, child.ID, next(t, waiting).ID)
	require.Empty(t, lease(t, c, core.LeaseRequest{Types: []string{"load"}, Max: 10}), "a waiting job is not leased")
	got, err := c.Client.Get(ctx, child.ID)
	require.NoError(t, err)
	require.Equal(t, []int64{parent.ID}, got.DependsOn)
	require.Equal(t, 1, got.Pending)
	n, err := c.Client.Count(ctx, core.StateWaiting, "")
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	st, err := c.Client.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), st.Waiting)

	all := events(t, c, c.Client.Subjects().AllJobEvents())
	completeOne(t, c, "extract", parent.ID, `{"rows":3}`)
	ev := next(t, promoted)
	require.Equal(t, child.ID, ev.ID)
	require.Equal(t, core.StateInactive, ev.Job.State)
	var order []string
	for len(order) < 3 {
		e := next(t, all)
		order = append(order, fmt.Sprint(e.Event, " ", e.ID))
	}
	require.Equal(t, []string{fmt.Sprint("start ", parent.ID), fmt.Sprint("complete ", parent.ID), fmt.Sprint("promotion ", child.ID)}, order,
		"the release is published after the completion that caused it")
	deps, err := c.Client.Dependencies(ctx, child.ID)
	require.NoError(t, err)
	require.Equal(t, []core.DepJob{{ID: parent.ID, Type: "extract", State: core.StateComplete, Result: json.RawMessage(`{"rows":3}`)}}, deps)
	dependents, err := c.Client.Dependents(ctx, parent.ID)
	require.NoError(t, err)
	require.Equal(t, []core.DepJob{{ID: child.ID, Type: "load", State: core.StateInactive}}, dependents)
	completeOne(t, c, "load", child.ID, `1`)
}

// TestADiamondRunsTopThenBothSidesThenTheBottom: a flow of four jobs of
// two types created in one call.
func TestADiamondRunsTopThenBothSidesThenTheBottom(t *testing.T) {
	c, _ := newCore(t)
	diamond(t, c, "a", "b")
}

// diamond creates top (a) ← left (a), right (b) ← bottom (b) in one flow
// and runs it: top, then both sides, then the bottom.
func diamond(t *testing.T, c *nodetest.Core, a, b string) {
	t.Helper()
	flow, err := c.Client.CreateFlow(ctx,
		core.FlowJob{Ref: "bottom", Spec: core.Spec{Type: b}, DependsOn: []core.DepRef{core.Ref("left"), core.Ref("right")}},
		core.FlowJob{Ref: "left", Spec: core.Spec{Type: a}, DependsOn: []core.DepRef{core.Ref("top")}},
		core.FlowJob{Ref: "right", Spec: core.Spec{Type: b}, DependsOn: []core.DepRef{core.Ref("top")}},
		core.FlowJob{Ref: "top", Spec: core.Spec{Type: a}},
	)
	require.NoError(t, err)
	require.Len(t, flow.Jobs, 4)
	for i, ref := range []string{"bottom", "left", "right", "top"} {
		require.Equal(t, ref, flow.Jobs[i].Ref)
		want := core.StateWaiting
		if ref == "top" {
			want = core.StateInactive
		}
		require.Equal(t, want, flow.Jobs[i].State, ref)
	}
	all := core.LeaseRequest{Types: []string{a, b}, Max: 10}
	require.Empty(t, lease(t, c, core.LeaseRequest{Types: []string{b}, Max: 10}))
	completeOne(t, c, a, flow.IDOf("top"), `"t"`)
	sides := lease(t, c, all)
	require.Len(t, sides, 2)
	require.ElementsMatch(t, []int64{flow.IDOf("left"), flow.IDOf("right")}, []int64{sides[0].ID, sides[1].ID})
	require.NoError(t, c.Client.Complete(ctx, core.LeaseOp{ID: sides[0].ID, Lease: sides[0].Lease}))
	require.Empty(t, lease(t, c, all), "the bottom waits for both sides")
	require.NoError(t, c.Client.Complete(ctx, core.LeaseOp{ID: sides[1].ID, Lease: sides[1].Lease}))
	completeOne(t, c, b, flow.IDOf("bottom"), `"b"`)
}

// TestABadFlowIsInvalidAndStoresNothing: a cycle, an unknown ref, a
// duplicate ref, a bad spec, an unknown id.
func TestABadFlowIsInvalidAndStoresNothing(t *testing.T) {
	c, _ := newCore(t)
	for name, tc := range map[string]struct {
		body, field string
	}{
		"a cycle":           {`{"jobs":[{"ref":"a","spec":{"type":"t"},"depends_on":["c"]},{"ref":"b","spec":{"type":"u"},"depends_on":["a"]},{"ref":"c","spec":{"type":"t"},"depends_on":["b"]}]}`, "depends_on"},
		"an unknown ref":    {`{"jobs":[{"ref":"a","spec":{"type":"t"},"depends_on":["zz"]}]}`, "jobs[0].depends_on[0]"},
		"a duplicate ref":   {`{"jobs":[{"ref":"a","spec":{"type":"t"}},{"ref":"a","spec":{"type":"t"}}]}`, "jobs[1].ref"},
		"a bad spec":        {`{"jobs":[{"ref":"a","spec":{"type":"t"}},{"ref":"b","spec":{"type":"no good"},"depends_on":["a"]}]}`, "jobs[1].spec.type"},
		"an unknown id":     {`{"jobs":[{"ref":"a","spec":{"type":"t"}},{"ref":"b","spec":{"type":"t"},"depends_on":["a",999999]}]}`, "depends_on"},
		"a bad rule":        {`{"jobs":[{"ref":"a","spec":{"type":"t","on_dependency_failure":"shrug"}}]}`, "on_dependency_failure"},
		"no ref":            {`{"jobs":[{"spec":{"type":"t"}}]}`, "jobs[0].ref"},
		"itself":            {`{"jobs":[{"ref":"a","spec":{"type":"t"},"depends_on":["a"]}]}`, "jobs[0].depends_on[0]"},
		"a ref given twice": {`{"jobs":[{"ref":"a","spec":{"type":"t"}},{"ref":"b","spec":{"type":"t"},"depends_on":["a","a"]}]}`, "jobs[1].depends_on[1]"},
		"a broadcast ref":   {`{"jobs":[{"ref":"a","spec":{"type":"t","broadcast":true}},{"ref":"b","spec":{"type":"t"},"depends_on":["a"]}]}`, `jobs[1].depends_on[0]: "a" is a broadcast, which no job may depend on`},
	} {
		msg, err := c.NATS.Conn.Request(c.Client.Subjects().Core(bus.MethodCreateFlow), []byte(tc.body), 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, string(bus.CodeInvalid), msg.Header.Get(bus.HeaderKuebusCode), name)
		require.Contains(t, msg.Header.Get(bus.HeaderError), tc.field, name)
	}
	body, code := raw(t, c, bus.MethodCreate, `{"type":"t","depends_on":[0]}`)
	require.Equal(t, string(bus.CodeInvalid), code, body)
	n, err := c.Client.Count(ctx, "", "")
	require.NoError(t, err)
	require.Equal(t, int64(0), n, "nothing stored")
}

// TestAFanInOf200ParentsReleasesItsChildOnce: 200 parents of two types
// completed by 4 workers at once release their child exactly once.
func TestAFanInOf200ParentsReleasesItsChildOnce(t *testing.T) {
	c, _ := newCore(t)
	fanIn(t, c, "resize", "zip")
}

// fanIn creates a child (of type b) of 200 parents of types a and b, and
// has 4 workers complete the parents at once: the child is released
// exactly once.
func fanIn(t *testing.T, c *nodetest.Core, a, b string) {
	t.Helper()
	jobs := []core.FlowJob{{Ref: "zip", Spec: core.Spec{Type: b}}}
	for i := range 200 {
		ref := fmt.Sprint("img", i)
		jobs = append(jobs, core.FlowJob{Ref: ref, Spec: core.Spec{Type: []string{a, b}[i%2]}})
		jobs[0].DependsOn = append(jobs[0].DependsOn, core.Ref(ref))
	}
	promoted := events(t, c, c.Client.Subjects().JobEventsOf(bus.EventPromotion, ""))
	flow, err := c.Client.CreateFlow(ctx, jobs...)
	require.NoError(t, err)
	child := flow.IDOf("zip")
	var wg sync.WaitGroup
	var mu sync.Mutex
	childLeases := 0
	for range 4 {
		wg.Go(func() {
			for {
				got, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{a, b}, Max: 7})
				if err != nil || len(got) == 0 {
					return
				}
				for _, j := range got {
					if j.ID == child {
						mu.Lock()
						childLeases++
						mu.Unlock()
						continue
					}
					if err := c.Client.Complete(ctx, core.LeaseOp{ID: j.ID, Lease: j.Lease}); err != nil {
						return
					}
				}
			}
		})
	}
	wg.Wait()
	ev := next(t, promoted)
	require.Equal(t, child, ev.ID)
	got, err := c.Client.Get(ctx, child)
	require.NoError(t, err)
	require.Contains(t, []core.State{core.StateInactive, core.StateActive}, got.State)
	require.Equal(t, 0, got.Pending)
	require.LessOrEqual(t, childLeases, 1)
	if childLeases == 0 {
		require.Len(t, lease(t, c, core.LeaseRequest{Types: []string{b}, Max: 10}), 1)
	}
	select {
	case ev := <-promoted:
		t.Fatalf("a second promotion: %+v", ev)
	default:
	}
}

// failOne leases the one ready job of jobType, which must be want, and
// fails it (for good when it has no attempt left).
func failOne(t *testing.T, c *nodetest.Core, jobType string, want int64) *core.Job {
	t.Helper()
	jobs := lease(t, c, core.LeaseRequest{Types: []string{jobType}, Max: 10})
	require.Len(t, jobs, 1, "one job of %s ready", jobType)
	require.Equal(t, want, jobs[0].ID)
	job, err := c.Client.Fail(ctx, core.LeaseOp{ID: want, Lease: jobs[0].Lease, Error: "boom"})
	require.NoError(t, err)
	return job
}

func stateOf(t *testing.T, c *nodetest.Core, id int64) *core.Job {
	t.Helper()
	j, err := c.Client.Get(ctx, id)
	require.NoError(t, err)
	return j
}

// chain creates top (type a, max_attempts attempts) ← mid (type b, rule
// midRule) ← low (type a, rule lowRule) in one flow.
func chain(t *testing.T, c *nodetest.Core, attempts int, midRule, lowRule core.DepPolicy) (top, mid, low int64) {
	t.Helper()
	flow, err := c.Client.CreateFlow(ctx,
		core.FlowJob{Ref: "top", Spec: core.Spec{Type: "a", MaxAttempts: attempts}},
		core.FlowJob{Ref: "mid", Spec: core.Spec{Type: "b", OnDependencyFailure: midRule}, DependsOn: []core.DepRef{core.Ref("top")}},
		core.FlowJob{Ref: "low", Spec: core.Spec{Type: "a", OnDependencyFailure: lowRule}, DependsOn: []core.DepRef{core.Ref("mid")}},
	)
	require.NoError(t, err)
	return flow.IDOf("top"), flow.IDOf("mid"), flow.IDOf("low")
}

// TestTheFailureRulesCarryDownTwoLevels: fail (the default) fails the
// dependent naming its dependency, and its own dependent in turn; ignore
// counts the failure as done; cancel cancels, and the next level applies
// its own rule to the cancel. A failed attempt with attempts left is no
// failure yet.
func TestTheFailureRulesCarryDownTwoLevels(t *testing.T) {
	t.Run("fail, then fail", func(t *testing.T) {
		c, _ := newCore(t)
		failed := events(t, c, c.Client.Subjects().JobEventsOf(bus.EventFailed, ""))
		top, mid, low := chain(t, c, 2, "", "")
		require.Equal(t, core.StateInactive, failOne(t, c, "a", top).State, "a failed attempt that retries (no backoff: at once)")
		require.Equal(t, core.StateWaiting, stateOf(t, c, mid).State, "no failure yet")
		require.Equal(t, core.StateFailed, failOne(t, c, "a", top).State, "its last attempt")
		var got []int64
		for range 3 {
			got = append(got, next(t, failed).ID)
		}
		require.ElementsMatch(t, []int64{top, mid, low}, got, "each one's failed event")
		m := stateOf(t, c, mid)
		require.Equal(t, core.StateFailed, m.State)
		require.Contains(t, m.Error, fmt.Sprint("dependency ", top))
		l := stateOf(t, c, low)
		require.Equal(t, core.StateFailed, l.State)
		require.Contains(t, l.Error, fmt.Sprint("dependency ", mid))
		require.Empty(t, lease(t, c, core.LeaseRequest{Types: []string{"a", "b"}, Max: 10}))
	})
	t.Run("ignore, then fail", func(t *testing.T) {
		c, _ := newCore(t)
		top, mid, low := chain(t, c, 1, core.DepIgnore, "")
		failOne(t, c, "a", top)
		require.Equal(t, core.StateInactive, stateOf(t, c, mid).State, "the failure counts as done")
		completeOne(t, c, "b", mid, `1`)
		completeOne(t, c, "a", low, `1`)
	})
	t.Run("cancel, then fail", func(t *testing.T) {
		c, _ := newCore(t)
		cancels := events(t, c, c.Client.Subjects().JobEventsOf(bus.EventCancel, ""))
		top, mid, low := chain(t, c, 1, core.DepCancel, "")
		failOne(t, c, "a", top)
		require.Equal(t, mid, next(t, cancels).ID)
		require.Equal(t, core.StateCancelled, stateOf(t, c, mid).State)
		require.Equal(t, core.StateFailed, stateOf(t, c, low).State, "a cancelled dependency counts as failed")
	})
	t.Run("fail, then cancel", func(t *testing.T) {
		c, _ := newCore(t)
		top, mid, low := chain(t, c, 1, "", core.DepCancel)
		failOne(t, c, "a", top)
		require.Equal(t, core.StateFailed, stateOf(t, c, mid).State)
		require.Equal(t, core.StateCancelled, stateOf(t, c, low).State)
	})
}

// TestACancelledOrRemovedDependencyCountsAsFailed: cancel settles at once;
// a remove is settled by the leader's sweep (run with promote).
func TestACancelledOrRemovedDependencyCountsAsFailed(t *testing.T) {
	c, clock := newCore(t)
	top, mid, _ := chain(t, c, 1, "", "")
	_, err := c.Client.Cancel(ctx, top, "")
	require.NoError(t, err)
	require.Equal(t, core.StateFailed, stateOf(t, c, mid).State)

	top, mid, _ = chain(t, c, 1, "", "")
	_, err = c.Client.Remove(ctx, top)
	require.NoError(t, err)
	clock.Advance(2 * time.Second)
	_, err = c.Client.Promote(ctx, 100)
	require.NoError(t, err)
	require.Equal(t, core.StateFailed, stateOf(t, c, mid).State)
}

// TestARetriedDependencyDoesNotReviveAFailedDependent: once the fail rule
// fired, the dependency run again by hand and completed leaves the
// dependent failed.
func TestARetriedDependencyDoesNotReviveAFailedDependent(t *testing.T) {
	c, _ := newCore(t)
	top, mid, _ := chain(t, c, 1, "", "")
	failOne(t, c, "a", top)
	require.Equal(t, core.StateFailed, stateOf(t, c, mid).State)
	_, err := c.Client.SetState(ctx, top, core.StateInactive)
	require.NoError(t, err)
	completeOne(t, c, "a", top, `1`)
	require.Equal(t, core.StateFailed, stateOf(t, c, mid).State)
}

// TestAScheduleMayNotDependOnJobs: a schedule's spec with depends_on is
// invalid and stores nothing.
func TestAScheduleMayNotDependOnJobs(t *testing.T) {
	c, _ := newCore(t)
	msg, err := c.NATS.Conn.Request(c.Client.Subjects().Core(bus.MethodScheduleSet),
		[]byte(`{"name":"n","every":1000,"spec":{"type":"t","depends_on":[1]}}`), 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, string(bus.CodeInvalid), msg.Header.Get(bus.HeaderKuebusCode))
	require.Contains(t, msg.Header.Get(bus.HeaderError), "spec.depends_on")
	list, err := c.Client.Schedules(ctx)
	require.NoError(t, err)
	require.Empty(t, list)
}

// TestAnUnknownDependencyIsInvalidAndStoresNothing: create and
// create_bulk name the field of an id that is no job, and store nothing;
// a bad depends_on (an id given twice, a rule) is invalid too.
func TestAnUnknownDependencyIsInvalidAndStoresNothing(t *testing.T) {
	c, _ := newCore(t)
	for _, tc := range []struct{ method, body, field string }{
		{bus.MethodCreate, `{"type":"t","depends_on":[424242]}`, "depends_on: job 424242 does not exist"},
		{bus.MethodCreateBulk, `{"jobs":[{"type":"t"},{"type":"t","depends_on":[424242]}]}`, "jobs[1].depends_on: job 424242 does not exist"},
		{bus.MethodCreate, `{"type":"t","depends_on":[5,5]}`, "depends_on: [1]: job 5 is given twice"},
		{bus.MethodCreate, `{"type":"t","on_dependency_failure":"later"}`, "on_dependency_failure"},
	} {
		msg, err := c.NATS.Conn.Request(c.Client.Subjects().Core(tc.method), []byte(tc.body), 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, string(bus.CodeInvalid), msg.Header.Get(bus.HeaderKuebusCode), tc.body)
		require.Contains(t, msg.Header.Get(bus.HeaderError), tc.field)
	}
	n, err := c.Client.Count(ctx, "", "")
	require.NoError(t, err)
	require.Equal(t, int64(0), n, "nothing stored")
}

// TestNoJobDependsOnABroadcast: a broadcast is published, never run, so
// it completes for no dependent: create, create_bulk and create_flow
// refuse an existing broadcast in depends_on, naming it, and store
// nothing (create_flow refuses a broadcast of the flow too:
// TestABadFlowIsInvalidAndStoresNothing).
func TestNoJobDependsOnABroadcast(t *testing.T) {
	c, _ := newCore(t)
	b, err := c.Client.Create(ctx, "news", nil, &core.CreateOpts{Broadcast: true, Delay: time.Hour})
	require.NoError(t, err)
	for _, tc := range []struct{ method, body, field string }{
		{bus.MethodCreate, fmt.Sprintf(`{"type":"t","depends_on":[%d]}`, b.ID), "depends_on: job %d is a broadcast, which no job may depend on"},
		{bus.MethodCreateBulk, fmt.Sprintf(`{"jobs":[{"type":"t"},{"type":"t","depends_on":[%d]}]}`, b.ID), "jobs[1].depends_on: job %d is a broadcast"},
		{bus.MethodCreateFlow, fmt.Sprintf(`{"jobs":[{"ref":"a","spec":{"type":"t"},"depends_on":[%d]}]}`, b.ID), "job %d is a broadcast"},
	} {
		msg, err := c.NATS.Conn.Request(c.Client.Subjects().Core(tc.method), []byte(tc.body), 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, string(bus.CodeInvalid), msg.Header.Get(bus.HeaderKuebusCode), tc.body)
		require.Contains(t, msg.Header.Get(bus.HeaderError), fmt.Sprintf(tc.field, b.ID))
	}
	n, err := c.Client.Count(ctx, "", "")
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "nothing stored but the broadcast")
}

// TestABroadcastThatWaitsIsNeverLeased: a broadcast that depends on a job
// leaves waiting for due, as it is created, never for ready: once its
// dependency completed (of its own type, released in complete's script,
// and of another type, by a hand-over), no lease of its type gets it, and
// the promote that finds it due broadcasts it.
func TestABroadcastThatWaitsIsNeverLeased(t *testing.T) {
	c, _ := newCore(t)
	for _, depType := range []string{"prices", "extract"} {
		parent, err := c.Client.Create(ctx, depType, nil, nil)
		require.NoError(t, err)
		b, err := c.Client.Create(ctx, "prices", map[string]string{"do": "reload"},
			&core.CreateOpts{Broadcast: true, DependsOn: []int64{parent.ID}})
		require.NoError(t, err)
		require.Equal(t, core.StateWaiting, b.State)
		completeOne(t, c, depType, parent.ID, `{}`)
		got, err := c.Client.Get(ctx, b.ID)
		require.NoError(t, err)
		require.Equal(t, core.StateDelayed, got.State, "released to due, as %s", depType)
		require.Empty(t, lease(t, c, core.LeaseRequest{Types: []string{"prices"}, Max: 10}), "no worker leases a broadcast")
		_, err = c.Client.Promote(ctx, 0)
		require.NoError(t, err)
		got, err = c.Client.Get(ctx, b.ID)
		require.NoError(t, err)
		require.Equal(t, core.StateComplete, got.State, "the promote broadcast it")
	}
}
