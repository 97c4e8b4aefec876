package redisstore_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
)

// depsStore is a store whose settled jobs (OnSettled) are kept for the test.
type depsStore struct {
	*scriptStore
	mu      sync.Mutex
	settled []core.Job
}

func newDepsStore(t *testing.T) *depsStore {
	d := &depsStore{scriptStore: newScriptStore(t, redisstore.Config{})}
	d.OnSettled(func(jobs []core.Job) {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.settled = append(d.settled, jobs...)
	})
	return d
}

func (d *depsStore) create(t *testing.T, now int64, specs ...core.Spec) []core.Job {
	t.Helper()
	jobs, _, err := d.Create(context.Background(), now, specs)
	require.NoError(t, err)
	return jobs
}

// leaseAndComplete leases the one ready job of jobType, which must be id,
// and completes it with result: what Apply said of it.
func (d *depsStore) leaseAndComplete(t *testing.T, now int64, jobType string, id int64, result string) service.Applied {
	t.Helper()
	ctx := context.Background()
	leased, _, err := d.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{jobType}, Max: 10, Worker: "w", Token: "tok"})
	require.NoError(t, err)
	require.Len(t, leased, 1, "one job of %s ready", jobType)
	require.Equal(t, id, leased[0].ID)
	res, err := d.Apply(ctx, now, core.OpComplete, []service.StoreOp{{ID: id, Lease: "tok", Type: jobType, Result: json.RawMessage(result)}})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	return res[0]
}

func (d *depsStore) state(t *testing.T, id int64) core.State {
	t.Helper()
	j, err := d.Get(context.Background(), id)
	require.NoError(t, err)
	return j.State
}

func (d *depsStore) readyOf(t *testing.T, jobType string) int64 {
	t.Helper()
	n, err := d.Count(context.Background(), core.StateInactive, jobType)
	require.NoError(t, err)
	return n
}

// TestAJobWaitsForADependencyOfItsTypeAndIsReleasedByItsCompletion: the
// dependent is created waiting, is not leased, and the complete script of
// its dependency moves it to inactive.
func TestAJobWaitsForADependencyOfItsTypeAndIsReleasedByItsCompletion(t *testing.T) {
	t.Parallel()
	d := newDepsStore(t)
	parent := d.create(t, 1000, core.Spec{Type: "a", MaxAttempts: 1, TTL: 1000})[0]
	child := d.create(t, 1001, core.Spec{Type: "a", MaxAttempts: 1, TTL: 1000, DependsOn: []int64{parent.ID}})[0]
	require.Equal(t, core.StateWaiting, child.State)
	require.Equal(t, core.StateWaiting, d.state(t, child.ID))
	n, err := d.Count(context.Background(), core.StateWaiting, "a")
	require.NoError(t, err)
	require.Equal(t, int64(1), n)

	applied := d.leaseAndComplete(t, 1002, "a", parent.ID, `{"x":1}`)
	got, err := d.Get(context.Background(), child.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, got.State)
	require.Equal(t, []int64{parent.ID}, got.DependsOn)
	require.Equal(t, 0, got.Pending)
	require.Len(t, applied.Settled, 1, "the complete says whom it released, for their events")
	require.Equal(t, child.ID, applied.Settled[0].ID)
	require.Empty(t, d.settled)
	d.leaseAndComplete(t, 1003, "a", child.ID, `1`)
}

