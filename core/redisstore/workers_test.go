package redisstore_test

import (
	"strings"
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

	// this store's keys: those beside the workers hash that lists w1 (other
	// tests of the binary share the Redis, under prefixes of their own)
	all, err := rdb.Keys(ctx, "*:{_}:workers").Result()
	require.NoError(t, err)
	var prefix string
	for _, k := range all {
		if rdb.HExists(ctx, k, "w1").Val() {
			prefix = strings.TrimSuffix(k, "workers")
		}
	}
	require.NotEmpty(t, prefix)
	keys, err := rdb.Keys(ctx, prefix+"workers*").Result()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{prefix + "workers", prefix + "workers_seen", prefix + "workers_instance", prefix + "workers_clock"}, keys,
		"the heartbeats, when each was heard, each one's instance token, the run of them")
	got, err := st.Workers(ctx, 3_690_000)
	require.NoError(t, err)
	require.Equal(t, []core.WorkerInfo{{Heartbeat: core.Heartbeat{Worker: "w1", Types: []string{"email"}, Concurrency: 4, Running: 1}, SeenAt: 3_700_000}}, got)
	got, err = st.Workers(ctx, 3_700_001)
	require.NoError(t, err)
	require.Empty(t, got, "w1 not heard since")
}
