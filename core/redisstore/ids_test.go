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

// TestReserveIDsAlignsBlocksAfterA1xCounter runs reserve_ids on a counter a
// 1.x store left unaligned (1500): a create of 1001 jobs takes two whole
// blocks after it (2001..4000), records both for its type, and another
// store, knowing no block yet, finds every job from its id alone.
func TestReserveIDsAlignsBlocksAfterA1xCounter(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	st.seed(keyspace{"{_}:ids": "1500"})
	specs := make([]core.Spec, 1001)
	for i := range specs {
		specs[i] = core.Spec{Type: "t", MaxAttempts: 1, TTL: 1}
	}
	jobs, _, err := st.Create(ctx, 1, specs)
	require.NoError(t, err)
	require.Equal(t, int64(2001), jobs[0].ID)
	require.Equal(t, int64(3001), jobs[1000].ID)
	dump := st.dump()
	require.Equal(t, "4000", dump["{_}:ids"])
	require.Equal(t, map[string]string{"2": "t", "3": "t"}, dump["{_}:blocks"])
	require.Equal(t, []string{"t"}, dump["{_}:types"])
	require.NotContains(t, dump, "{_}:idtype", "no per-job index")

	other, err := redisstore.New(redisstore.Config{Client: st.rdb, Prefix: st.prefix})
	require.NoError(t, err)
	for _, id := range []int64{2001, 3001} {
		j, err := other.Get(ctx, id)
		require.NoError(t, err)
		require.Equal(t, "t", j.Type)
	}
	for _, id := range []int64{1500, 3002, 4001, 0, -1} {
		_, err := other.Get(ctx, id)
		require.ErrorIs(t, err, core.ErrNotFound, "id %d: no job", id)
	}
	next, _, err := other.Create(ctx, 1, specs[:1])
	require.NoError(t, err)
	require.Equal(t, int64(4001), next[0].ID, "another store's block starts after the last")
}

// TestA1xStoreIsReadThroughItsIDIndex: a job a 1.x store indexed in idtype
// is found by id, changed and removed, and its entry goes with it; new jobs
// of the same store take blocks and write no entry.
func TestA1xStoreIsReadThroughItsIDIndex(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	st.seed(keyspace{
		"{_}:ids":    "7",
		"{_}:idtype": map[string]string{"6": "t", "7": "t"},
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{"6": 6, "7": 7},
		"{t}:ready":  map[string]float64{"0000000000000001:6": 0, "0000000000000002:7": 0},
		"{t}:seq":    "2",
		"{t}:job:6":  jobHash(map[string]string{"id": "6", "rmember": "0000000000000001:6"}),
		"{t}:job:7":  jobHash(map[string]string{"id": "7", "rmember": "0000000000000002:7"}),
	})
	j, err := st.Get(ctx, 7)
	require.NoError(t, err)
	require.Equal(t, int64(7), j.ID)
	_, err = st.SetPriority(ctx, 2, 6, core.PriorityHigh)
	require.NoError(t, err)
	_, err = st.Remove(ctx, 7)
	require.NoError(t, err)
	created, _, err := st.Create(ctx, 3, []core.Spec{{Type: "t", MaxAttempts: 1, TTL: 1}})
	require.NoError(t, err)
	require.Equal(t, int64(1001), created[0].ID)
	dump := st.dump()
	require.Equal(t, map[string]string{"6": "t"}, dump["{_}:idtype"], "the removed job's entry is gone; no new one")
	require.Equal(t, map[string]string{"1": "t"}, dump["{_}:blocks"])
}