// TestAJobOfAnotherTypeIsReleasedByAHandOver: a dependency of another type
// (another slot on Redis Cluster) releases its dependent through the
// hand-over the store finishes right after the complete.
func TestAJobOfAnotherTypeIsReleasedByAHandOver(t *testing.T) {
	t.Parallel()
	d := newDepsStore(t)
	parent := d.create(t, 1000, core.Spec{Type: "a", MaxAttempts: 1, TTL: 1000})[0]
	child := d.create(t, 1001, core.Spec{Type: "b", MaxAttempts: 1, TTL: 1000, DependsOn: []int64{parent.ID}})[0]
	require.Equal(t, core.StateWaiting, child.State)
	require.Equal(t, int64(0), d.readyOf(t, "b"))
	applied := d.leaseAndComplete(t, 1002, "a", parent.ID, `2`)
	require.Equal(t, core.StateInactive, d.state(t, child.ID))
	require.Len(t, applied.Settled, 1, "released by the hand-over right after")
	require.Equal(t, int64(0), d.rdb.ZCard(context.Background(), d.prefix+":{a}:handover").Val(), "nothing left to hand over")
	require.Equal(t, int64(0), d.rdb.ZCard(context.Background(), d.prefix+":{b}:handover").Val())
}

// TestAJobWhoseDependenciesAreCompleteIsCreatedAsUsual.
func TestAJobWhoseDependenciesAreCompleteIsCreatedAsUsual(t *testing.T) {
	t.Parallel()
	d := newDepsStore(t)
	a := d.create(t, 1000, core.Spec{Type: "a", MaxAttempts: 1, TTL: 1000})[0]
	b := d.create(t, 1000, core.Spec{Type: "b", MaxAttempts: 1, TTL: 1000})[0]
	d.leaseAndComplete(t, 1001, "a", a.ID, `1`)
	d.leaseAndComplete(t, 1001, "b", b.ID, `1`)
	for _, typ := range []string{"a", "b"} {
		j := d.create(t, 1002, core.Spec{Type: typ, MaxAttempts: 1, TTL: 1000, DependsOn: []int64{a.ID, b.ID}})[0]
		require.Equal(t, core.StateInactive, j.State, typ)
		require.Equal(t, core.StateInactive, d.state(t, j.ID), typ)
	}
}

// TestAnUnknownDependencyIsInvalidAndStoresNothing.
func TestAnUnknownDependencyIsInvalidAndStoresNothing(t *testing.T) {
	t.Parallel()
	d := newDepsStore(t)
	a := d.create(t, 1000, core.Spec{Type: "a", MaxAttempts: 1, TTL: 1000})[0]
	_, _, err := d.Create(context.Background(), 1001, []core.Spec{{Type: "a", MaxAttempts: 1, TTL: 1000, DependsOn: []int64{a.ID, a.ID + 5000}}})
	require.ErrorIs(t, err, core.ErrInvalid)
	require.ErrorContains(t, err, "depends_on")
	n, err := d.Count(context.Background(), "", "a")
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "nothing stored")
}

// TestACrashBetweenTheTwoStepsIsFinishedByTheSweep: a hand-over recorded
// by a complete whose second step never ran (core died) is finished by
// HandOver, the leader's sweep; running the second step again changes
// nothing.
func TestACrashBetweenTheTwoStepsIsFinishedByTheSweep(t *testing.T) {
	t.Parallel()
	d := newDepsStore(t)
	ctx := context.Background()
	parent := d.create(t, 1000, core.Spec{Type: "a", MaxAttempts: 1, TTL: 1000})[0]
	child := d.create(t, 1001, core.Spec{Type: "b", MaxAttempts: 1, TTL: 1000, DependsOn: []int64{parent.ID}})[0]
	// step one alone: the complete script, as core would run it, but not
	// what core does after it
	leased, _, err := d.Lease(ctx, &service.LeaseParams{Now: 1002, Types: []string{"a"}, Max: 1, Worker: "w", Token: "tok"})
	require.NoError(t, err)
	require.Len(t, leased, 1)
	entry := redisstore.CompleteStepOne(ctx, t, d.Store, "a", parent.ID, "tok", 1003)
	require.Equal(t, "s:b:"+itoa(child.ID)+":"+itoa(parent.ID)+":c", entry)
	require.Equal(t, core.StateWaiting, d.state(t, child.ID), "not released before the second step")

	n, err := d.HandOver(ctx, 1004, 1004)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, core.StateInactive, d.state(t, child.ID))
	require.Len(t, d.settled, 1)

	// the second step again: nothing changes
	before := d.readyOf(t, "b")
	d.rdb.ZAdd(ctx, d.prefix+":{a}:handover", redisZ(1003, entry))
	n, err = d.HandOver(ctx, 1005, 1005)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, before, d.readyOf(t, "b"))
	require.Equal(t, core.StateInactive, d.state(t, child.ID))
	require.Len(t, d.settled, 1, "nothing moved twice")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }

