package redisstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

func idsOf(jobs []core.Job) []int64 {
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

// TestABroadcastIsCompletedByItsPromoteAndEndedOncePublished walks
// promote_due, broadcast_take and broadcast_sent: a due broadcast never
// enters ready; it is complete at once but enters the complete index only
// once sent; a take claims it (a second take gets nothing until the claim
// runs out, then gets it again: a core that died); sent ends it, deleting
// one whose remove_on_complete is true; sent again changes nothing.
func TestABroadcastIsCompletedByItsPromoteAndEndedOncePublished(t *testing.T) {
	t.Parallel()
	st, _ := nodetest.NewStore(t)
	ctx := context.Background()
	jobs, _, err := st.Create(ctx, 1000, []core.Spec{
		{Type: "b", Data: []byte(`{"kept":true}`), Delay: 100 * time.Millisecond, MaxAttempts: 1, TTL: 1000 * time.Millisecond, Broadcast: true, UniqueKey: "k"},
		{Type: "b", Data: []byte(`"gone"`), Delay: 100 * time.Millisecond, MaxAttempts: 1, TTL: 1000 * time.Millisecond, Broadcast: true,
			RemoveOnComplete: core.Retention{AtOnce: true}},
		{Type: "b", Data: []byte(`"work"`), Delay: 100 * time.Millisecond, MaxAttempts: 1, TTL: 1000 * time.Millisecond},
	})
	require.NoError(t, err)
	kept, gone, work := jobs[0], jobs[1], jobs[2]
	require.Equal(t, core.StateDelayed, kept.State)
	require.True(t, kept.Broadcast)
	require.False(t, work.Broadcast)

	moved, _, err := st.Promote(ctx, 1099, 10)
	require.NoError(t, err)
	require.Empty(t, moved, "never early")
	taken, next, err := st.TakeBroadcasts(ctx, 1099, 6099, 10)
	require.NoError(t, err)
	require.Empty(t, taken, "nothing to publish before the promote")
	require.Zero(t, next)

	moved, _, err = st.Promote(ctx, 1100, 10)
	require.NoError(t, err)
	require.Len(t, moved, 3)
	states := map[int64]core.State{}
	for _, j := range moved {
		states[j.ID] = j.State
	}
	require.Equal(t, map[int64]core.State{kept.ID: core.StateComplete, gone.ID: core.StateComplete, work.ID: core.StateInactive}, states)
	count := func(state core.State) int64 {
		t.Helper()
		n, err := st.Count(ctx, state, "b")
		require.NoError(t, err)
		return n
	}
	require.Equal(t, int64(1), count(core.StateInactive), "only the ordinary job is in ready")
	require.Zero(t, count(core.StateComplete), "not in the complete index before it is sent")
	_, err = st.GetByKey(ctx, "b", "k")
	require.True(t, errors.Is(err, core.ErrNotFound), "a complete broadcast gave its unique key up: %v", err)

	taken, next, err = st.TakeBroadcasts(ctx, 1100, 6100, 10)
	require.NoError(t, err)
	require.ElementsMatch(t, []int64{kept.ID, gone.ID}, idsOf(taken))
	for _, j := range taken {
		require.Equal(t, core.StateComplete, j.State)
		require.True(t, j.Broadcast)
		if j.ID == kept.ID {
			require.JSONEq(t, `{"kept":true}`, string(j.Data), "taken with its data")
		}
	}
	require.Equal(t, int64(6100), next, "the claim's end")

	again, _, err := st.TakeBroadcasts(ctx, 6099, 11099, 10)
	require.NoError(t, err)
	require.Empty(t, again, "claimed until 6100")
	again, _, err = st.TakeBroadcasts(ctx, 6100, 11100, 10)
	require.NoError(t, err)
	require.ElementsMatch(t, []int64{kept.ID, gone.ID}, idsOf(again), "a claim that ran out is taken again")

	require.NoError(t, st.BroadcastsSent(ctx, again))
	require.Equal(t, int64(1), count(core.StateComplete))
	got, err := st.Get(ctx, kept.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateComplete, got.State)
	require.Equal(t, int64(1100), got.UpdatedAt)
	_, err = st.Get(ctx, gone.ID)
	require.True(t, errors.Is(err, core.ErrNotFound), "remove_on_complete: deleted once sent: %v", err)

	require.NoError(t, st.BroadcastsSent(ctx, again))
	require.Equal(t, int64(1), count(core.StateComplete), "sent twice changes nothing more")
	taken, next, err = st.TakeBroadcasts(ctx, 20000, 25000, 10)
	require.NoError(t, err)
	require.Empty(t, taken)
	require.Zero(t, next)
}

// TestABroadcastRemovedBeforeItWasPublishedIsDropped: a take skips, and
// forgets, a broadcast whose job was removed meanwhile.
func TestABroadcastRemovedBeforeItWasPublishedIsDropped(t *testing.T) {
	t.Parallel()
	st, _ := nodetest.NewStore(t)
	ctx := context.Background()
	jobs, _, err := st.Create(ctx, 1000, []core.Spec{{Type: "b", MaxAttempts: 1, TTL: 1000 * time.Millisecond, Broadcast: true}})
	require.NoError(t, err)
	require.Equal(t, core.StateDelayed, jobs[0].State, "a broadcast waits in due even without a delay")
	require.Equal(t, int64(1000), jobs[0].PromoteAt)
	moved, _, err := st.Promote(ctx, 1000, 10)
	require.NoError(t, err)
	require.Len(t, moved, 1)
	_, err = st.Remove(ctx, jobs[0].ID)
	require.NoError(t, err)
	taken, next, err := st.TakeBroadcasts(ctx, 1000, 6000, 10)
	require.NoError(t, err)
	require.Empty(t, taken)
	require.Zero(t, next, "dropped, not claimed")
}

// TestABroadcastMovedToInactiveByHandIsDueInstead: set_state and a bulk
// promote never put a broadcast in ready, where a worker would lease it:
// it goes to due, at once, for the next promote to broadcast.
func TestABroadcastMovedToInactiveByHandIsDueInstead(t *testing.T) {
	t.Parallel()
	st, _ := nodetest.NewStore(t)
	ctx := context.Background()
	jobs, _, err := st.Create(ctx, 1000, []core.Spec{{Type: "b", Delay: 5000 * time.Millisecond, MaxAttempts: 1, TTL: 1000 * time.Millisecond, Broadcast: true}})
	require.NoError(t, err)
	job, changed, err := st.SetState(ctx, 2000, jobs[0].ID, core.StateInactive)
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, core.StateDelayed, job.State)
	require.Equal(t, int64(2000), job.PromoteAt)
	job, _, err = st.SetState(ctx, 2500, jobs[0].ID, core.StateActive)
	require.NoError(t, err)
	require.Equal(t, core.StateDelayed, job.State)
	n, err := st.Count(ctx, core.StateInactive, "b")
	require.NoError(t, err)
	require.Zero(t, n)
	moved, _, err := st.Promote(ctx, 2500, 10)
	require.NoError(t, err)
	require.Len(t, moved, 1)
	require.Equal(t, core.StateComplete, moved[0].State)
}

