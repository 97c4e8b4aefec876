package redisstore_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// One test per script of lua/ that is not a lease holder's (those are in
// scripts_lease_test.go): seed, run through the store, assert every key
// and the reply.

var ctx = context.Background()

// TestCreateJobsStoreWhatTheyReply runs reserve_ids (a block of the
// type's ids) and create_jobs: a ready job with a unique key, a delayed job
// with a backoff, then a job whose unique key the first holds. The jobs
// Create returns are the rows the script wrote: the same as Get reads.
func TestCreateJobsStoreWhatTheyReply(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	two := 2
	jobs, existing, err := st.Create(ctx, 1000, []core.Spec{
		{Type: "t", Data: json.RawMessage(`{"n":1}`), Priority: -10, MaxAttempts: 3, TTL: 1000 * time.Millisecond, UniqueKey: "u", StallLimit: &two,
			RemoveOnFail: core.Retention{Age: 5 * time.Second, Count: 7}},
		{Type: "t", Delay: 500 * time.Millisecond, MaxAttempts: 1, TTL: 60000 * time.Millisecond, RemoveOnComplete: core.RemoveAtOnce,
			Backoff: &core.Backoff{Type: core.BackoffExponential, Delay: 100 * time.Millisecond}},
	})
	require.NoError(t, err)
	require.Equal(t, []bool{false, false}, existing)
	want := keyspace{
		"{_}:ids":    "1000",                      // the type's block of ids
		"{_}:blocks": map[string]string{"0": "t"}, // ids 1..1000 are t's
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{"1": 1000_000, "2": 1000_001}, // created at 1000, first and second of the call
		"{t}:ready":  map[string]float64{"0000000000000001:1": -10},
		"{t}:seq":    "2", // one number per job of the call, the delayed one's unused
		"{t}:due":    map[string]float64{"0000000000000000002": 1500},
		"{t}:unique": map[string]string{"u": "1"},
		"{t}:job:1":  jobHash(map[string]string{"priority": "-10", "unique_key": "u", "stall_limit": "2", "rof_limit": "5000:7"}),
		"{t}:stats":  map[string]string{"own_retention": "1"}, // job 1's remove_on_fail
		"{t}:job:2": jobHash(map[string]string{"id": "2", "data": "", "state": "delayed", "delay": "500",
			"max_attempts": "1", "backoff": "exponential:100", "ttl": "60000", "roc": "1", "promote_at": "1500",
			"rmember": "-"}),
	}
	st.requireKeys(want, "after the create")
	for _, j := range jobs {
		got, err := st.Get(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, *got, j, "what Create returns is what it stored")
	}
	require.Equal(t, core.Job{ID: 2, Type: "t", State: core.StateDelayed, Delay: 500, MaxAttempts: 1,
		Backoff: &core.Backoff{Type: core.BackoffExponential, Delay: 100 * time.Millisecond}, TTL: 60000, RemoveOnComplete: core.RemoveAtOnce,
		CreatedAt: 1000, UpdatedAt: 1000, PromoteAt: 1500, StallLimit: 1}, jobs[1])

	again, existing, err := st.Create(ctx, 2000, []core.Spec{{Type: "t", MaxAttempts: 1, TTL: 1 * time.Millisecond, UniqueKey: "u"}})
	require.NoError(t, err)
	require.Equal(t, []bool{true}, existing)
	require.Equal(t, jobs[0], again[0], "the job holding the key, data and all")
	st.requireKeys(want, "a duplicate stores nothing: its id stays unused")
}

