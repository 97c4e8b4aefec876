package redisstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
)

// failedJobs is type t holding failed jobs 1..3, failed at 1000, 2000 and
// 3000 with the errors given; job 1 holds no key, each had 3 attempts.
func failedJobs(errs ...string) keyspace {
	ks := keyspace{
		"{_}:blocks": map[string]string{"0": "t"},
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{},
		"{t}:failed": map[string]float64{},
	}
	for i, e := range errs {
		id, at := string(rune('1'+i)), string(rune('1'+i))+"000"
		ks["{t}:jobs"].(map[string]float64)[id] = float64(i + 1)
		ks["{t}:failed"].(map[string]float64)[id] = float64((i + 1) * 1000)
		ks["{t}:job:"+id] = jobHash(map[string]string{"id": id, "state": "failed", "attempts": "3", "error": e,
			"failed_at": at, "updated_at": at, "rmember": "-"})
	}
	return ks
}

func bulk(t *testing.T, st *scriptStore, q service.BulkQuery) *service.BulkResult {
	t.Helper()
	res, err := st.Bulk(ctx, 5000, &q)
	require.NoError(t, err)
	return res
}

// TestBulkRetryIsSetStateOfEachJobThatPassesTheFilters: of three failed
// jobs, the one whose error holds "timeout" and that was updated before
// 2500 runs again exactly as set_state to inactive runs it (attempts 0,
// failed_at cleared, a ready member); the others are left as they were.
func TestBulkRetryIsSetStateOfEachJobThatPassesTheFilters(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := failedJobs("read timeout", "bad input", "timeout again")
	st.seed(before)
	res := bulk(t, st, service.BulkQuery{Action: core.BulkRetry, State: core.StateFailed, Type: "t",
		Error: "timeout", Before: 2500, Limit: 10})
	require.Equal(t, 1, res.Matched)
	require.Len(t, res.Jobs, 1)
	require.Equal(t, int64(1), res.Jobs[0].ID)
	require.Equal(t, core.StateInactive, res.Jobs[0].State)
	require.Nil(t, res.Next, "the index was read to its end")
	want := before.with(keyspace{
		"{t}:failed": map[string]float64{"2": 2000, "3": 3000},
		"{t}:ready":  map[string]float64{"0000000000000001:1": 0},
		"{t}:seq":    "1",
		"{t}:job:1": fields(before["{t}:job:1"].(map[string]string), map[string]string{"state": "inactive",
			"attempts": "0", "stalls": "0", "failed_at": "", "updated_at": "5000", "rmember": "0000000000000001:1"}),
	})
	st.requireKeys(want, "job 1 runs again; 2 and 3 stay")

	// The same move as set_state: a second store with the same seed, job 1
	// set to inactive by hand, ends with the same keys.
	other := newScriptStore(t, redisstore.Config{})
	other.seed(before)
	_, _, err := other.SetState(ctx, 5000, 1, core.StateInactive)
	require.NoError(t, err)
	other.requireKeys(want, "set_state leaves the same keys")
}

// TestBulkStopsAtItsLimitAndGoesOnFromItsCursor: a limit of 2 over three
// failed jobs, with a filter that passes jobs 1 and 3: the first call looks
// at 1 and 2, removes 1 and says where to go on (the cursor skips job 2,
// which stays); the second looks at 3 and ends.
func TestBulkStopsAtItsLimitAndGoesOnFromItsCursor(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := failedJobs("timeout", "bad input", "timeout")
	st.seed(before)
	q := service.BulkQuery{Action: core.BulkRemove, State: core.StateFailed, Error: "timeout", Limit: 2}
	res := bulk(t, st, q)
	require.Equal(t, 1, res.Matched)
	require.Equal(t, &core.IDsCursor{Type: "t", Position: 1}, res.Next)
	q.From = *res.Next
	res = bulk(t, st, q)
	require.Equal(t, 1, res.Matched)
	require.Equal(t, int64(3), res.Jobs[0].ID)
	require.Equal(t, core.StateFailed, res.Jobs[0].State, "a removed job's row as it was")
	require.Nil(t, res.Next)
	st.requireKeys(keyspace{
		"{_}:blocks": map[string]string{"0": "t"},
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{"2": 2},
		"{t}:failed": map[string]float64{"2": 2000},
		"{t}:job:2":  before["{t}:job:2"],
	}, "jobs 1 and 3 gone; job 2 stays")
}

// TestBulkCancelAndPromote: cancel takes an active job's lease and frees
// its key, as cancel does; promote makes a delayed job ready now.
func TestBulkCancelAndPromote(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	seed := activeJob(map[string]string{"unique_key": "u"}).with(keyspace{"{t}:unique": map[string]string{"u": "1"}})
	st.seed(seed)
	res := bulk(t, st, service.BulkQuery{Action: core.BulkCancel, State: core.StateActive, Limit: 10})
	require.Equal(t, 1, res.Matched)
	want := cancelledJob(seed, "{t}:job:1", nil)
	delete(want, "{t}:leases")
	st.requireKeys(want, "as cancel leaves it")

	st = newScriptStore(t, redisstore.Config{})
	delayed := keyspace{
		"{_}:blocks": map[string]string{"0": "t"},
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{"1": 1},
		"{t}:due":    map[string]float64{"0000000000000000001": 9000},
		"{t}:job:1":  jobHash(map[string]string{"state": "delayed", "delay": "8000", "promote_at": "9000", "rmember": "-"}),
	}
	st.seed(delayed)
	res = bulk(t, st, service.BulkQuery{Action: core.BulkPromote, State: core.StateDelayed, Type: "t", Limit: 10})
	require.Equal(t, 1, res.Matched)
	st.requireKeys(delayed.with(keyspace{
		"{t}:due":   nil,
		"{t}:ready": map[string]float64{"0000000000000001:1": 0},
		"{t}:seq":   "1",
		"{t}:job:1": fields(delayed["{t}:job:1"].(map[string]string), map[string]string{"state": "inactive",
			"updated_at": "5000", "rmember": "0000000000000001:1"}),
	}), "ready now, its promote_at kept")
}