// TestDepSettleActsOnceAndAgainChangesNothing: dep_settle on a waiting job
// of two dependencies takes the first off its pending set; run again it
// changes no key; the second releases the job to ready, and again changes
// nothing. A failure under the default rule fails the job, naming the
// dependency, and records a hand-over for each of its own dependents.
func TestDepSettleActsOnceAndAgainChangesNothing(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	ctx := context.Background()
	waiting := keyspace{
		"{_}:blocks":    map[string]string{"0": "t"},
		"{_}:types":     []string{"t"},
		"{t}:jobs":      map[string]float64{"1": 1},
		"{t}:seq":       "1",
		"{t}:waiting":   map[string]float64{"1": 1},
		"{t}:pending:1": []string{"5", "6"},
		"{t}:job:1": fields(jobHash(nil), map[string]string{"state": "waiting", "rmember": "-", "pending": "2",
			"depends_on": "5,6"}),
	}
	st.seed(waiting)
	settle := func(dep int64, outcome string) []core.Job {
		t.Helper()
		jobs, _, err := redisstore.DepSettle(ctx, st.Store, "t", 5000, 1, dep, outcome)
		require.NoError(t, err)
		return jobs
	}
	require.Empty(t, settle(5, "c"))
	one := waiting.with(keyspace{"{t}:pending:1": []string{"6"},
		"{t}:job:1": fields(waiting["{t}:job:1"].(map[string]string), map[string]string{"pending": "1"})})
	st.requireKeys(one, "the first dependency is off the pending set")
	require.Empty(t, settle(5, "c"))
	st.requireKeys(one, "the same hand-over again changes nothing")

	released := settle(6, "c")
	require.Len(t, released, 1)
	require.Equal(t, core.StateInactive, released[0].State)
	ready := one.with(keyspace{"{t}:pending:1": nil, "{t}:waiting": nil,
		"{t}:seq":   "2",
		"{t}:ready": map[string]float64{"0000000000000002:1": 0},
		"{t}:job:1": fields(one["{t}:job:1"].(map[string]string), map[string]string{"state": "inactive",
			"rmember": "0000000000000002:1", "pending": "0", "promote_at": "5000", "updated_at": "5000"})})
	st.requireKeys(ready, "released to ready")
	require.Empty(t, settle(6, "c"))
	require.Empty(t, settle(5, "f"), "a failure after the release changes nothing either")
	st.requireKeys(ready, "again: nothing")

	// job 2 waits for 7; job 3 (of type u) waits for job 2
	st.seed(keyspace{
		"{_}:blocks":       map[string]string{"0": "t"},
		"{t}:waiting":      map[string]float64{"2": 2},
		"{t}:pending:2":    []string{"7"},
		"{t}:dependents:2": []string{"u:3"},
		"{t}:job:2": fields(jobHash(nil), map[string]string{"id": "2", "state": "waiting", "rmember": "-",
			"pending": "1", "dependents": "1"}),
	})
	jobs, handed, err := redisstore.DepSettle(ctx, st.Store, "t", 6000, 2, 7, "f")
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.Equal(t, core.StateFailed, jobs[0].State)
	require.Contains(t, jobs[0].Error, "dependency 7 failed")
	require.Equal(t, int64(1), handed)
	ks := st.dump()
	require.Equal(t, map[string]float64{"2": 6000}, ks["{t}:failed"])
	require.Equal(t, map[string]float64{"s:u:3:2:f": 6000}, ks["{t}:handover"], "its dependent is told, by hand-over")
	require.NotContains(t, ks, "{t}:pending:2")
}

