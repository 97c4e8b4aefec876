package redisstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
)

// TestStatsDoesNotHideAFailureBehindANil: of two types' ready heads, the
// first's job is gone (its read is redis.Nil, which stats skips) and the
// second's cannot be read (a key of the wrong kind stands in for a shard
// that fails). Stats fails with the second's error instead of answering
// as if nothing were wrong (issue 15, finding 4: Exec returns the first
// error only, and that was the Nil).
func TestStatsDoesNotHideAFailureBehindANil(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	st.seed(keyspace{
		"{_}:types":    []string{"a", "b"},
		"{a}:ready":    map[string]float64{"0000000000000001:1": 0},
		"{b}:ready":    map[string]float64{"0000000000000001:1001": 0},
		"{b}:job:1001": "not a hash",
	})
	_, err := st.Stats(ctx)
	require.ErrorIs(t, err, core.ErrInternal)
	require.ErrorContains(t, err, "WRONGTYPE")

	require.NoError(t, st.rdb.Del(ctx, st.prefix+":{b}:job:1001").Err())
	stats, err := st.Stats(ctx)
	require.NoError(t, err, "a Nil alone is no error")
	require.Empty(t, stats.ReadySince, "neither head's job can be read")
}
