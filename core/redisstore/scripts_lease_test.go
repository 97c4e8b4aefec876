package redisstore_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
)

// One test per script of a lease: lease, the lease holder's operations
// (complete, fail, touch, release, rejoin, progress) and rescue_expired.

// TestLeaseTakesTheBestReadyJob (lease_head.lua, a lease of one type):
// of two ready jobs the better priority is leased, with its data and
// token, for its own ttl or the lease's.
func TestLeaseTakesTheBestReadyJob(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := keyspace{
		"{_}:blocks": map[string]string{"0": "t"},
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{"1": 1, "2": 2},
		"{t}:ready":  map[string]float64{"0000000000000001:1": 0, "0000000000000002:2": -5},
		"{t}:seq":    "2",
		"{t}:job:1":  jobHash(nil),
		"{t}:job:2":  jobHash(map[string]string{"id": "2", "priority": "-5", "rmember": "0000000000000002:2", "progress": "7"}),
	}
	st.seed(before)
	jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: 2000, Types: []string{"t"}, Max: 1, Worker: "w", Token: "L", TTL: 0})
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.Equal(t, int64(2), jobs[0].ID, "priority -5 before 0")
	require.Equal(t, "L", jobs[0].Lease)
	require.Equal(t, json.RawMessage(`{"n":1}`), jobs[0].Data)
	require.Equal(t, int64(3000), jobs[0].LeaseUntil)
	requireStoredAsReplied(t, st, jobs)
	leased := map[string]string{"state": "active", "lease": "L", "lease_until": "3000", "lease_ttl": "1000",
		"started_at": "2000", "updated_at": "2000", "worker_id": "w", "progress": "0"}
	after := before.with(keyspace{
		"{t}:ready":  map[string]float64{"0000000000000001:1": 0},
		"{t}:leases": map[string]float64{"2": 3000},
		"{t}:job:2":  fields(before["{t}:job:2"].(map[string]string), leased),
	})
	st.requireKeys(after, "job 2 leased")

	jobs, _, err = st.Lease(ctx, &service.LeaseParams{Now: 2500, Types: []string{"t"}, Max: 5, Worker: "w2", Token: "M", TTL: 400})
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.Equal(t, int64(2900), jobs[0].LeaseUntil, "the lease's own ttl")
	requireStoredAsReplied(t, st, jobs)
	st.requireKeys(after.with(keyspace{
		"{t}:ready":  nil,
		"{t}:leases": map[string]float64{"2": 3000, "1": 2900},
		"{t}:job:1": jobHash(map[string]string{"state": "active", "lease": "M", "lease_until": "2900", "lease_ttl": "400",
			"started_at": "2500", "updated_at": "2500", "worker_id": "w2", "progress": "0"}),
	}), "job 1 leased for 400 ms")
}

// requireStoredAsReplied: each job a lease replied is the job stored, but
// for its token, which Get does not read (the lease script replies a job
// as it was and Go applies the lease: leased in calls.go).
func requireStoredAsReplied(t *testing.T, st *scriptStore, jobs []core.Job) {
	t.Helper()
	for _, j := range jobs {
		got, err := st.Get(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, "", got.Lease)
		j.Lease = ""
		require.Equal(t, *got, j, "job %d as leased", j.ID)
	}
}

func apply(t *testing.T, st *scriptStore, now int64, op core.Op, o service.StoreOp) service.Applied {
	t.Helper()
	res, err := st.Apply(ctx, now, op, []service.StoreOp{o})
	require.NoError(t, err)
	require.Len(t, res, 1)
	return res[0]
}

// TestLeaseHeadOfAPausedTypeLeasesNothing (lease_head.lua): a paused
// type hands out nothing and is named paused; its jobs stay ready.
func TestLeaseHeadOfAPausedTypeLeasesNothing(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := keyspace{
		"{_}:types": []string{"t"},
		"{t}:jobs":  map[string]float64{"1": 1},
		"{t}:ready": map[string]float64{"0000000000000001:1": 0},
		"{t}:seq":   "1",
		"{t}:stats": map[string]string{"paused": "1"},
		"{t}:job:1": jobHash(nil),
	}
	st.seed(before)
	jobs, paused, err := st.Lease(ctx, &service.LeaseParams{Now: 2000, Types: []string{"t"}, Max: 5, Worker: "w", Token: "L", TTL: 0})
	require.NoError(t, err)
	require.Empty(t, jobs)
	require.Equal(t, []string{"t"}, paused)
	st.requireKeys(before, "nothing moved")
}

