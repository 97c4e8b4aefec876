package service_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// TestExplainGivesEachReason: explain answers, over NATS, each reason a
// job is not running (or that it runs, or finished), with its numbers.
func TestExplainGivesEachReason(t *testing.T) {
	c, clock := newCore(t)
	now := clock.Now().UnixMilli()
	create := func(jobType string, opts *core.CreateOpts) *core.Job {
		t.Helper()
		j, err := c.Client.Create(ctx, jobType, nil, opts)
		require.NoError(t, err)
		return j
	}
	explain := func(id int64) *core.Explanation {
		t.Helper()
		ex, err := c.Client.Explain(ctx, id)
		require.NoError(t, err)
		require.Equal(t, id, ex.ID)
		require.NotEmpty(t, ex.Detail)
		return ex
	}

	delayed := create("d", &core.CreateOpts{Delay: time.Minute})
	ex := explain(delayed.ID)
	require.Equal(t, core.ReasonDelayed, ex.Reason)
	require.Equal(t, now+60_000, ex.Until)

	// waiting: the dependencies not complete yet, one of another type
	first, second := create("w", nil), create("w2", nil)
	dependent := create("w", &core.CreateOpts{DependsOn: []int64{second.ID, first.ID}})
	ex = explain(dependent.ID)
	require.Equal(t, core.ReasonWaiting, ex.Reason)
	require.ElementsMatch(t, []int64{first.ID, second.ID}, ex.DependsOn)
	require.Contains(t, ex.Detail, "jobs ")

	paused := create("p", nil)
	require.NoError(t, c.Client.Pause(ctx, "p"))
	require.Equal(t, core.ReasonPaused, explain(paused.ID).Reason)

	_, err := c.Client.SetType(ctx, &core.TypePolicy{Type: "c", Concurrency: 1})
	require.NoError(t, err)
	create("c", nil)
	held := create("c", nil)
	require.Len(t, lease(t, c, core.LeaseRequest{Types: []string{"c"}, Max: 2}), 1)
	ex = explain(held.ID)
	require.Equal(t, core.ReasonConcurrency, ex.Reason)
	require.Equal(t, [2]int64{1, 1}, [2]int64{ex.Active, ex.Limit})

	_, err = c.Client.SetType(ctx, &core.TypePolicy{Type: "r", Rate: &core.Rate{Limit: 1, Per: time.Minute}})
	require.NoError(t, err)
	create("r", nil)
	limited := create("r", nil)
	started := lease(t, c, core.LeaseRequest{Types: []string{"r"}, Max: 2})
	require.Len(t, started, 1)
	ex = explain(limited.ID)
	require.Equal(t, core.ReasonRate, ex.Reason)
	require.Equal(t, started[0].StartedAt+60_000, ex.Until)

	orphan := create("n", nil)
	require.Equal(t, core.ReasonNoWorker, explain(orphan.ID).Reason)

	require.NoError(t, c.Client.Heartbeat(ctx, core.Heartbeat{Worker: "w", Types: []string{"q"}, Concurrency: 1, StartedAt: now}))
	create("q", nil)
	create("q", &core.CreateOpts{Priority: core.PriorityHigh})
	third := create("q", nil)
	ex = explain(third.ID)
	require.Equal(t, core.ReasonQueued, ex.Reason)
	require.Equal(t, int64(2), *ex.Ahead, "the high one and the one before it")

	running := lease(t, c, core.LeaseRequest{Types: []string{"q"}, Max: 1, Worker: "w"})[0]
	ex = explain(running.ID)
	require.Equal(t, core.ReasonActive, ex.Reason)
	require.Equal(t, "w", ex.Worker)
	require.Equal(t, running.LeaseUntil, ex.LeaseUntil)
	require.Equal(t, int64(1), *explain(third.ID).Ahead, "one ahead now")

	require.NoError(t, c.Client.Complete(ctx, core.LeaseOp{ID: running.ID, Lease: running.Lease, Type: "q"}))
	ex = explain(running.ID)
	require.Equal(t, core.StateComplete, ex.State)
	require.Equal(t, string(core.StateComplete), ex.Reason)

	_, err = c.Client.Explain(ctx, 999_999)
	require.ErrorIs(t, err, core.ErrNotFound)
	code, msg := rawError(t, c, bus.MethodExplain, `{"id":0}`)
	require.Equal(t, string(bus.CodeInvalid), code)
	require.Contains(t, msg, "id:")
}
