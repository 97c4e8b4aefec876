package redisstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
)

// TestPauseSetsTheFlagOnceAndListsTheType: pausing a type with no jobs
// lists it and sets its flag; a second pause changes nothing; resume
// clears the flag (the type stays listed), and a second resume changes
// nothing.
func TestPauseSetsTheFlagOnceAndListsTheType(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	paused := keyspace{
		"{_}:types": []string{"t"},
		"{t}:stats": map[string]string{"paused": "1"},
	}
	for i, want := range []bool{true, false} {
		changed, err := st.Pause(ctx, "t", true)
		require.NoError(t, err)
		require.Equal(t, want, changed, "pause %d", i+1)
		st.requireKeys(paused, "paused")
	}
	got, err := st.Paused(ctx, []string{"a", "t"})
	require.NoError(t, err)
	require.Equal(t, []string{"t"}, got)
	stats, err := st.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"t"}, stats.Paused)

	for i, want := range []bool{true, false} {
		changed, err := st.Pause(ctx, "t", false)
		require.NoError(t, err)
		require.Equal(t, want, changed, "resume %d", i+1)
		st.requireKeys(keyspace{"{_}:types": []string{"t"}}, "resumed: the flag is gone, the type stays")
	}
	got, err = st.Paused(ctx, []string{"t"})
	require.NoError(t, err)
	require.Empty(t, got)
}

// TestResumeOfAnUnknownTypeListsNothing: a resume that changes nothing
// leaves no key behind.
func TestResumeOfAnUnknownTypeListsNothing(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	changed, err := st.Pause(ctx, "t", false)
	require.NoError(t, err)
	require.False(t, changed)
	st.requireKeys(keyspace{}, "nothing stored")
}

// TestLeaseSkipsAPausedType: a paused type's ready job, although it has the
// better priority, is not leased, and does not stand in the way of another
// type's; the work time in stats is kept beside the flag.
func TestLeaseSkipsAPausedType(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := keyspace{
		"{_}:types": []string{"t", "u"},
		"{t}:jobs":  map[string]float64{"1": 1},
		"{t}:ready": map[string]float64{"0000000000000001:1": -10},
		"{t}:seq":   "1",
		"{t}:stats": map[string]string{"paused": "1", "work_time": "7"},
		"{t}:job:1": jobHash(map[string]string{"priority": "-10"}),
		"{u}:jobs":  map[string]float64{"2": 2},
		"{u}:ready": map[string]float64{"0000000000000001:2": 0},
		"{u}:seq":   "1",
		"{u}:job:2": jobHash(map[string]string{"id": "2", "type": "u"}),
	}
	st.seed(before)
	jobs, paused, err := st.Lease(ctx, &service.LeaseParams{Now: 2000, Types: []string{"t", "u"}, Max: 1, Worker: "w", Token: "L", TTL: 0})
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.Equal(t, int64(2), jobs[0].ID, "u's job; t is paused")
	require.Equal(t, []string{"t"}, paused, "the lease says which types it found paused")

	jobs, _, err = st.Lease(ctx, &service.LeaseParams{Now: 2000, Types: []string{"t"}, Max: 5, Worker: "w", Token: "M", TTL: 0})
	require.NoError(t, err)
	require.Empty(t, jobs, "t is paused")
	stats, err := st.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(7), stats.WorkTime)
	require.Equal(t, []string{"t"}, stats.Paused)

	_, err = st.Pause(ctx, "t", false)
	require.NoError(t, err)
	jobs, paused, err = st.Lease(ctx, &service.LeaseParams{Now: 2000, Types: []string{"t"}, Max: 5, Worker: "w", Token: "N", TTL: 0})
	require.NoError(t, err)
	require.Empty(t, paused)
	require.Len(t, jobs, 1, "t resumed")
	require.Equal(t, int64(1), jobs[0].ID)
}

// TestLeaseScriptHandsOutNothingOfAPausedType: the script checks the flag
// itself, for a type paused between the store's read of ready and the
// script (run here directly, with the candidate the read would have given).
func TestLeaseScriptHandsOutNothingOfAPausedType(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := keyspace{
		"{_}:blocks": map[string]string{"0": "t"},
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{"1": 1},
		"{t}:ready":  map[string]float64{"0000000000000001:1": 0},
		"{t}:seq":    "1",
		"{t}:stats":  map[string]string{"paused": "1"},
		"{t}:job:1":  jobHash(nil),
	}
	st.seed(before)
	text, ok := redisstore.ScriptText("lease.lua")
	require.True(t, ok)
	var keys []string
	for _, k := range []string{"ready", "due", "leases", "jobs", "complete", "failed", "unique", "seq", "stats", "job:1"} {
		keys = append(keys, st.prefix+":{t}:"+k)
	}
	res, err := st.rdb.Eval(ctx, text, keys, 2000, "w", "L", 0, "0000000000000001:1").Slice()
	require.NoError(t, err)
	require.Equal(t, []any{redisstore.ReplyCode("PAUSED")}, res, "PAUSED and no job")
	st.requireKeys(before, "nothing leased")
}
