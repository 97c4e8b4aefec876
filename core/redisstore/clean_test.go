package redisstore_test

import (
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
)

// finished is a keyspace of jobs of type t in state (complete, failed or
// cancelled),
// job i (1-based) finished at 100·i, with the hash fields own[i] over it,
// and a log line each. jobs lists them all; they are of type t's first id
// block.
func finished(state core.State, n int, own map[int]map[string]string) keyspace {
	ks := keyspace{"{_}:types": []string{"t"}, "{_}:blocks": map[string]string{"0": "t"}}
	jobs := map[string]float64{}
	index := map[string]float64{}
	for i := 1; i <= n; i++ {
		id := strconv.Itoa(i)
		jobs[id], index[id] = float64(i), float64(100*i)
		ks["{t}:job:"+id] = jobHash(fields(map[string]string{"id": id, "state": string(state), "rmember": "-"}, own[i]))
		ks["{t}:log:"+id] = []string{"line"}
	}
	ks["{t}:jobs"] = jobs
	ks["{t}:"+string(state)] = index
	return ks
}

// without returns ks less the jobs ids: their hash, log, and entries in
// jobs and the state's index.
func without(ks keyspace, ids ...string) keyspace {
	out := ks.with(nil)
	for name, v := range out {
		switch name {
		case "{t}:jobs", "{t}:complete", "{t}:failed", "{t}:cancelled":
			m := maps.Clone(v.(map[string]float64))
			for _, id := range ids {
				delete(m, id)
			}
			out[name] = m
		}
	}
	for _, id := range ids {
		delete(out, "{t}:job:"+id)
		delete(out, "{t}:log:"+id)
	}
	return out
}

// TestCleanKeepsTheNewestCountByDefault: with the type's default {count: 2}
// the three oldest of five complete jobs go with their logs and ids; a
// second call finds nothing more.
func TestCleanKeepsTheNewestCountByDefault(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := finished(core.StateComplete, 5, nil)
	st.seed(before)
	n, more, err := st.Clean(ctx, &service.CleanParams{Now: 1000, Type: "t", State: core.StateComplete, Rule: core.Retention{Count: 2}, Limit: 10})
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.False(t, more, "the read reached the newest job")
	after := without(before, "1", "2", "3")
	st.requireKeys(after, "the two newest are kept")

	n, _, err = st.Clean(ctx, &service.CleanParams{Now: 1000, Type: "t", State: core.StateComplete, Rule: core.Retention{Count: 2}, Limit: 10})
	require.NoError(t, err)
	require.Zero(t, n)
	st.requireKeys(after, "nothing more")
}