// TestTwoCoresTakeEachBroadcastOnce: two cores' promotes race over the
// same due broadcasts: each is completed once and taken by one core.
func TestTwoCoresTakeEachBroadcastOnce(t *testing.T) {
	t.Parallel()
	st, _ := nodetest.NewStore(t)
	ctx := context.Background()
	const n = 600
	specs := make([]core.Spec, n)
	for i := range specs {
		specs[i] = core.Spec{Type: []string{"a", "b"}[i%2], Data: []byte(`1`), MaxAttempts: 1, TTL: 1000 * time.Millisecond, Broadcast: true}
	}
	_, _, err := st.Create(ctx, 1000, specs)
	require.NoError(t, err)
	var mu sync.Mutex
	promoted, taken := map[int64]int{}, map[int64]int{}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				moved, _, err := st.Promote(ctx, 1000, 37)
				if err != nil {
					t.Error(err)
					return
				}
				jobs, _, err := st.TakeBroadcasts(ctx, 1000, 6000, 29)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, j := range moved {
					promoted[j.ID]++
				}
				for _, j := range jobs {
					taken[j.ID]++
				}
				mu.Unlock()
				if len(moved) == 0 && len(jobs) == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	require.Len(t, promoted, n)
	require.Len(t, taken, n)
	for id := range promoted {
		require.Equal(t, 1, promoted[id], "job %d completed once", id)
		require.Equal(t, 1, taken[id], "job %d taken once", id)
	}
}
