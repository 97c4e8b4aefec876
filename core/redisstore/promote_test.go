package redisstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestTwoPromotersMoveEachJobOnce runs two promoters at once over the same
// due jobs, as two leaders would during a split: each job is moved exactly
// once, because every move is re-checked inside one script.
func TestTwoPromotersMoveEachJobOnce(t *testing.T) {
	t.Parallel()
	st, _ := nodetest.NewStore(t)
	ctx := context.Background()
	const n = 3000
	specs := make([]core.Spec, 0, 1000)
	for i := range n {
		specs = append(specs, core.Spec{Type: []string{"a", "b", "c"}[i%3], Delay: time.Duration(1+i%500) * time.Millisecond, MaxAttempts: 1, TTL: 1000 * time.Millisecond})
		if len(specs) == cap(specs) {
			_, _, err := st.Create(ctx, 1000, specs)
			require.NoError(t, err)
			specs = specs[:0]
		}
	}
	now := int64(1000 + 500)
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				moved, _, err := st.Promote(ctx, now, 97)
				if err != nil {
					t.Error(err)
					return
				}
				if len(moved) == 0 {
					return
				}
				mu.Lock()
				for _, j := range moved {
					seen[j.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Len(t, seen, n, "every job promoted")
	for id, times := range seen {
		require.Equal(t, 1, times, "job %d promoted %d times", id, times)
	}
	count, err := st.Count(ctx, core.StateInactive, "")
	require.NoError(t, err)
	require.Equal(t, int64(n), count)
	count, err = st.Count(ctx, core.StateDelayed, "")
	require.NoError(t, err)
	require.Zero(t, count)
}

// TestPromoteIsNeverEarly checks the boundary in the script itself.
func TestPromoteIsNeverEarly(t *testing.T) {
	t.Parallel()
	st, _ := nodetest.NewStore(t)
	ctx := context.Background()
	jobs, _, err := st.Create(ctx, 5000, []core.Spec{{Type: "x", Delay: 250 * time.Millisecond, MaxAttempts: 1, TTL: 1 * time.Millisecond}})
	require.NoError(t, err)
	for now := int64(5000); now < 5250; now += 50 {
		moved, next, err := st.Promote(ctx, now, 10)
		require.NoError(t, err)
		require.Empty(t, moved, "at %d", now)
		require.Equal(t, jobs[0].PromoteAt, next)
	}
	moved, next, err := st.Promote(ctx, 5250, 10)
	require.NoError(t, err)
	require.Len(t, moved, 1)
	require.Zero(t, next)
}

// TestSameMillisecondDelayedJobsPromoteInCreationOrder creates 20 jobs in
// one bulk with one delay, so they fall due at the same millisecond, and
// promotes them in slices of 7 (the limit cuts the group): they become
// ready, and are leased, in the order they were created, not in the text
// order of their ids ("1", "10", "11", ..., "2").
func TestSameMillisecondDelayedJobsPromoteInCreationOrder(t *testing.T) {
	t.Parallel()
	st, _ := nodetest.NewStore(t)
	ctx := context.Background()
	specs := make([]core.Spec, 20)
	for i := range specs {
		specs[i] = core.Spec{Type: "same-ms", Delay: 100 * time.Millisecond, MaxAttempts: 1, TTL: 1000 * time.Millisecond}
	}
	jobs, _, err := st.Create(ctx, 1000, specs)
	require.NoError(t, err)
	created := make([]int64, len(jobs))
	for i, j := range jobs {
		created[i] = j.ID
	}

	listed, err := st.Range(ctx, &service.RangeParams{State: core.StateDelayed, Type: "same-ms", From: 0, To: 19})
	require.NoError(t, err)
	var delayed []int64
	for _, j := range listed.Jobs {
		delayed = append(delayed, j.ID)
	}
	require.Equal(t, created, delayed, "the delayed index lists them in creation order")

	var promoted []int64
	for {
		moved, _, err := st.Promote(ctx, 1100, 7)
		require.NoError(t, err)
		if len(moved) == 0 {
			break
		}
		for _, j := range moved {
			promoted = append(promoted, j.ID)
		}
	}
	require.Equal(t, created, promoted, "promoted in creation order")

	leased, _, err := st.Lease(ctx, &service.LeaseParams{Now: 1200, Types: []string{"same-ms"}, Max: 20, Worker: "w", Token: "token", TTL: 0})
	require.NoError(t, err)
	var order []int64
	for _, j := range leased {
		order = append(order, j.ID)
	}
	require.Equal(t, created, order, "leased in creation order")
}

// TestDelayedJobsLeaveTheDueIndex checks that every way out of delayed
// (remove, set_state) takes the job's padded member out of due.
func TestDelayedJobsLeaveTheDueIndex(t *testing.T) {
	t.Parallel()
	st, _ := nodetest.NewStore(t)
	ctx := context.Background()
	jobs, _, err := st.Create(ctx, 1000, []core.Spec{
		{Type: "leave", Delay: 100 * time.Millisecond, MaxAttempts: 1, TTL: 1000 * time.Millisecond},
		{Type: "leave", Delay: 100 * time.Millisecond, MaxAttempts: 1, TTL: 1000 * time.Millisecond},
	})
	require.NoError(t, err)
	_, err = st.Remove(ctx, jobs[0].ID)
	require.NoError(t, err)
	_, _, err = st.SetState(ctx, 1001, jobs[1].ID, core.StateInactive)
	require.NoError(t, err)
	n, err := st.Count(ctx, core.StateDelayed, "leave")
	require.NoError(t, err)
	require.Zero(t, n, "nothing left in due")
	moved, next, err := st.Promote(ctx, 5000, 10)
	require.NoError(t, err)
	require.Empty(t, moved)
	require.Zero(t, next)
}