// TestDepLinkEntersOnceAndHandoverDoneForgets: dep_link enters a dependent
// of another type among an unfinished job's dependents (and flags the
// type), again changes nothing, and leaves a finished or missing job as it
// is, answering its state; handover_done forgets the hand-overs it is
// given.
func TestDepLinkEntersOnceAndHandoverDoneForgets(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	ctx := context.Background()
	base := keyspace{
		"{_}:blocks":   map[string]string{"0": "u"},
		"{_}:types":    []string{"u"},
		"{u}:jobs":     map[string]float64{"5": 5, "6": 6},
		"{u}:seq":      "1",
		"{u}:ready":    map[string]float64{"0000000000000001:5": 0},
		"{u}:job:5":    fields(jobHash(nil), map[string]string{"id": "5", "type": "u", "rmember": "0000000000000001:5"}),
		"{u}:complete": map[string]float64{"6": 3000},
		"{u}:job:6":    fields(jobHash(nil), map[string]string{"id": "6", "type": "u", "state": "complete", "rmember": "-"}),
		"{u}:handover": map[string]float64{"s:t:1:5:c": 10, "s:t:2:5:c": 11},
	}
	st.seed(base)
	linked := base.with(keyspace{
		"{u}:dependents:5": []string{"t:1"},
		"{u}:job:5":        fields(base["{u}:job:5"].(map[string]string), map[string]string{"dependents": "1"}),
		"{u}:stats":        map[string]string{"dependents": "1"},
	})
	for range 2 {
		state, err := redisstore.DepLink(ctx, st.Store, "u", 5, "t:1")
		require.NoError(t, err)
		require.Equal(t, core.StateInactive, state)
		st.requireKeys(linked, "entered once, however often linked")
	}
	state, err := redisstore.DepLink(ctx, st.Store, "u", 6, "t:1")
	require.NoError(t, err)
	require.Equal(t, core.StateComplete, state)
	state, err = redisstore.DepLink(ctx, st.Store, "u", 9, "t:1")
	require.NoError(t, err)
	require.Equal(t, core.State(""), state, "gone")
	st.requireKeys(linked, "a finished or missing job is not linked")

	require.NoError(t, redisstore.HandoverDone(ctx, st.Store, "u", "s:t:1:5:c", "s:t:9:9:c"))
	st.requireKeys(linked.with(keyspace{"{u}:handover": map[string]float64{"s:t:2:5:c": 11}}), "the one given is forgotten")
}