// TestPromoteDueMovesWhatIsDueOnce: two due jobs move to ready in due
// order; one not yet due stays, and is the next due time; a candidate moved
// already is skipped.
func TestPromoteDueMovesWhatIsDueOnce(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	delayed := func(id, at string) map[string]string {
		return jobHash(map[string]string{"id": id, "state": "delayed", "delay": "500", "promote_at": at, "rmember": "-"})
	}
	before := keyspace{
		"{_}:blocks": map[string]string{"0": "t"},
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{"1": 1, "2": 2, "3": 3},
		"{t}:due":    map[string]float64{"0000000000000000001": 1500, "0000000000000000002": 1400, "0000000000000000003": 3000},
		"{t}:job:1":  delayed("1", "1500"),
		"{t}:job:2":  delayed("2", "1400"),
		"{t}:job:3":  delayed("3", "3000"),
	}
	st.seed(before)
	moved, next, err := st.Promote(ctx, 2000, 10)
	require.NoError(t, err)
	require.Equal(t, int64(3000), next)
	require.Len(t, moved, 2)
	require.Equal(t, []int64{2, 1}, []int64{moved[0].ID, moved[1].ID}, "in due order")
	for _, j := range moved {
		require.Equal(t, core.StateInactive, j.State)
		require.Equal(t, int64(2000), j.UpdatedAt)
	}
	after := before.with(keyspace{
		"{t}:due":   map[string]float64{"0000000000000000003": 3000},
		"{t}:ready": map[string]float64{"0000000000000001:2": 0, "0000000000000002:1": 0},
		"{t}:seq":   "2",
		"{t}:job:1": fields(delayed("1", "1500"), map[string]string{"state": "inactive", "rmember": "0000000000000002:1", "updated_at": "2000"}),
		"{t}:job:2": fields(delayed("2", "1400"), map[string]string{"state": "inactive", "rmember": "0000000000000001:2", "updated_at": "2000"}),
	})
	st.requireKeys(after, "due jobs in ready, in due order")

	moved, next, err = st.Promote(ctx, 2000, 10)
	require.NoError(t, err)
	require.Empty(t, moved, "nothing is due twice")
	require.Equal(t, int64(3000), next)
	st.requireKeys(after, "a second promote changes nothing")
}

// TestRemoveJobDeletesTheJobAndEveryTraceOfIt: its hash, log, error
// history, index entries and unique key; another job of the type stays.
func TestRemoveJobDeletesTheJobAndEveryTraceOfIt(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	other := keyspace{
		"{_}:blocks": map[string]string{"0": "t"},
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{"2": 2},
		"{t}:ready":  map[string]float64{"0000000000000002:2": 0},
		"{t}:seq":    "2",
		"{t}:job:2":  jobHash(map[string]string{"id": "2", "rmember": "0000000000000002:2"}),
	}
	st.seed(other.with(keyspace{
		"{t}:jobs":     map[string]float64{"1": 1, "2": 2},
		"{t}:ready":    map[string]float64{"0000000000000001:1": 0, "0000000000000002:2": 0},
		"{t}:unique":   map[string]string{"u": "1"},
		"{t}:job:1":    jobHash(map[string]string{"unique_key": "u"}),
		"{t}:log:1":    []string{"working"},
		"{t}:errors:1": []string{`{"attempt":1,"at":1500,"error":"boom"}`},
	}))
	job, err := st.Remove(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, int64(1), job.ID)
	require.Equal(t, "u", job.UniqueKey, "the job as it was")
	st.requireKeys(other, "only the other job is left")

	_, err = st.Remove(ctx, 1)
	require.ErrorIs(t, err, core.ErrNotFound)
}

// TestAddLogKeepsTheNewestLines: the log keeps MaxLogLines lines, each
// with its time; a job whose hash is gone (its id in a block of the type)
// stores no line.
func TestAddLogKeepsTheNewestLines(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{MaxLogLines: 2})
	before := keyspace{
		"{_}:blocks": map[string]string{"0": "t"},
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{"1": 1},
		"{t}:ready":  map[string]float64{"0000000000000001:1": 0},
		"{t}:seq":    "1",
		"{t}:job:1":  jobHash(nil),
	}
	st.seed(before)
	for n, line := range []string{"one", "two", "three ☃ with spaces"} {
		job, err := st.AddLog(ctx, int64(2000+n), 1, line)
		require.NoError(t, err)
		require.Equal(t, int64(1), job.ID)
	}
	st.requireKeys(before.with(keyspace{"{t}:log:1": []string{"\xff2001 two", "\xff2002 three ☃ with spaces"}}),
		"the newest two lines, each after its time")
	entries, err := st.Log(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, []core.LogEntry{{At: 2001, Line: "two"}, {At: 2002, Line: "three ☃ with spaces"}}, entries)

	_, err = st.AddLog(ctx, 2000, 9, "lost")
	require.ErrorIs(t, err, core.ErrNotFound)
	_, err = st.Log(ctx, 9)
	require.ErrorIs(t, err, core.ErrNotFound)
}