// TestLeaseAcrossTypesTakesTheBestOfEach (lease.lua, candidates a read
// merged over several types): the best jobs over both types are leased,
// each in its own type's keys; a paused type gives none and is named.
func TestLeaseAcrossTypesTakesTheBestOfEach(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := keyspace{
		"{_}:blocks":   map[string]string{"0": "t", "1": "u"}, // ids 1..1000 are t's, 1001..2000 u's: for Get
		"{_}:types":    []string{"t", "u"},
		"{t}:jobs":     map[string]float64{"1": 1},
		"{t}:ready":    map[string]float64{"0000000000000001:1": 0},
		"{t}:seq":      "1",
		"{t}:job:1":    jobHash(nil),
		"{u}:jobs":     map[string]float64{"1001": 1001, "1002": 1002},
		"{u}:ready":    map[string]float64{"0000000000000001:1001": -5, "0000000000000002:1002": 10},
		"{u}:seq":      "2",
		"{u}:job:1001": jobHash(map[string]string{"id": "1001", "type": "u", "priority": "-5", "rmember": "0000000000000001:1001"}),
		"{u}:job:1002": jobHash(map[string]string{"id": "1002", "type": "u", "priority": "10", "rmember": "0000000000000002:1002"}),
	}
	st.seed(before)
	jobs, paused, err := st.Lease(ctx, &service.LeaseParams{Now: 2000, Types: []string{"t", "u"}, Max: 2, Worker: "w", Token: "L", TTL: 0})
	require.NoError(t, err)
	require.Empty(t, paused)
	require.Len(t, jobs, 2)
	require.Equal(t, int64(1001), jobs[0].ID, "u's priority -5 first")
	require.Equal(t, int64(1), jobs[1].ID, "then t's priority 0, before u's 10")
	requireStoredAsReplied(t, st, jobs)
	leased := map[string]string{"state": "active", "lease": "L", "lease_until": "3000", "lease_ttl": "1000",
		"started_at": "2000", "updated_at": "2000", "worker_id": "w", "progress": "0"}
	st.requireKeys(before.with(keyspace{
		"{t}:ready":    nil,
		"{t}:leases":   map[string]float64{"1": 3000},
		"{t}:job:1":    fields(before["{t}:job:1"].(map[string]string), leased),
		"{u}:ready":    map[string]float64{"0000000000000002:1002": 10},
		"{u}:leases":   map[string]float64{"1001": 3000},
		"{u}:job:1001": fields(before["{u}:job:1001"].(map[string]string), leased),
	}), "jobs 1001 and 1 leased")

	_, err = st.Pause(ctx, "u", true)
	require.NoError(t, err)
	jobs, paused, err = st.Lease(ctx, &service.LeaseParams{Now: 2100, Types: []string{"t", "u"}, Max: 2, Worker: "w", Token: "M", TTL: 0})
	require.NoError(t, err)
	require.Empty(t, jobs, "t has none left, u is paused")
	require.Equal(t, []string{"u"}, paused)
}

