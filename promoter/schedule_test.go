package promoter_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/promoter"
)

// TestRunScheduleLoopWakesForANewSchedule: the loop sleeps a minute after
// finding nothing; a schedule set meanwhile wakes it (queue.due), and its
// first tick makes a job at or after the tick, then the loop sleeps until
// the next tick rather than spinning.
func TestRunScheduleLoopWakesForANewSchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Redis and NATS")
	}
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	evs := tickEvents(t, c.Client, "tick")
	fired := make(chan *core.FireReply, 1000)
	start(t, func(ctx context.Context) error {
		return promoter.RunScheduleLoop(ctx, promoter.ScheduleConfig{Core: c.Client, MaxSleep: time.Minute,
			OnFire: func(r *core.FireReply) { fired <- r }})
	})
	require.Equal(t, core.FireReply{}, *waitFor(t, fired, "the first call"), "nothing to fire, nothing waits")

	// The loop now sleeps for a minute; only queue.due can wake it in time.
	every := core.MinEvery.Milliseconds()
	sc, err := c.Client.SetSchedule(t.Context(), &core.ScheduleSetRequest{Name: "s", Every: new(core.MinEvery), Spec: core.Spec{Type: "tick"}})
	require.NoError(t, err)
	ev := waitFor(t, evs, "the first tick's job")
	require.Equal(t, sc.NextAt, ev.Job.ScheduleAt)
	require.GreaterOrEqual(t, ev.Job.CreatedAt, sc.NextAt, "made before its tick")
	require.Equal(t, sc.NextAt+every, waitFor(t, evs, "the second tick's job").Job.ScheduleAt)
	require.Less(t, len(fired), 20, "the loop spun instead of sleeping until the next tick")
}

func TestScheduleConfigIsChecked(t *testing.T) {
	t.Parallel()
	err := promoter.RunScheduleLoop(t.Context(), promoter.ScheduleConfig{Core: (*core.Client)(nil), Limit: -1})
	require.ErrorContains(t, err, "limit")
}
