package redisstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestIDsArePositiveAndUniqueAcrossBlocksAndStores creates jobs one by one
// and in bulk, across the boundaries of reserved id blocks, from two stores
// on one counter (two cores): every id is positive and none repeats.
func TestIDsArePositiveAndUniqueAcrossBlocksAndStores(t *testing.T) {
	t.Parallel()
	first, rdb := nodetest.NewStore(t)
	prefix := nodetest.Prefix(t, rdb)
	a, err := redisstore.New(redisstore.Config{Client: rdb, Prefix: prefix})
	require.NoError(t, err)
	b, err := redisstore.New(redisstore.Config{Client: rdb, Prefix: prefix})
	require.NoError(t, err)
	_ = first
	ctx := context.Background()
	seen := map[int64]bool{}
	record := func(jobs []core.Job) {
		for _, j := range jobs {
			require.Positive(t, j.ID)
			require.False(t, seen[j.ID], "id %d given twice", j.ID)
			seen[j.ID] = true
		}
	}
	one := []core.Spec{{Type: "x", MaxAttempts: 1, TTL: 1}}
	bulk := make([]core.Spec, 700)
	for i := range bulk {
		bulk[i] = core.Spec{Type: "y", MaxAttempts: 1, TTL: 1}
	}
	for range 3 {
		for _, st := range []*redisstore.Store{a, b} {
			for range 300 {
				jobs, _, err := st.Create(ctx, 1, one)
				require.NoError(t, err)
				record(jobs)
			}
			jobs, _, err := st.Create(ctx, 1, bulk)
			require.NoError(t, err)
			record(jobs)
		}
	}
	require.Len(t, seen, 3*2*(300+700))
	for id := range seen {
		j, err := a.Get(ctx, id)
		require.NoError(t, err, "job %d is found by its id", id)
		require.Equal(t, id, j.ID)
	}
}