// TestCompleteEndsTheLeaseOnce: the job is complete with its result,
// duration and work time; the same complete again is a repeat that changes
// nothing; another token is a conflict; an unknown id is not found.
func TestCompleteEndsTheLeaseOnce(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := activeJob(map[string]string{"unique_key": "u"}).with(keyspace{"{t}:unique": map[string]string{"u": "1"}})
	st.seed(before)
	res := apply(t, st, 2600, core.OpComplete, service.StoreOp{ID: 1, Lease: "L", Type: "t", Result: json.RawMessage(`{"ok":1}`)})
	require.NoError(t, res.Err)
	require.False(t, res.Repeated)
	require.Equal(t, core.StateComplete, res.Job.State)
	require.Equal(t, int64(600), res.Job.Duration)
	require.Equal(t, 1, res.Job.Attempts)
	require.Equal(t, 100, res.Job.Progress)
	after := before.with(keyspace{
		"{t}:unique":   nil,
		"{t}:leases":   nil,
		"{t}:complete": map[string]float64{"1": 2600},
		"{t}:stats":    map[string]string{"work_time": "600"},
		"{t}:job:1": fields(before["{t}:job:1"].(map[string]string), map[string]string{"state": "complete",
			"result": `{"ok":1}`, "progress": "100", "duration": "600", "attempts": "1", "updated_at": "2600",
			"lease": "", "lease_until": "", "last_lease": "complete:L"}),
	})
	st.requireKeys(after, "complete")

	res = apply(t, st, 2700, core.OpComplete, service.StoreOp{ID: 1, Lease: "L", Type: "t", Result: json.RawMessage(`{"ok":1}`)})
	require.NoError(t, res.Err)
	require.True(t, res.Repeated)
	require.Equal(t, core.StateComplete, res.Job.State)
	st.requireKeys(after, "a repeat changes nothing")

	res = apply(t, st, 2700, core.OpComplete, service.StoreOp{ID: 1, Lease: "X", Type: "t"})
	require.ErrorIs(t, res.Err, core.ErrConflict)
	res = apply(t, st, 2700, core.OpComplete, service.StoreOp{ID: 5, Lease: "L"})
	require.ErrorIs(t, res.Err, core.ErrNotFound)
	st.requireKeys(after, "a conflict and a not found change nothing")
}

// TestABareCompleteStoresTheSameAndRepliesNoRow (complete.lua with bare
// "1"): what it stores is what a complete with a row stores, though it
// reads only the fields it decides by; its reply carries no row, so the
// job comes back as the operation made it, a repeat's too.
func TestABareCompleteStoresTheSameAndRepliesNoRow(t *testing.T) {
	t.Parallel()
	for _, roc := range []string{"", "1"} {
		withRow, bare := newScriptStore(t, redisstore.Config{}), newScriptStore(t, redisstore.Config{})
		before := activeJob(map[string]string{"roc": roc, "created_at": "1000"})
		withRow.seed(before)
		bare.seed(before)
		o := service.StoreOp{ID: 1, Lease: "L", Type: "t", Result: json.RawMessage(`{"ok":1}`)}
		full := apply(t, withRow, 2600, core.OpComplete, o)
		o.Bare = true
		res := apply(t, bare, 2600, core.OpComplete, o)
		require.NoError(t, res.Err)
		require.Equal(t, roc == "1", res.Removed)
		require.Equal(t, core.Job{ID: 1, Type: "t", State: core.StateComplete, Progress: 100}, *res.Job,
			"roc %q: the job as the operation made it, no field read", roc)
		require.Equal(t, int64(1000), full.Job.CreatedAt, "with a row, the job's own fields")
		bare.requireKeys(withRow.dump(), fmt.Sprintf("roc %q: a bare complete stores what a complete with a row stores", roc))
		if roc == "" {
			stored, err := bare.Get(ctx, 1)
			require.NoError(t, err)
			require.Equal(t, *res.Job, core.Job{ID: stored.ID, Type: stored.Type, State: stored.State, Progress: stored.Progress},
				"what Go makes of a bare reply (completedBare) is what the script stored")
			again := apply(t, bare, 2700, core.OpComplete, o)
			require.True(t, again.Repeated)
			require.Equal(t, core.Job{ID: 1, Type: "t", State: core.StateComplete, Progress: 100}, *again.Job,
				"a bare repeat reads no row either")
			bare.requireKeys(withRow.dump(), "a repeat changes nothing")
			require.ErrorIs(t, apply(t, bare, 2700, core.OpComplete, service.StoreOp{ID: 1, Lease: "X", Type: "t", Bare: true}).Err, core.ErrConflict)
			require.ErrorIs(t, apply(t, bare, 2700, core.OpComplete, service.StoreOp{ID: 7, Lease: "L", Type: "t", Bare: true}).Err, core.ErrNotFound)
		}
	}
}

