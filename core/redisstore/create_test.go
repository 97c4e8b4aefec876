package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestCreatingAnIDAgainChangesNothing runs a create a second time with the
// ids of the first, as a client retry after a Redis stall would (here: a
// store whose counter was reset hands the same ids out again): the jobs
// already stored are skipped, so no id sits twice in ready or due, and a
// leased job stays leased.
func TestCreatingAnIDAgainChangesNothing(t *testing.T) {
	t.Parallel()
	newStore, rdb, prefix := freshStores(t)
	ctx := context.Background()
	specs := []core.Spec{
		{Type: "again", MaxAttempts: 1, TTL: 1000 * time.Millisecond, UniqueKey: "k1"},
		{Type: "again", MaxAttempts: 1, TTL: 1000 * time.Millisecond},
		{Type: "again", Delay: 50 * time.Millisecond, MaxAttempts: 1, TTL: 1000 * time.Millisecond},
	}
	first, _, err := newStore().Create(ctx, 1000, specs)
	require.NoError(t, err)
	leased, _, err := newStore().Lease(ctx, &service.LeaseParams{Now: 1001, Types: []string{"again"}, Max: 1, Worker: "w", Token: "tok", TTL: 0})
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
		core.StateComplete: 0, core.StateFailed: 0, core.StateCancelled: 0, core.StateWaiting: 0}, counts, "each job once, where it was")
	got, err := newStore().Get(ctx, leased[0].ID)
	require.NoError(t, err)
	require.Equal(t, core.StateActive, got.State)
	require.Equal(t, int64(1000), got.CreatedAt, "not overwritten")
}

// TestACreateRunAgainAnswersWhatItStored: a create whose first run stored
// job X with unique key k runs again after X finished and job Y took k.
// The retry answers X as stored, and X stays where it is, in complete and
// in its type's jobs, not taken for a new job refused for Y's key.
func TestACreateRunAgainAnswersWhatItStored(t *testing.T) {
	t.Parallel()
	newStore, rdb, prefix := freshStores(t)
	ctx := context.Background()
	spec := []core.Spec{{Type: "rerun", MaxAttempts: 1, TTL: 1000 * time.Millisecond, UniqueKey: "k"}}
	x, _, err := newStore().Create(ctx, 1000, spec)
	require.NoError(t, err)
	_, _, err = newStore().SetState(ctx, 1001, x[0].ID, core.StateComplete)
	require.NoError(t, err)
	y, existing, err := newStore().Create(ctx, 1002, spec)
	require.NoError(t, err)
	require.Equal(t, []bool{false}, existing, "k was free again")
	require.NotEqual(t, x[0].ID, y[0].ID)

	require.NoError(t, rdb.Set(ctx, prefix+":{_}:ids", 0, 0).Err())
	again, _, err := newStore().Create(ctx, 2000, spec)
	require.NoError(t, err)
	require.Equal(t, x[0].ID, again[0].ID, "the retry's id, as its first run stored it")
	require.Equal(t, core.StateComplete, again[0].State)
	n, err := newStore().Count(ctx, core.StateComplete, "rerun")
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	all, err := newStore().Count(ctx, "", "rerun")
	require.NoError(t, err)
	require.Equal(t, int64(2), all, "X and Y, each once")
}

// freshStores returns a maker of stores that share one Redis keyspace, as
// a core started again does (the id counter it hands out from is in
// Redis, its reserved ids in memory), with that keyspace's client and key
// prefix.
func freshStores(t *testing.T) (func() *redisstore.Store, *redis.Client, string) {
	_, rdb := nodetest.NewStore(t)
	prefix := nodetest.Prefix(t, rdb)
	return func() *redisstore.Store {
		st, err := redisstore.New(redisstore.Config{Client: rdb, Prefix: prefix})
		require.NoError(t, err)
		return st
	}, rdb, prefix
}

// TestACreateOfManyJobsIndexesEachOnceInOrder stores more jobs in one
// create than Lua's unpack takes at once (includes/many.lua splits the
// index writes): every job is in jobs once, the delayed ones in due, and
// the ready ones lease in the order of the call (one seq number each), with
// a second create's jobs after them.
func TestACreateOfManyJobsIndexesEachOnceInOrder(t *testing.T) {
	t.Parallel()
	st, _ := nodetest.NewStore(t)
	ctx := context.Background()
	const n = 6300 // ZADD ready gets 8400 arguments, ZADD jobs 12600: unpack refuses either in one call
	specs := make([]core.Spec, n)
	for i := range specs {
		specs[i] = core.Spec{Type: "many", MaxAttempts: 1, TTL: 60000 * time.Millisecond}
		if i%3 == 2 {
			specs[i].Delay = time.Minute
		}
	}
	first, _, err := st.Create(ctx, 1000, specs)
	require.NoError(t, err)
	second, _, err := st.Create(ctx, 1000, specs[:1])
	require.NoError(t, err)

	counts := map[core.State]int64{}
	for _, state := range []core.State{core.StateInactive, core.StateDelayed} {
		counts[state], err = st.Count(ctx, state, "many")
		require.NoError(t, err)
	}
	require.Equal(t, map[core.State]int64{core.StateInactive: n/3*2 + 1, core.StateDelayed: n / 3}, counts)

	var want []int64
	for i, j := range first {
		if i%3 != 2 {
			want = append(want, j.ID)
		}
	}
	want = append(want, second[0].ID)
	var got []int64
	for len(got) < len(want) {
		jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: 1001, Types: []string{"many"}, Max: 1000, Worker: "w", Token: "tok", TTL: 0})
		require.NoError(t, err)
		require.NotEmpty(t, jobs, "ready ran out after %d of %d", len(got), len(want))
		for _, j := range jobs {
			got = append(got, j.ID)
		}
	}
	require.Equal(t, want, got, "FIFO within the call and after it")
}