// TestCleanRemovesPastTheAgeInBoundedBatches: with {age: 250} at 500, the
// jobs that finished at or before 250 go, two per call (the limit); the
// first call says more, the cursor is kept in stats between calls, and the
// round ends at the newest.
func TestCleanRemovesPastTheAgeInBoundedBatches(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := finished(core.StateFailed, 4, nil)
	st.seed(before)
	rule := core.Retention{Age: 250 * time.Millisecond}
	n, more, err := st.Clean(ctx, &service.CleanParams{Now: 500, Type: "t", State: core.StateFailed, Rule: rule, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.True(t, more, "one removed, the read stopped short of the newest")
	n, more, err = st.Clean(ctx, &service.CleanParams{Now: 500, Type: "t", State: core.StateFailed, Rule: rule, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.True(t, more)
	after := without(before, "1", "2")
	st.requireKeys(after, "jobs 1 and 2 (finished at 100 and 200) gone")

	// job 3 (300) is kept: the cursor moves past it; job 4 is read next
	n, more, err = st.Clean(ctx, &service.CleanParams{Now: 500, Type: "t", State: core.StateFailed, Rule: rule, Limit: 1})
	require.NoError(t, err)
	require.Zero(t, n)
	require.False(t, more, "nothing removed: the leader waits")
	st.requireKeys(after.with(keyspace{"{t}:stats": map[string]string{"clean_failed": "1"}}), "the cursor past the kept job")
	n, _, err = st.Clean(ctx, &service.CleanParams{Now: 500, Type: "t", State: core.StateFailed, Rule: rule, Limit: 1})
	require.NoError(t, err)
	require.Zero(t, n)
	st.requireKeys(after, "the round ended at the newest: the cursor is back at 0")
	n, _, err = st.Clean(ctx, &service.CleanParams{Now: 800, Type: "t", State: core.StateFailed, Rule: rule, Limit: 5})
	require.NoError(t, err)
	require.Equal(t, 2, n, "later, both are past their age")
}

// TestCleanLetsAJobsOwnRuleWin: a job's own {count}, {age} or true wins
// over the type's default; with no default, only the jobs with a rule of
// their own go, and a type none of whose jobs brought one is not read.
func TestCleanLetsAJobsOwnRuleWin(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := finished(core.StateComplete, 4, map[int]map[string]string{
		1: {"roc_limit": "0:10"},   // keep while among the 10 newest: kept
		2: {"roc_limit": "1000:0"}, // keep 1000 ms: finished at 200, kept at 500
		3: {"roc": "1"},            // true: goes (moved here by hand)
	})
	st.seed(before)
	n, _, err := st.Clean(ctx, &service.CleanParams{Now: 500, Type: "t", State: core.StateComplete, Rule: core.Retention{Count: 1}, Limit: 10})
	require.NoError(t, err)
	require.Equal(t, 1, n, "only job 3: 1 and 2 keep by their own rule, 4 is the newest")
	after := without(before, "3")
	st.requireKeys(after, "job 3 gone")

	n, _, err = st.Clean(ctx, &service.CleanParams{Now: 500, Type: "t", State: core.StateComplete, Rule: core.Retention{}, Limit: 10})
	require.NoError(t, err)
	require.Zero(t, n, "no default, and no job of t was created with a rule: t is not read")

	st.seed(keyspace{"{t}:stats": map[string]string{"own_retention": "1"}})
	n, _, err = st.Clean(ctx, &service.CleanParams{Now: 1300, Type: "t", State: core.StateComplete, Rule: core.Retention{}, Limit: 10})
	require.NoError(t, err)
	require.Equal(t, 1, n, "job 2 past its own age; 1 and 4 kept (4 has no rule)")
	st.requireKeys(without(after, "2").with(keyspace{"{t}:stats": map[string]string{"own_retention": "1"}}), "job 2 gone")
}

// TestCleanScriptSkipsACandidateThatMoved: a candidate retried (out of the
// index) since the read is not removed.
func TestCleanScriptSkipsACandidateThatMoved(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := finished(core.StateComplete, 1, nil)
	delete(before, "{t}:complete") // retried since the read
	st.seed(before)
	text, ok := redisstore.ScriptText("clean.lua")
	require.True(t, ok)
	var keys []string
	for _, k := range []string{"ready", "due", "leases", "jobs", "complete", "failed", "unique", "seq", "stats", "job:1", "log:1"} {
		keys = append(keys, st.prefix+":{t}:"+k)
	}
	res, err := st.rdb.Eval(ctx, text, keys, 1000, "complete", "0:1", 0, 1, "1").StringSlice()
	require.NoError(t, err)
	require.Empty(t, res)
	st.requireKeys(before, "nothing removed")
}

// TestCleanRemovesCancelledJobsByTheTypesDefaultAlone: cancelled jobs go by
// the type's default for cancelled, {age} or {count}, with their logs and
// ids; a job's own remove_on_fail / remove_on_complete says nothing about
// them (a cancel is no failure), and with no default they are kept and not
// even read.
func TestCleanRemovesCancelledJobsByTheTypesDefaultAlone(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	// Jobs 1 and 2 brought rules of their own, which a cancelled job
	// does not follow.
	before := finished(core.StateCancelled, 5, map[int]map[string]string{
		1: {"roc": "1", "rof": "1"},
		2: {"roc_limit": "0:1", "rof_limit": "0:1"},
	}).with(keyspace{"{t}:stats": map[string]string{"own_retention": "1"}})
	st.seed(before)

	n, more, err := st.Clean(ctx, &service.CleanParams{Now: 10_000, Type: "t", State: core.StateCancelled, Rule: core.Retention{}, Limit: 10})
	require.NoError(t, err)
	require.Zero(t, n)
	require.False(t, more)
	st.requireKeys(before, "no default for cancelled: all kept, whatever their own rules say")

	n, more, err = st.Clean(ctx, &service.CleanParams{Now: 350, Type: "t", State: core.StateCancelled, Rule: core.Retention{Age: 100 * time.Millisecond}, Limit: 10})
	require.NoError(t, err)
	require.Equal(t, 2, n, "jobs 1 and 2, cancelled at 100 and 200, are past 100 ms at 350")
	require.False(t, more)
	after := without(before, "1", "2")
	st.requireKeys(after, "the older two gone")

	n, _, err = st.Clean(ctx, &service.CleanParams{Now: 350, Type: "t", State: core.StateCancelled, Rule: core.Retention{Count: 1}, Limit: 10})
	require.NoError(t, err)
	require.Equal(t, 2, n)
	st.requireKeys(without(after, "3", "4"), "only the newest kept")

	_, _, err = st.Clean(ctx, &service.CleanParams{Now: 350, Type: "t", State: core.StateActive, Rule: core.Retention{Count: 1}, Limit: 10})
	require.ErrorIs(t, err, core.ErrInvalid)
}
