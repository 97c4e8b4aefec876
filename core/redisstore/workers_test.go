package redisstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestHeartbeatKeepsTheLiveWorkers: lua/heartbeat.lua stores a worker's
// last heartbeat and when it was heard, forgets a worker that is gone, and
// drops those not heard from before the forget time; Workers lists those
// heard since a time.
func TestHeartbeatKeepsTheLiveWorkers(t *testing.T) {
	t.Parallel()
	st, rdb := nodetest.NewStore(t)
	ctx := t.Context()
	beat := func(now int64, id string, gone bool) {
		t.Helper()
		require.NoError(t, st.Heartbeat(ctx, now, &core.Heartbeat{Worker: id, Types: []string{"email"}, Concurrency: 4, Running: 1, Gone: gone}))
	}
	beat(1_000, "old", false)
	beat(3_700_000, "w1", false) // more than an hour later: "old" is forgotten
	beat(3_700_500, "w2", false)
	beat(3_700_600, "w2", true)

	keys, err := rdb.Keys(ctx, "*workers*").Result()
	require.NoError(t, err)
	require.Len(t, keys, 2, "one hash, one index")
	got, err := st.Workers(ctx, 3_690_000)
	require.NoError(t, err)
	require.Equal(t, []core.WorkerInfo{{Heartbeat: core.Heartbeat{Worker: "w1", Types: []string{"email"}, Concurrency: 4, Running: 1}, SeenAt: 3_700_000}}, got)
	got, err = st.Workers(ctx, 3_700_001)
	require.NoError(t, err)
	require.Empty(t, got, "w1 not heard since")
}