// TestDepSettleOfAJobOfOneDependency: a waiting job of one dependency has
// no pending set (its depends_on and pending count say it all); dep_settle
// releases it when that dependency completes, and only then: another id
// changes nothing, and once released, again (or a failure after: a
// dependency retried by hand) changes nothing either. A failure applies
// its rule: fail (the default), cancel, or ignore (released as if done).
func TestDepSettleOfAJobOfOneDependency(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	ctx := context.Background()
	waiting := keyspace{
		"{_}:blocks":  map[string]string{"0": "t"},
		"{_}:types":   []string{"t"},
		"{t}:jobs":    map[string]float64{"1": 1},
		"{t}:seq":     "1",
		"{t}:waiting": map[string]float64{"1": 1},
		"{t}:job:1": fields(jobHash(nil), map[string]string{"state": "waiting", "rmember": "-", "pending": "1",
			"depends_on": "5"}),
	}
	st.seed(waiting)
	settle := func(id, dep int64, outcome string) []core.Job {
		t.Helper()
		jobs, _, err := redisstore.DepSettle(ctx, st.Store, "t", 5000, id, dep, outcome)
		require.NoError(t, err)
		return jobs
	}
	require.Empty(t, settle(1, 6, "c"))
	require.Empty(t, settle(1, 6, "f"))
	st.requireKeys(waiting, "not its dependency: nothing")

	released := settle(1, 5, "c")
	require.Len(t, released, 1)
	require.Equal(t, core.StateInactive, released[0].State)
	ready := waiting.with(keyspace{"{t}:waiting": nil,
		"{t}:seq":   "2",
		"{t}:ready": map[string]float64{"0000000000000002:1": 0},
		"{t}:job:1": fields(waiting["{t}:job:1"].(map[string]string), map[string]string{"state": "inactive",
			"rmember": "0000000000000002:1", "pending": "0", "promote_at": "5000", "updated_at": "5000"})})
	st.requireKeys(ready, "released to ready")
	require.Empty(t, settle(1, 5, "c"))
	require.Empty(t, settle(1, 5, "f"), "a failure after the release changes nothing either")
	st.requireKeys(ready, "again: nothing")

	// jobs 2, 3 and 4 wait for 7, each with its rule
	one := func(id, rule string) map[string]string {
		return fields(jobHash(nil), map[string]string{"id": id, "state": "waiting", "rmember": "-", "pending": "1",
			"depends_on": "7", "on_dep_fail": rule})
	}
	st.seed(keyspace{
		"{t}:waiting": map[string]float64{"2": 2, "3": 3, "4": 4},
		"{t}:job:2":   one("2", "-"),
		"{t}:job:3":   one("3", string(core.DepCancel)),
		"{t}:job:4":   one("4", string(core.DepIgnore)),
	})
	for id, want := range map[int64]core.State{2: core.StateFailed, 3: core.StateCancelled, 4: core.StateInactive} {
		jobs := settle(id, 7, "f")
		require.Len(t, jobs, 1, "job %d", id)
		require.Equal(t, want, jobs[0].State, "job %d", id)
		if want != core.StateInactive {
			require.Contains(t, jobs[0].Error, "dependency 7 failed")
		}
		require.Empty(t, settle(id, 7, "f"), "job %d: again, nothing", id)
		require.Empty(t, settle(id, 7, "c"), "job %d: the dependency retried and complete: nothing", id)
	}
	ks := st.dump()
	require.Equal(t, map[string]float64{"2": 5000}, ks["{t}:failed"])
	require.Equal(t, map[string]float64{"3": 5000}, ks["{t}:cancelled"])
	require.NotContains(t, ks, "{t}:waiting")
	require.Equal(t, "0", ks["{t}:job:2"].(map[string]string)["pending"])
}

