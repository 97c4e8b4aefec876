package redisstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
)

// cancelledJob is what each starting state leaves: job 1 in the cancelled
// index at 5000, its unique key free, no lease, every other field as it was.
func cancelledJob(before keyspace, job string, more map[string]string) keyspace {
	h := before[job].(map[string]string)
	return before.with(keyspace{
		"{t}:cancelled": map[string]float64{"1": 5000},
		"{t}:unique":    nil,
		job: fields(h, fields(map[string]string{"state": "cancelled", "updated_at": "5000",
			"lease": "-", "lease_until": "-", "last_lease": "-"}, more)),
	})
}

// TestCancelEndsAJobInEachStateThatMayRun: a delayed, an inactive and an
// active job (each holding a unique key) leave their state's index for
// cancelled, give up the key and any lease; the reply is the job after.
func TestCancelEndsAJobInEachStateThatMayRun(t *testing.T) {
	t.Parallel()
	base := keyspace{
		"{_}:blocks": map[string]string{"0": "t"},
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{"1": 1},
		"{t}:seq":    "1",
		"{t}:unique": map[string]string{"u": "1"},
	}
	for _, tc := range []struct {
		state core.State
		seed  keyspace
	}{
		{core.StateDelayed, base.with(keyspace{
			"{t}:due":   map[string]float64{"0000000000000000001": 6000},
			"{t}:job:1": jobHash(map[string]string{"state": "delayed", "delay": "5000", "promote_at": "6000", "rmember": "-", "unique_key": "u"}),
		})},
		{core.StateInactive, base.with(keyspace{
			"{t}:ready": map[string]float64{"0000000000000001:1": 0},
			"{t}:job:1": jobHash(map[string]string{"unique_key": "u"}),
		})},
		{core.StateActive, activeJob(map[string]string{"unique_key": "u"}).with(keyspace{
			"{t}:unique": map[string]string{"u": "1"},
		})},
	} {
		t.Run("from "+string(tc.state), func(t *testing.T) {
			t.Parallel()
			st := newScriptStore(t, redisstore.Config{})
			st.seed(tc.seed)
			job, changed, err := st.Cancel(ctx, 5000, 1)
			require.NoError(t, err)
			require.True(t, changed)
			require.Equal(t, core.StateCancelled, job.State)
			require.Equal(t, int64(5000), job.UpdatedAt)
			require.Empty(t, job.Lease)
			require.Equal(t, "u", job.UniqueKey, "the job keeps its key; the index frees it")
			stored, err := st.Get(ctx, 1)
			require.NoError(t, err)
			stored.Data = nil
			require.Equal(t, stored, job, "the reply is the job stored, but its data")
			want := cancelledJob(tc.seed, "{t}:job:1", nil)
			delete(want, "{t}:due")
			delete(want, "{t}:ready")
			delete(want, "{t}:leases")
			st.requireKeys(want, "cancelled")

			n, err := st.Count(ctx, core.StateCancelled, "t")
			require.NoError(t, err)
			require.Equal(t, int64(1), n)
			stats, err := st.Stats(ctx)
			require.NoError(t, err)
			require.Equal(t, int64(1), stats.Cancelled)
			require.Equal(t, int64(1), stats.Types["t"].Cancelled)
		})
	}
}

// TestACancelledJobIsNeverLeasedAndItsWorkerGetsConflict: the worker that
// held the lease of a cancelled job gets conflict for each lease holder's
// operation, and nothing changes; no lease hands the job out.
func TestACancelledJobIsNeverLeasedAndItsWorkerGetsConflict(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	st.seed(activeJob(nil))
	_, _, err := st.Cancel(ctx, 5000, 1)
	require.NoError(t, err)
	after := st.dump()
	for _, op := range []core.Op{core.OpComplete, core.OpFail, core.OpTouch, core.OpRelease, core.OpRejoin, core.OpProgress} {
		res := apply(t, st, 5100, op, service.StoreOp{ID: 1, Lease: "L", Type: "t", Error: "e"})
		require.ErrorIs(t, res.Err, core.ErrConflict, "%s", op)
		st.requireKeys(after, string(op)+" changes nothing")
	}
	jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: 5200, Types: []string{"t"}, Max: 10, Worker: "w", Token: "M", TTL: 0})
	require.NoError(t, err)
	require.Empty(t, jobs)
	st.requireKeys(after, "nothing leased")
}

// TestCancelOfAFinishedJobChangesNothing: complete, failed and cancelled
// jobs come back as they are, changed false; an unknown id is not found.
func TestCancelOfAFinishedJobChangesNothing(t *testing.T) {
	t.Parallel()
	for _, state := range []string{"complete", "failed", "cancelled"} {
		t.Run("from "+state, func(t *testing.T) {
			t.Parallel()
			st := newScriptStore(t, redisstore.Config{})
			before := keyspace{
				"{_}:blocks":   map[string]string{"0": "t"},
				"{_}:types":    []string{"t"},
				"{t}:jobs":     map[string]float64{"1": 1},
				"{t}:" + state: map[string]float64{"1": 4000},
				"{t}:job:1":    jobHash(map[string]string{"state": state, "rmember": "-", "updated_at": "4000"}),
			}
			st.seed(before)
			job, changed, err := st.Cancel(ctx, 5000, 1)
			require.NoError(t, err)
			require.False(t, changed)
			require.Equal(t, core.State(state), job.State)
			st.requireKeys(before, "nothing changed")
		})
	}
	st := newScriptStore(t, redisstore.Config{})
	_, _, err := st.Cancel(ctx, 5000, 9)
	require.ErrorIs(t, err, core.ErrNotFound)
}
