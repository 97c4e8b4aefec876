package redisstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
)

// TestExpireSilentEndsTheLeasesOfASilentWorker (expire_leases.lua): of
// two active jobs, the one a silent worker holds has its lease end now (a
// rescue then takes it back); the one a worker still heard from holds is
// left alone, and so is an entry that is not the silent worker's current
// lease. The worker is marked found silent at its last heartbeat, so a
// second call ends nothing; next is when the live worker would turn silent.
func TestExpireSilentEndsTheLeasesOfASilentWorker(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	beat := func(worker string) string {
		return `{"worker":"` + worker + `","types":["t"],"concurrency":1,"running":1,"started_at":0}`
	}
	before := keyspace{
		"{_}:blocks":       map[string]string{"0": "t"},
		"{_}:types":        []string{"t"},
		"{_}:workers":      map[string]string{"gone-quiet": beat("gone-quiet"), "beating": beat("beating")},
		"{_}:workers_seen": map[string]float64{"gone-quiet": 7000, "beating": 9900},
		// heartbeats stored without a break since 1000, the last at 9900
		"{_}:workers_clock": map[string]string{"last": "9900", "since": "1000"},
		"{t}:jobs":          map[string]float64{"1": 1, "2": 2, "3": 3},
		"{t}:leases":        map[string]float64{"1": 60000, "2": 60000, "3": 9000},
		"{t}:seq":           "3",
		"{t}:job:1":         jobHash(map[string]string{"state": "active", "lease": "L", "lease_until": "60000", "worker_id": "gone-quiet"}),
		"{t}:job:2":         jobHash(map[string]string{"id": "2", "state": "active", "lease": "M", "lease_until": "60000", "worker_id": "beating"}),
		// lease_until already past: the rescue's anyway, left as it is
		"{t}:job:3": jobHash(map[string]string{"id": "3", "state": "active", "lease": "N", "lease_until": "9000", "worker_id": "gone-quiet"}),
	}
	st.seed(before)
	ended, next, err := st.ExpireSilent(ctx, 10000) // gone-quiet silent since 7000 + core.WorkerSilentAfter
	require.NoError(t, err)
	require.Equal(t, 1, ended)
	require.Equal(t, int64(9900+core.WorkerSilentAfter), next, "when the live worker turns silent")
	after := before.with(keyspace{
		"{t}:leases":         map[string]float64{"1": 10000, "2": 60000, "3": 9000},
		"{t}:job:1":          jobHash(map[string]string{"state": "active", "lease": "L", "lease_until": "10000", "worker_id": "gone-quiet"}),
		"{_}:workers_silent": map[string]string{"gone-quiet": "7000"},
	})
	st.requireKeys(after, "the silent worker's lease ends now; nothing else changes")

	ended, _, err = st.ExpireSilent(ctx, 10500)
	require.NoError(t, err)
	require.Zero(t, ended, "found silent once per silence")
	st.requireKeys(after, "a second call changes nothing")

	// After a stall in which no heartbeat could be stored (Redis or core
	// down), nobody is silent until the run of them is as long again.
	require.NoError(t, st.rdb.Del(ctx, st.prefix+":{_}:workers_silent").Err())
	st.seed(keyspace{"{_}:workers_clock": map[string]string{"last": "10400", "since": "10000"}})
	ended, _, err = st.ExpireSilent(ctx, 10500)
	require.NoError(t, err)
	require.Zero(t, ended, "the run began 500 ms ago: no silence is judged over the stall")

	moved, _, err := st.Rescue(ctx, 10500, 100, 1)
	require.NoError(t, err)
	require.Len(t, moved, 2, "the rescue takes back the ended lease and the one past its ttl")
	require.Equal(t, 1, moved[0].Stalls)
}

// TestMarkSilentMarksOnlyTheHeartbeatFoundSilent (mark_silent.lua): a
// worker is marked at the seen score it was found silent at; one heard
// from again since, and one gone meanwhile (heartbeat.lua forgot it), are
// not, so no mark outlives its worker.
func TestMarkSilentMarksOnlyTheHeartbeatFoundSilent(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := keyspace{
		"{_}:workers_seen": map[string]float64{"quiet": 7000, "back": 9500},
	}
	st.seed(before)
	require.NoError(t, redisstore.MarkSilent(ctx, st.Store, map[string]float64{"quiet": 7000, "back": 7000, "gone": 6000}))
	st.requireKeys(before.with(keyspace{
		"{_}:workers_silent": map[string]string{"quiet": "7000"},
	}), "only the worker still at the heartbeat found silent is marked")
}
