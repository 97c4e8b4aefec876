package redisstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestHistoryAddIncrementsEachMinuteAndExpires: lua/history_add.lua adds
// to each minute's hash what it is given, skips zeros, and keeps a minute a
// day; History sums types and fills missing minutes with zeros.
func TestHistoryAddIncrementsEachMinuteAndExpires(t *testing.T) {
	t.Parallel()
	st, rdb := nodetest.NewStore(t)
	ctx := t.Context()
	const m = 29_000_000 // a unix minute
	require.NoError(t, st.AddHistory(ctx, "email", []core.MinuteCounts{{At: m * 60000, Created: 2, Completed: 1}, {At: (m + 1) * 60000, Failed: 3}}))
	require.NoError(t, st.AddHistory(ctx, "email", []core.MinuteCounts{{At: m * 60000, Created: 1}}))
	require.NoError(t, st.AddHistory(ctx, "sms", []core.MinuteCounts{{At: (m + 1) * 60000, Completed: 4}}))

	keys, err := rdb.Keys(ctx, "*history*").Result()
	require.NoError(t, err)
	require.Len(t, keys, 3)
	for _, k := range keys {
		ttl, err := rdb.TTL(ctx, k).Result()
		require.NoError(t, err)
		require.Greater(t, ttl.Hours(), 24.0, k)
	}
	email, err := rdb.HGetAll(ctx, keyWith(t, keys, "{email}:history:29000000")).Result()
	require.NoError(t, err)
	require.Equal(t, map[string]string{"created": "3", "completed": "1"}, email, "zeros are not written")

	got, err := st.History(ctx, []string{"email", "sms"}, m-1, m+1)
	require.NoError(t, err)
	require.Equal(t, []core.MinuteCounts{
		{At: (m - 1) * 60000},
		{At: m * 60000, Created: 3, Completed: 1},
		{At: (m + 1) * 60000, Completed: 4, Failed: 3},
	}, got)
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
