package redisstore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/coretest"
)

// TestTwoPromotersMoveEachJobOnce runs two promoters at once over the same
// due jobs, as two leaders would during a split: each job is moved exactly
// once, because every move is re-checked inside one script.
func TestTwoPromotersMoveEachJobOnce(t *testing.T) {
	t.Parallel()
	st, _ := coretest.NewStore(t)
	ctx := context.Background()
	const n = 3000
	specs := make([]core.Spec, 0, 1000)
	for i := range n {
		specs = append(specs, core.Spec{Type: []string{"a", "b", "c"}[i%3], Delay: int64(1 + i%500), MaxAttempts: 1, TTL: 1000})
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
	st, _ := coretest.NewStore(t)
	ctx := context.Background()
	jobs, _, err := st.Create(ctx, 5000, []core.Spec{{Type: "x", Delay: 250, MaxAttempts: 1, TTL: 1}})
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