// TestCompleteRemovesARemoveOnCompleteJob: its hash, log, error history
// and index entries go; only the work time stays (and the type's id block).
func TestCompleteRemovesARemoveOnCompleteJob(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	st.seed(activeJob(map[string]string{"roc": "1"}).with(keyspace{"{t}:log:1": []string{"working"},
		"{t}:errors:1": []string{`{"attempt":1,"at":1500,"error":"boom"}`}}))
	res := apply(t, st, 2500, core.OpComplete, service.StoreOp{ID: 1, Lease: "L", Type: "t"})
	require.NoError(t, res.Err)
	require.True(t, res.Removed)
	st.requireKeys(keyspace{
		"{_}:blocks": map[string]string{"0": "t"},
		"{_}:types":  []string{"t"},
		"{t}:seq":    "1",
		"{t}:stats":  map[string]string{"work_time": "500"},
	}, "gone but for its work time")
}

// TestACompleteTwiceInOneCallRemovesOnce: complete.lua deletes a batch's
// removed jobs at its end, in one call; the same job completed twice in
// that batch is found by the second op as deleted (not found), as it was
// when each deletion was made at once.
func TestACompleteTwiceInOneCallRemovesOnce(t *testing.T) {
	t.Parallel()
	for _, bare := range []bool{false, true} {
		st := newScriptStore(t, redisstore.Config{})
		st.seed(activeJob(map[string]string{"roc": "1"}))
		o := service.StoreOp{ID: 1, Lease: "L", Type: "t", Bare: bare}
		res, err := st.Apply(ctx, 2500, core.OpComplete, []service.StoreOp{o, o})
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
		require.True(t, res[0].Removed)
		require.ErrorIs(t, res[1].Err, core.ErrNotFound, "bare %v", bare)
		st.requireKeys(keyspace{
			"{_}:blocks": map[string]string{"0": "t"},
			"{_}:types":  []string{"t"},
			"{t}:seq":    "1",
			"{t}:stats":  map[string]string{"work_time": "500"},
		}, fmt.Sprintf("bare %v: gone once, its work time counted once", bare))
	}
}

// TestFailRemovesARemoveOnFailJobOnlyForGood: a failed attempt with
// attempts left keeps the job (it retries); the last one deletes its hash,
// log, index entries and unique key, and Removed says so.
func TestFailRemovesARemoveOnFailJobOnlyForGood(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	seed := activeJob(map[string]string{"rof": "1", "unique_key": "u", "max_attempts": "2"}).
		with(keyspace{"{t}:log:1": []string{"working"}, "{t}:unique": map[string]string{"u": "1"}})
	st.seed(seed)
	res := apply(t, st, 2500, core.OpFail, service.StoreOp{ID: 1, Lease: "L", Type: "t", Error: "boom"})
	require.NoError(t, res.Err)
	require.False(t, res.Removed, "an attempt remains")
	require.Equal(t, core.StateInactive, res.Job.State)

	st = newScriptStore(t, redisstore.Config{})
	st.seed(seed)
	res = apply(t, st, 2500, core.OpFail, service.StoreOp{ID: 1, Lease: "L", Type: "t", Error: "boom", Final: true})
	require.NoError(t, res.Err)
	require.True(t, res.Removed)
	require.Equal(t, core.StateFailed, res.Job.State, "the reply is the job as it failed")
	require.True(t, res.Job.RemoveOnFail.AtOnce)
	st.requireKeys(keyspace{
		"{_}:blocks": map[string]string{"0": "t"},
		"{_}:types":  []string{"t"},
		"{t}:seq":    "1",
	}, "gone, with its log and unique key")
}

