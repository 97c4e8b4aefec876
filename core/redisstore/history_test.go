package redisstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

// waits is a core.WaitBounds histogram with the counts given from bucket 0.
func waits(counts ...int64) []int64 {
	w := make([]int64, len(core.WaitBounds)+1)
	copy(w, counts)
	return w
}

// TestHistoryAddIncrementsEachMinuteAndExpires: lua/history_add.lua adds
// to each minute's hash, and to its hour's, what it is given, skips zeros,
// keeps the last depth sample, and keeps a minute a day and an hour eight
// days; History sums types and fills missing minutes with zeros, by minute
// or by hour.
func TestHistoryAddIncrementsEachMinuteAndExpires(t *testing.T) {
	t.Parallel()
	st, rdb := nodetest.NewStore(t)
	ctx := t.Context()
	const m = 29_000_000 // a unix minute, the 20th of its hour
	require.NoError(t, st.AddHistory(ctx, "email", []core.MinuteCounts{
		{At: m * 60000, Created: 2, Completed: 1, Started: 2, Waiting: 7, Waits: waits(1, 0, 1)},
		{At: (m + 1) * 60000, Failed: 3, Waiting: -1}}))
	require.NoError(t, st.AddHistory(ctx, "email", []core.MinuteCounts{{At: m * 60000, Created: 1, Waiting: 5}}))
	require.NoError(t, st.AddHistory(ctx, "sms", []core.MinuteCounts{{At: (m + 1) * 60000, Completed: 4, Waiting: 2}}))

	keys, err := rdb.Keys(ctx, "*history*").Result()
	require.NoError(t, err)
	require.Len(t, keys, 5, "three minutes, and the hour of each type")
	for _, k := range keys {
		ttl, err := rdb.TTL(ctx, k).Result()
		require.NoError(t, err)
		require.Greater(t, ttl.Hours(), 24.0, k)
	}
	email, err := rdb.HGetAll(ctx, keyWith(t, keys, "{email}:history:29000000")).Result()
	require.NoError(t, err)
	require.Equal(t, map[string]string{"created": "3", "completed": "1", "started": "2", "waiting": "5", "w0": "1", "w2": "1"}, email,
		"zeros are not written; the last depth sample stays")
	hour, err := rdb.HGetAll(ctx, keyWith(t, keys, "{email}:history:h483333")).Result()
	require.NoError(t, err)
	require.Equal(t, map[string]string{"created": "3", "completed": "1", "failed": "3", "started": "2", "waiting": "5", "w0": "1", "w2": "1"}, hour)
	ttl, err := rdb.TTL(ctx, keyWith(t, keys, "{email}:history:h483333")).Result()
	require.NoError(t, err)
	require.Greater(t, ttl.Hours(), 7*24.0, "an hour is kept a week and more")

	got, err := st.History(ctx, []string{"email", "sms"}, 60000, m-1, m+1)
	require.NoError(t, err)
	require.Equal(t, []core.MinuteCounts{
		{At: (m - 1) * 60000, Waits: waits()},
		{At: m * 60000, Created: 3, Completed: 1, Started: 2, Waiting: 5, Waits: waits(1, 0, 1)},
		{At: (m + 1) * 60000, Completed: 4, Failed: 3, Waiting: 2, Waits: waits()},
	}, got)
	got, err = st.History(ctx, []string{"email", "sms"}, 3_600_000, m/60, m/60)
	require.NoError(t, err)
	require.Equal(t, []core.MinuteCounts{
		{At: m / 60 * 3_600_000, Created: 3, Completed: 5, Failed: 3, Started: 2, Waiting: 7, Waits: waits(1, 0, 1)},
	}, got, "the hour of both types")
}

func keyWith(t *testing.T, keys []string, suffix string) string {
	t.Helper()
	for _, k := range keys {
		if len(k) >= len(suffix) && k[len(k)-len(suffix):] == suffix {
			return k
		}
	}
	t.Fatalf("no key ends with %s in %v", suffix, keys)
	return ""
}
