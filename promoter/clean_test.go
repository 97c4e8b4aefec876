package promoter_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/promoter"
)

// TestCleanLoopRemovesInBatchesUntilNothingIsLeftThenWaits: 25 complete
// jobs of a type whose default keeps 1; with a limit of 10 the loop calls
// at once while a call says more (10, 10, then the last 4), then waits its
// interval (a minute here: no further call comes in the test's time).
func TestCleanLoopRemovesInBatchesUntilNothingIsLeftThenWaits(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{Retention: map[string]core.TypeRetention{
		"report": {Complete: core.Retention{Count: 1}},
	}})
	ctx := t.Context()
	specs := make([]core.Spec, 25)
	for i := range specs {
		specs[i] = core.Spec{Type: "report"}
	}
	_, err := c.Client.CreateBulk(ctx, specs)
	require.NoError(t, err)
	jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"report"}, Max: 25})
	require.NoError(t, err)
	require.Len(t, jobs, 25)
	ops := make([]core.LeaseOp, len(jobs))
	for i, j := range jobs {
		ops[i] = core.LeaseOp{Op: core.OpComplete, ID: j.ID, Lease: j.Lease, Type: "report"}
	}
	_, err = c.Client.Batch(ctx, ops)
	require.NoError(t, err)

	cleaned := make(chan *core.Event, 10)
	sub, err := c.Client.Subscribe(c.Client.Subjects().Queue(bus.QueueCleaned), func(ev *core.Event) { cleaned <- ev })
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	replies := make(chan *core.CleanReply, 10)
	start(t, func(ctx context.Context) error {
		return promoter.RunCleanLoop(ctx, promoter.CleanConfig{Core: c.Client, Limit: 10, Interval: time.Minute,
			OnClean: func(r *core.CleanReply) { replies <- r }})
	})
	var removed []int
	for {
		r := waitFor(t, replies, "a clean call")
		removed = append(removed, r.Removed)
		if !r.More {
			break
		}
	}
	require.Equal(t, []int{10, 10, 4}, removed)
	for _, want := range []int{10, 10, 4} {
		ev := waitFor(t, cleaned, "queue.cleaned")
		require.Equal(t, core.Event{Event: bus.QueueCleaned, Type: "report", State: core.StateComplete, Removed: want, At: ev.At}, *ev)
	}
	n, err := c.Client.Count(ctx, core.StateComplete, "report")
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "the newest is kept")
	select {
	case r := <-replies:
		t.Fatalf("a call before the interval: %+v", r)
	default:
	}
}