// TestFailWaitsTheBackoffCappedByMaxDelay: a failed attempt with attempts
// left waits its backoff, Kue's formula, never longer than core.MaxDelay
// (which Go hands the script), in delayed; with no backoff it is ready at
// once; the last attempt, or a final fail, fails the job for good.
func TestFailWaitsTheBackoffCappedByMaxDelay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		backoff  string
		attempts int // made before this one
		final    bool
		state    core.State
		wait     int64  // ms after now until it is due again
		delay    *int64 // the worker's retry delay; nil: the backoff
	}{
		{"no backoff retries at once", "", 0, false, core.StateInactive, 0, nil},
		{"fixed waits its delay", "fixed:1000", 1, false, core.StateDelayed, 1000, nil},
		{"exponential waits half the delay after the first", "exponential:1000", 0, false, core.StateDelayed, 500, nil},
		{"exponential doubles and more", "exponential:1000", 2, false, core.StateDelayed, 3500, nil},
		{"exponential is capped at MaxDelay", "exponential:1000", 100, false, core.StateDelayed, core.MaxDelay, nil},
		{"a delay of 0 never waits, however many attempts", "exponential:0", 5000, false, core.StateInactive, 0, nil},
		{"a fixed delay is capped too", "fixed:" + strconv.Itoa(core.MaxDelay+1), 0, false, core.StateDelayed, core.MaxDelay, nil},
		{"final fails for good", "fixed:1000", 0, true, core.StateFailed, 0, nil},
		{"the last attempt fails for good", "fixed:1000", 9999, false, core.StateFailed, 0, nil},
		{"a retry delay replaces the backoff", "exponential:1000", 2, false, core.StateDelayed, 250, new(int64(250))},
		{"a retry delay is used without a backoff", "", 0, false, core.StateDelayed, 7000, new(int64(7000))},
		{"a retry delay of 0 retries at once despite the backoff", "fixed:1000", 1, false, core.StateInactive, 0, new(int64(0))},
		{"a retry delay is capped at MaxDelay", "", 0, false, core.StateDelayed, core.MaxDelay, new(int64(core.MaxDelay + 1))},
		{"a negative retry delay (the service refuses it) retries at once", "fixed:1000", 0, false, core.StateInactive, 0, new(int64(-5))},
		{"a retry delay does not save the last attempt", "", 9999, false, core.StateFailed, 0, new(int64(250))},
		{"a retry delay does not undo final", "", 0, true, core.StateFailed, 0, new(int64(250))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := newScriptStore(t, redisstore.Config{})
			attempts := strconv.Itoa(tc.attempts)
			before := activeJob(map[string]string{"backoff": tc.backoff, "attempts": attempts, "max_attempts": "10000"})
			st.seed(before)
			res := apply(t, st, 2500, core.OpFail, service.StoreOp{ID: 1, Lease: "L", Type: "t", Error: "boom", Final: tc.final, Delay: tc.delay})
			require.NoError(t, res.Err)
			require.Equal(t, tc.state, res.Job.State)
			require.Equal(t, tc.attempts+1, res.Job.Attempts)
			require.Equal(t, "boom", res.Job.Error)
			changed := map[string]string{"state": string(tc.state), "attempts": strconv.Itoa(tc.attempts + 1), "error": "boom",
				"updated_at": "2500", "lease": "", "lease_until": "", "last_lease": "fail:L"}
			after := before.with(keyspace{"{t}:leases": nil, "{t}:errors:1": []string{
				`{"attempt":` + strconv.Itoa(tc.attempts+1) + `,"at":2500,"error":"boom"}`}})
			switch tc.state {
			case core.StateDelayed:
				at := strconv.FormatInt(2500+tc.wait, 10)
				require.Equal(t, 2500+tc.wait, res.Job.PromoteAt)
				changed["promote_at"] = at
				after["{t}:due"] = map[string]float64{"0000000000000000001": float64(2500 + tc.wait)}
			case core.StateInactive:
				changed["rmember"] = "0000000000000002:1"
				after["{t}:ready"] = map[string]float64{"0000000000000002:1": 0}
				after["{t}:seq"] = "2"
			case core.StateFailed:
				changed["failed_at"] = "2500"
				after["{t}:failed"] = map[string]float64{"1": 2500}
			}
			after["{t}:job:1"] = fields(before["{t}:job:1"].(map[string]string), changed)
			st.requireKeys(after, tc.name)
		})
	}
}

