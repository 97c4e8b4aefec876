package redisstore_test

import (
	"context"
	"testing"
	"time"

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
	one := []core.Spec{{Type: "x", MaxAttempts: 1, TTL: 1 * time.Millisecond}}
	bulk := make([]core.Spec, 700)
	for i := range bulk {
		bulk[i] = core.Spec{Type: "y", MaxAttempts: 1, TTL: 1 * time.Millisecond}
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

// TestReserveIDsTakesWholeBlocks runs reserve_ids: a create of 1001 jobs
// takes two whole blocks (1..2000), records both for its type, and another
// store, knowing no block yet, finds every job from its id alone; an id of
// those blocks that no job took, or of no block, finds no job.
func TestReserveIDsTakesWholeBlocks(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	specs := make([]core.Spec, 1001)
	for i := range specs {
		specs[i] = core.Spec{Type: "t", MaxAttempts: 1, TTL: 1 * time.Millisecond}
	}
	jobs, _, err := st.Create(ctx, 1, specs)
	require.NoError(t, err)
	require.Equal(t, int64(1), jobs[0].ID)
	require.Equal(t, int64(1001), jobs[1000].ID)
	dump := st.dump()
	require.Equal(t, "2000", dump["{_}:ids"])
	require.Equal(t, map[string]string{"0": "t", "1": "t"}, dump["{_}:blocks"])
	require.Equal(t, []string{"t"}, dump["{_}:types"])

	other, err := redisstore.New(redisstore.Config{Client: st.rdb, Prefix: st.prefix})
	require.NoError(t, err)
	for _, id := range []int64{1, 1001} {
		j, err := other.Get(ctx, id)
		require.NoError(t, err)
		require.Equal(t, "t", j.Type)
	}
	for _, id := range []int64{1002, 2000, 2001, 0, -1} {
		_, err := other.Get(ctx, id)
		require.ErrorIs(t, err, core.ErrNotFound, "id %d: no job", id)
	}
	next, _, err := other.Create(ctx, 1, specs[:1])
	require.NoError(t, err)
	require.Equal(t, int64(2001), next[0].ID, "another store's block starts after the last")
}
