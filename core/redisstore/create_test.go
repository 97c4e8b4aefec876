package redisstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestCreatingAnIDAgainChangesNothing runs a create a second time with the
// ids of the first, as a client retry after a Redis stall would (here: a
// store whose counter was reset hands the same ids out again): the jobs
// already stored are skipped, so no id sits twice in ready or due, and a
// leased job stays leased.
func TestCreatingAnIDAgainChangesNothing(t *testing.T) {
	t.Parallel()
	_, rdb := nodetest.NewStore(t)
	prefix := nodetest.Prefix(t, rdb)
	ctx := context.Background()
	newStore := func() *redisstore.Store {
		st, err := redisstore.New(redisstore.Config{Client: rdb, Prefix: prefix})
		require.NoError(t, err)
		return st
	}
	specs := []core.Spec{
		{Type: "again", MaxAttempts: 1, TTL: 1000, UniqueKey: "k1"},
		{Type: "again", MaxAttempts: 1, TTL: 1000},
		{Type: "again", Delay: 50, MaxAttempts: 1, TTL: 1000},
	}
	first, _, err := newStore().Create(ctx, 1000, specs)
	require.NoError(t, err)
	leased, _, err := newStore().Lease(ctx, 1001, []string{"again"}, 1, "w", "tok", 0)
	require.NoError(t, err)
	require.Len(t, leased, 1)

	require.NoError(t, rdb.Set(ctx, prefix+":{_}:ids", 0, 0).Err())
	second, existing, err := newStore().Create(ctx, 2000, specs)
	require.NoError(t, err)
	for i := range first {
		require.Equal(t, first[i].ID, second[i].ID, "the same ids, as a retry has")
		require.False(t, existing[i])
	}

	counts := map[core.State]int64{}
	for _, state := range core.States {
		n, err := newStore().Count(ctx, state, "again")
		require.NoError(t, err)
		counts[state] = n
	}
	require.Equal(t, map[core.State]int64{core.StateInactive: 1, core.StateActive: 1, core.StateDelayed: 1,
		core.StateComplete: 0, core.StateFailed: 0, core.StateCancelled: 0}, counts, "each job once, where it was")
	got, err := newStore().Get(ctx, leased[0].ID)
	require.NoError(t, err)
	require.Equal(t, core.StateActive, got.State)
	require.Equal(t, int64(1000), got.CreatedAt, "not overwritten")
}