// TestFailTakesEachJobsOwnRetryDelay: in one call, each job's retry delay
// is its own, and a job without one waits its backoff.
func TestFailTakesEachJobsOwnRetryDelay(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	two := activeJob(map[string]string{"backoff": "fixed:1000", "max_attempts": "5"})
	two["{t}:jobs"] = map[string]float64{"1": 1, "2": 2}
	two["{t}:leases"] = map[string]float64{"1": 3000, "2": 3000}
	two["{t}:job:2"] = fields(two["{t}:job:1"].(map[string]string), map[string]string{"id": "2", "lease": "M"})
	st.seed(two)
	res, err := st.Apply(ctx, 2500, core.OpFail, []service.StoreOp{
		{ID: 1, Lease: "L", Type: "t", Error: "boom", Delay: new(int64(40))},
		{ID: 2, Lease: "M", Type: "t", Error: "bang"},
	})
	require.NoError(t, err)
	require.Len(t, res, 2)
	require.NoError(t, res[0].Err)
	require.NoError(t, res[1].Err)
	require.Equal(t, int64(2540), res[0].Job.PromoteAt, "job 1: its retry delay")
	require.Equal(t, int64(3500), res[1].Job.PromoteAt, "job 2: its backoff")
	require.Equal(t, "bang", res[1].Job.Error)
	st.requireKeys(two.with(keyspace{
		"{t}:leases": nil,
		"{t}:due":    map[string]float64{"0000000000000000001": 2540, "0000000000000000002": 3500},
		"{t}:job:1": fields(two["{t}:job:1"].(map[string]string), map[string]string{"state": "delayed", "promote_at": "2540",
			"attempts": "1", "error": "boom", "updated_at": "2500", "lease": "", "lease_until": "", "last_lease": "fail:L"}),
		"{t}:job:2": fields(two["{t}:job:2"].(map[string]string), map[string]string{"state": "delayed", "promote_at": "3500",
			"attempts": "1", "error": "bang", "updated_at": "2500", "lease": "", "lease_until": "", "last_lease": "fail:M"}),
		"{t}:errors:1": []string{`{"attempt":1,"at":2500,"error":"boom"}`},
		"{t}:errors:2": []string{`{"attempt":1,"at":2500,"error":"bang"}`},
	}), "both delayed, each by its own wait")
}

// TestTouchExtendsByTheLeaseTTL: by the ttl the lease was taken with, else
// the job's.
func TestTouchExtendsByTheLeaseTTL(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := activeJob(map[string]string{"lease_ttl": "400"})
	st.seed(before)
	res := apply(t, st, 2800, core.OpTouch, service.StoreOp{ID: 1, Lease: "L", Type: "t"})
	require.NoError(t, res.Err)
	require.Equal(t, int64(3200), res.Job.LeaseUntil)
	st.requireKeys(before.with(keyspace{
		"{t}:leases": map[string]float64{"1": 3200},
		"{t}:job:1":  fields(before["{t}:job:1"].(map[string]string), map[string]string{"lease_until": "3200"}),
	}), "extended by 400 ms")

	st.rdb.HDel(ctx, st.prefix+":{t}:job:1", "lease_ttl")
	res = apply(t, st, 2900, core.OpTouch, service.StoreOp{ID: 1, Lease: "L", Type: "t"})
	require.NoError(t, res.Err)
	require.Equal(t, int64(3900), res.Job.LeaseUntil, "the job's ttl, 1000 ms")
}

// TestReleaseRequeuesWithoutUsingAnAttempt: back at the end of ready.
func TestReleaseRequeuesWithoutUsingAnAttempt(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := activeJob(nil)
	st.seed(before)
	res := apply(t, st, 2500, core.OpRelease, service.StoreOp{ID: 1, Lease: "L", Type: "t"})
	require.NoError(t, res.Err)
	require.Equal(t, core.StateInactive, res.Job.State)
	require.Zero(t, res.Job.Attempts)
	st.requireKeys(before.with(keyspace{
		"{t}:leases": nil,
		"{t}:ready":  map[string]float64{"0000000000000002:1": 0},
		"{t}:seq":    "2",
		"{t}:job:1": fields(before["{t}:job:1"].(map[string]string), map[string]string{"state": "inactive",
			"rmember": "0000000000000002:1", "updated_at": "2500", "lease": "", "lease_until": "", "last_lease": "release:L"}),
	}), "ready again")
}