// TestAJobOfOneDependencyWaitsWithoutAPendingSet: created waiting for one
// job, a job has no pending set, yet its pending count and its pending
// dependency (Pending, which explain tells) are those a set would give; a
// job of two keeps its set. The create run again (the same ids: a retry
// after a stall) changes no key. A waiting job cancelled by hand stays
// cancelled when its dependency completes; the other is released.
func TestAJobOfOneDependencyWaitsWithoutAPendingSet(t *testing.T) {
	t.Parallel()
	newStore, rdb, prefix := freshStores(t)
	st := &scriptStore{Store: newStore(), t: t, rdb: rdb, prefix: prefix}
	ctx := context.Background()
	parents, _, err := st.Create(ctx, 1000, []core.Spec{{Type: "a", MaxAttempts: 1, TTL: time.Second}, {Type: "a", MaxAttempts: 1, TTL: time.Second}})
	require.NoError(t, err)
	p, q := parents[0].ID, parents[1].ID
	children := []core.Spec{
		{Type: "a", MaxAttempts: 1, TTL: time.Second, DependsOn: []int64{p}},
		{Type: "a", MaxAttempts: 1, TTL: time.Second, DependsOn: []int64{p, q}},
		{Type: "a", MaxAttempts: 1, TTL: time.Second, DependsOn: []int64{p}},
	}
	ids := rdb.Get(ctx, prefix+":{_}:ids").Val() // blocks reserved: a store of its own takes the next
	jobs, _, err := newStore().Create(ctx, 1001, children)
	require.NoError(t, err)
	one, two, cancelled := jobs[0].ID, jobs[1].ID, jobs[2].ID
	ks := st.dump()
	require.NotContains(t, ks, "{a}:pending:"+itoa(one), "one dependency: no set")
	require.Equal(t, []string{itoa(p), itoa(q)}, ks["{a}:pending:"+itoa(two)])
	for id, want := range map[int64][]int64{one: {p}, two: {p, q}} {
		got, err := st.Get(ctx, id)
		require.NoError(t, err)
		require.Equal(t, core.StateWaiting, got.State)
		require.Equal(t, len(want), got.Pending)
		pending, err := st.Pending(ctx, id)
		require.NoError(t, err)
		require.ElementsMatch(t, want, pending)
	}
	require.NotContains(t, ks["{a}:job:"+itoa(one)], "deps_check", "what the script checks is not stored")

	require.NoError(t, rdb.Set(ctx, prefix+":{_}:ids", ids, 0).Err())
	again, existing, err := newStore().Create(ctx, 2000, children)
	require.NoError(t, err)
	require.Equal(t, []int64{one, two, cancelled}, []int64{again[0].ID, again[1].ID, again[2].ID}, "the same ids, as a retry has")
	require.Equal(t, []bool{false, false, false}, existing)
	st.requireKeys(ks, "the create run again changes nothing")

	_, changed, err := st.Cancel(ctx, 2001, cancelled)
	require.NoError(t, err)
	require.True(t, changed)
	leased, _, err := st.Lease(ctx, &service.LeaseParams{Now: 2002, Types: []string{"a"}, Max: 1, Worker: "w", Token: "tok"})
	require.NoError(t, err)
	require.Len(t, leased, 1)
	require.Equal(t, p, leased[0].ID)
	res, err := st.Apply(ctx, 2003, core.OpComplete, []service.StoreOp{{ID: p, Lease: "tok", Type: "a"}})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	require.Len(t, res[0].Settled, 1, "the one of one dependency, released")
	require.Equal(t, one, res[0].Settled[0].ID)
	for id, want := range map[int64]core.State{one: core.StateInactive, two: core.StateWaiting, cancelled: core.StateCancelled} {
		got, err := st.Get(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, got.State, "job %d", id)
	}
	pending, err := st.Pending(ctx, one)
	require.NoError(t, err)
	require.Empty(t, pending, "released: waits for nothing")
	pending, err = st.Pending(ctx, two)
	require.NoError(t, err)
	require.Equal(t, []int64{q}, pending)
}