// TestLogReadsLinesStoredWithoutTimes: lines stored before lines had times
// read whole, with no time, next to newer ones, whatever they hold.
func TestLogReadsLinesStoredWithoutTimes(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	st.seed(activeJob(nil).with(keyspace{"{t}:log:1": []string{"old line", "", "1700 looks timed"}}))
	_, err := st.AddLog(ctx, 2500, 1, "")
	require.NoError(t, err)
	entries, err := st.Log(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, []core.LogEntry{{Line: "old line"}, {Line: ""}, {Line: "1700 looks timed"}, {At: 2500, Line: ""}}, entries)
}

// TestSetStateRunsAFailedJobAgain: a failed job moved to inactive by hand
// goes to ready with its attempts and stalls reset, takes its unique key
// back, and loses its lease marks; moving it where it is changes nothing.
func TestSetStateRunsAFailedJobAgain(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	failed := jobHash(map[string]string{"state": "failed", "attempts": "3", "stalls": "1", "failed_at": "4000",
		"error": "boom", "unique_key": "u", "lease": "", "lease_until": "", "last_lease": "fail:L"})
	before := keyspace{
		"{_}:blocks": map[string]string{"0": "t"},
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{"1": 1},
		"{t}:failed": map[string]float64{"1": 4000},
		"{t}:seq":    "1",
		"{t}:job:1":  failed,
	}
	st.seed(before)
	job, changed, err := st.SetState(ctx, 5000, 1, core.StateInactive)
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, core.StateInactive, job.State)
	require.Zero(t, job.Attempts)
	after := before.with(keyspace{
		"{t}:failed": nil,
		"{t}:ready":  map[string]float64{"0000000000000002:1": 0},
		"{t}:seq":    "2",
		"{t}:unique": map[string]string{"u": "1"},
		"{t}:job:1": fields(failed, map[string]string{"state": "inactive", "attempts": "0", "stalls": "0", "failed_at": "",
			"rmember": "0000000000000002:1", "updated_at": "5000", "lease": "-", "lease_until": "-", "last_lease": "-"}),
	})
	st.requireKeys(after, "ready again")

	job, changed, err = st.SetState(ctx, 6000, 1, core.StateInactive)
	require.NoError(t, err)
	require.False(t, changed)
	require.Equal(t, int64(5000), job.UpdatedAt)
	st.requireKeys(after, "already there: nothing changed")

	_, _, err = st.SetState(ctx, 6000, 7, core.StateInactive)
	require.ErrorIs(t, err, core.ErrNotFound)
}

// TestSetPriorityMovesAReadyJobAndKeepsItsMember: the job's member keeps
// its sequence number, so it keeps its place in time at the new priority.
func TestSetPriorityMovesAReadyJobAndKeepsItsMember(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := keyspace{
		"{_}:blocks": map[string]string{"0": "t"},
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{"1": 1},
		"{t}:ready":  map[string]float64{"0000000000000001:1": 0},
		"{t}:seq":    "1",
		"{t}:job:1":  jobHash(nil),
	}
	st.seed(before)
	job, err := st.SetPriority(ctx, 3000, 1, core.PriorityHigh)
	require.NoError(t, err)
	require.Equal(t, core.PriorityHigh, job.Priority)
	st.requireKeys(before.with(keyspace{
		"{t}:ready": map[string]float64{"0000000000000001:1": -10},
		"{t}:job:1": jobHash(map[string]string{"priority": "-10", "updated_at": "3000"}),
	}), "moved within ready")
}

// TestALeasedJobIsTheStoredJobWithItsToken: lease's rows and Get's read
// decode alike, field for field, but for the token only lease hands out.
func TestALeasedJobIsTheStoredJobWithItsToken(t *testing.T) {
	t.Parallel()
	st, _ := nodetest.NewStore(t)
	jobs, _, err := st.Create(ctx, 1000, []core.Spec{{Type: "t", Data: json.RawMessage(`[1]`), MaxAttempts: 2, TTL: 5 * time.Millisecond}})
	require.NoError(t, err)
	leased, _, err := st.Lease(ctx, &service.LeaseParams{Now: 1100, Types: []string{"t"}, Max: 1, Worker: "w", Token: "tok", TTL: 0})
	require.NoError(t, err)
	require.Len(t, leased, 1)
	require.Equal(t, "tok", leased[0].Lease, "lease hands out its token")
	got, err := st.Get(ctx, jobs[0].ID)
	require.NoError(t, err)
	require.Empty(t, got.Lease, "nothing but lease hands out the token")
	got.Lease = "tok"
	require.Equal(t, leased[0], *got)
}