// TestRejoinDelaysWithoutUsingAnAttempt: due again after its delay.
func TestRejoinDelaysWithoutUsingAnAttempt(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := activeJob(nil)
	st.seed(before)
	res := apply(t, st, 2500, core.OpRejoin, service.StoreOp{ID: 1, Lease: "L", Type: "t", Delay: new(int64(700))})
	require.NoError(t, res.Err)
	require.Equal(t, core.StateDelayed, res.Job.State)
	require.Equal(t, int64(3200), res.Job.PromoteAt)
	st.requireKeys(before.with(keyspace{
		"{t}:leases": nil,
		"{t}:due":    map[string]float64{"0000000000000000001": 3200},
		"{t}:job:1": fields(before["{t}:job:1"].(map[string]string), map[string]string{"state": "delayed",
			"promote_at": "3200", "updated_at": "2500", "lease": "", "lease_until": "", "last_lease": "rejoin:L"}),
	}), "due in 700 ms")
}

// TestProgressStoresThePercent the service computed; the lease stays.
func TestProgressStoresThePercent(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := activeJob(nil)
	st.seed(before)
	res := apply(t, st, 2500, core.OpProgress, service.StoreOp{ID: 1, Lease: "L", Type: "t", Percent: 42})
	require.NoError(t, res.Err)
	require.Equal(t, 42, res.Job.Progress)
	st.requireKeys(before.with(keyspace{
		"{t}:job:1": fields(before["{t}:job:1"].(map[string]string), map[string]string{"progress": "42", "updated_at": "2500"}),
	}), "42%")
}

// TestRescueExpiredJudgesEachStall: of three leased jobs, one within its
// stall limit goes back to ready at the place it had (its rmember, ahead
// of jobs that entered ready after it), one past it is a failed attempt
// that waits its backoff, and one whose lease has not run out stays and is
// the next expiry.
func TestRescueExpiredJudgesEachStall(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	active := activeJob(nil)["{t}:job:1"].(map[string]string)
	job := func(id string, more map[string]string) map[string]string {
		return fields(active, fields(map[string]string{"id": id}, more))
	}
	before := keyspace{
		"{_}:blocks": map[string]string{"0": "t"},
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{"1": 1, "2": 2, "3": 3},
		"{t}:leases": map[string]float64{"1": 3000, "2": 3000, "3": 9000},
		"{t}:seq":    "3",
		"{t}:job:1":  job("1", nil),
		"{t}:job:2":  job("2", map[string]string{"stalls": "1", "backoff": "fixed:1000"}),
		"{t}:job:3":  job("3", nil),
	}
	st.seed(before)
	moved, next, err := st.Rescue(ctx, 3000, 10, 5)
	require.NoError(t, err)
	require.Equal(t, int64(9000), next)
	require.Len(t, moved, 2)
	require.Equal(t, core.StateInactive, moved[0].State)
	require.Equal(t, 1, moved[0].Stalls)
	require.Equal(t, core.StateDelayed, moved[1].State)
	require.Equal(t, "lease expired: ran past its ttl of 1000 ms", moved[1].Error)
	require.Equal(t, 2, moved[1].Stalls)
	require.Equal(t, 1, moved[1].StallLimit, "the job's own limit, not the node's 5")
	st.requireKeys(before.with(keyspace{
		"{t}:leases":   map[string]float64{"3": 9000},
		"{t}:ready":    map[string]float64{"0000000000000001:1": 0},
		"{t}:due":      map[string]float64{"0000000000000000002": 4000},
		"{t}:errors:2": []string{`{"attempt":1,"at":3000,"error":"lease expired: ran past its ttl of 1000 ms"}`},
		"{t}:job:1": job("1", map[string]string{"state": "inactive", "stalls": "1", "rmember": "0000000000000001:1",
			"updated_at": "3000", "lease": "", "lease_until": ""}),
		"{t}:job:2": job("2", map[string]string{"state": "delayed", "stalls": "2", "backoff": "fixed:1000", "attempts": "1",
			"error": "lease expired: ran past its ttl of 1000 ms", "promote_at": "4000", "updated_at": "3000",
			"lease": "", "lease_until": "", "last_lease": ""}),
	}), "one stall, one failed attempt, one still leased")
}