// TestACreateLinksEachTypeInOneHandOver: a create's links to the jobs of
// another type are one hand-over per type, in the dependents' slot, which
// the sweep finishes (a crash right after the create) in one dep_link per
// type: a fan-out's root enters all its dependents of the other type at
// once and counts them, each dependency of a fan-in its one. Run again, the
// links change nothing.
func TestACreateLinksEachTypeInOneHandOver(t *testing.T) {
	t.Parallel()
	d := newDepsStore(t)
	ctx := context.Background()
	// a root of type a, three jobs of type b that wait for it, a sink of
	// type a that waits for those three
	specs := []core.Spec{{Type: "a", MaxAttempts: 1, TTL: time.Second}}
	sink := core.Spec{Type: "a", MaxAttempts: 1, TTL: time.Second}
	for i := 1; i <= 3; i++ {
		specs = append(specs, core.Spec{Type: "b", MaxAttempts: 1, TTL: time.Second, DependsOnRefs: []int{0}})
		sink.DependsOnRefs = append(sink.DependsOnRefs, i)
	}
	jobs, err := redisstore.CreateStepOne(ctx, d.Store, 1000, append(specs, sink))
	require.NoError(t, err)
	root, b1, b2, b3, last := itoa(jobs[0].ID), itoa(jobs[1].ID), itoa(jobs[2].ID), itoa(jobs[3].ID), itoa(jobs[4].ID)
	ks := d.dump()
	require.Equal(t, map[string]float64{"l:a:" + root + ":" + b1 + "," + root + ":" + b2 + "," + root + ":" + b3: 1000},
		ks["{b}:handover"], "the three jobs of b wait for the root: one record")
	require.Equal(t, map[string]float64{"l:b:" + b1 + ":" + last + "," + b2 + ":" + last + "," + b3 + ":" + last: 1000},
		ks["{a}:handover"], "the sink waits for the three: one record")

	n, err := d.HandOver(ctx, 1001, 1001)
	require.NoError(t, err)
	require.Equal(t, 2, n, "two hand-overs")
	linked := d.dump()
	require.Equal(t, []string{"b:" + b1, "b:" + b2, "b:" + b3}, linked["{a}:dependents:"+root])
	require.Equal(t, "3", linked["{a}:job:"+root].(map[string]string)["dependents"])
	for _, b := range []string{b1, b2, b3} {
		require.Equal(t, []string{"a:" + last}, linked["{b}:dependents:"+b])
		require.Equal(t, "1", linked["{b}:job:"+b].(map[string]string)["dependents"])
		require.Equal(t, "waiting", linked["{b}:job:"+b].(map[string]string)["state"])
	}
	require.Equal(t, map[string]string{"dependents": "1"}, linked["{b}:stats"], "complete reads dependents")
	require.NotContains(t, linked, "{a}:handover")
	require.NotContains(t, linked, "{b}:handover")

	// the same records again, as a sweep that died before forgetting them
	// leaves them
	for typ, m := range map[string]map[string]float64{"a": ks["{a}:handover"].(map[string]float64), "b": ks["{b}:handover"].(map[string]float64)} {
		for member, score := range m {
			require.NoError(t, d.rdb.ZAdd(ctx, d.prefix+":{"+typ+"}:handover", redisZ(score, member)).Err())
		}
	}
	n, err = d.HandOver(ctx, 1002, 1002)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	d.requireKeys(linked, "linked again: nothing changes")

	// the flow runs: the root releases the three, the three the sink
	d.leaseAndComplete(t, 1003, "a", jobs[0].ID, `1`)
	leased, _, err := d.Lease(ctx, &service.LeaseParams{Now: 1004, Types: []string{"b"}, Max: 10, Worker: "w", Token: "tok"})
	require.NoError(t, err)
	require.Len(t, leased, 3, "the three released by the root")
	ops := make([]service.StoreOp, len(leased))
	for i, j := range leased {
		ops[i] = service.StoreOp{ID: j.ID, Lease: "tok", Type: "b", Result: json.RawMessage(`1`)}
	}
	_, err = d.Apply(ctx, 1005, core.OpComplete, ops)
	require.NoError(t, err)
	d.leaseAndComplete(t, 1006, "a", jobs[4].ID, `1`)
}

// TestDepLinkEntersManyDependentsOfOneDependency: more dependents of one
// dependency than one SADD of dep_link takes from ARGV (Lua's unpack) are
// entered in parts, and counted once each.
func TestDepLinkEntersManyDependentsOfOneDependency(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	ctx := context.Background()
	st.seed(keyspace{"{u}:job:5": fields(jobHash(nil), map[string]string{"id": "5", "type": "u"})})
	members := make([]string, 9000)
	for i := range members {
		members[i] = "t:" + strconv.Itoa(10+i)
	}
	state, err := redisstore.DepLink(ctx, st.Store, "u", 5, members...)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, state)
	require.Equal(t, int64(9000), st.rdb.SCard(ctx, st.prefix+":{u}:dependents:5").Val())
	require.Equal(t, "9000", st.rdb.HGet(ctx, st.prefix+":{u}:job:5", "dependents").Val())
}
