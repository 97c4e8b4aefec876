package redisstore_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
)

// groupSpecs are n specs of jobType in group, ttl 10 s each.
func groupSpecs(jobType, group string, n int) []core.Spec {
	out := make([]core.Spec, n)
	for i := range out {
		out[i] = core.Spec{Type: jobType, MaxAttempts: 1, TTL: 10_000 * time.Millisecond, Group: group}
	}
	return out
}

func countGroups(jobs []core.Job) map[string]int {
	by := map[string]int{}
	for _, j := range jobs {
		by[j.Group]++
	}
	return by
}

// TestLeaseHeadHonoursGroupConcurrency (lease_head.lua, group_limit.lua):
// with group_concurrency 1, 3 groups of 5 jobs and a lease asking for 10
// gets one job per group and hears it was held back; a completion lets
// that group's next job be leased, and only that; a release, a failure
// and a cancel free a slot too. Jobs without a group are not held.
func TestLeaseHeadHonoursGroupConcurrency(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "t", GroupConcurrency: 1}))
	for _, g := range []string{"a", "b", "c"} {
		_, _, err := st.Create(ctx, 1000, groupSpecs("t", g, 5))
		require.NoError(t, err)
	}
	held := heldBack{}
	lease := func(now int64, token string) []core.Job {
		t.Helper()
		jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"t"}, Max: 10, Worker: "w", Token: token, OnLimited: held.note})
		require.NoError(t, err)
		return jobs
	}
	first := lease(1001, "A")
	require.Equal(t, map[string]int{"a": 1, "b": 1, "c": 1}, countGroups(first))
	require.Equal(t, heldBack{"t": 0}, held, "held back by the groups' concurrency: no time to wait for")
	require.Empty(t, lease(1002, "B"), "every group is at its limit")

	byGroup := map[string]core.Job{}
	for _, j := range first {
		byGroup[j.Group] = j
	}
	_, err := st.Apply(ctx, 1003, core.OpComplete, []service.StoreOp{{ID: byGroup["a"].ID, Lease: "A", Type: "t"}})
	require.NoError(t, err)
	next := lease(1004, "C")
	require.Equal(t, map[string]int{"a": 1}, countGroups(next), "a's slot is free, b's and c's are not")
	require.Equal(t, byGroup["a"].ID+1, next[0].ID, "a's next job, in order")

	_, err = st.Apply(ctx, 1005, core.OpRelease, []service.StoreOp{{ID: byGroup["b"].ID, Lease: "A", Type: "t"}})
	require.NoError(t, err)
	_, err = st.Apply(ctx, 1005, core.OpFail, []service.StoreOp{{ID: byGroup["c"].ID, Lease: "A", Type: "t", Error: "boom"}})
	require.NoError(t, err)
	_, _, err = st.Cancel(ctx, 1005, next[0].ID)
	require.NoError(t, err)
	again := lease(1006, "D")
	require.Equal(t, map[string]int{"a": 1, "b": 1, "c": 1}, countGroups(again))

	plain := createN(t, st, 1007, "t", 3)
	got := lease(1008, "E")
	require.Len(t, got, 3, "jobs without a group are not held")
	require.Equal(t, plain[0].ID, got[0].ID)
}

// TestLeaseHonoursGroupRate (lease_head.lua and lease.lua): with a group
// rate of 2 per 1000 ms, leases at many times never start more than 2 jobs
// of one group in any window of 1000 ms (checked on the recorded start
// times), hear when a group's next start may be, and other groups and
// other types go on meanwhile.
func TestLeaseHonoursGroupRate(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "t", GroupRate: &core.Rate{Limit: 2, Per: time.Second}}))
	for _, g := range []string{"a", "b"} {
		_, _, err := st.Create(ctx, 900, groupSpecs("t", g, 8))
		require.NoError(t, err)
	}
	createN(t, st, 900, "u", 4)
	held := heldBack{}
	jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: 1000, Types: []string{"t"}, Max: 10, Worker: "w", Token: "A", OnLimited: held.note})
	require.NoError(t, err)
	require.Equal(t, map[string]int{"a": 2, "b": 2}, countGroups(jobs))
	require.Equal(t, heldBack{"t": 2000}, held, "the next start when the first leaves the window")

	starts := map[string][]int64{}
	for _, j := range jobs {
		starts[j.Group] = append(starts[j.Group], 1000)
	}
	for i, now := range []int64{1200, 1999, 2000, 2300, 2999, 3000, 3500, 4100} {
		types := []string{"t"}
		if i%2 == 1 {
			types = []string{"t", "u"} // lease.lua
		}
		got, _, err := st.Lease(ctx, &service.LeaseParams{Now: now, Types: types, Max: 3, Worker: "w", Token: fmt.Sprint("L", i)})
		require.NoError(t, err)
		for _, j := range got {
			if j.Type == "t" {
				starts[j.Group] = append(starts[j.Group], now)
			}
		}
	}
	for g, at := range starts {
		sort.Slice(at, func(i, j int) bool { return at[i] < at[j] })
		for i := 2; i < len(at); i++ {
			require.GreaterOrEqual(t, at[i]-at[i-2], int64(1000), "group %s: 3 starts within 1000 ms: %v", g, at)
		}
		require.GreaterOrEqual(t, len(at), 6, "group %s went on starting: %v", g, at)
	}
}

// TestAThousandGroupsKeepWorking: with group_concurrency 1 and 1000
// groups of 2 jobs, leases of 100 take 1000 jobs, one per group, then
// none; completing them all lets the other 1000 be leased.
func TestAThousandGroupsKeepWorking(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "t", GroupConcurrency: 1}))
	var specs []core.Spec
	for round := 0; round < 2; round++ {
		for g := 0; g < 1000; g++ {
			specs = append(specs, groupSpecs("t", fmt.Sprint("g", g), 1)...)
		}
	}
	_, _, err := st.Create(ctx, 1000, specs)
	require.NoError(t, err)
	leaseAll := func(now int64, token string) []core.Job {
		var all []core.Job
		for i := 0; ; i++ {
			got, _, err := st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"t"}, Max: 100, Worker: "w", Token: fmt.Sprint(token, i)})
			require.NoError(t, err)
			if len(got) == 0 {
				return all
			}
			all = append(all, got...)
		}
	}
	first := leaseAll(1001, "A")
	require.Len(t, first, 1000)
	require.Len(t, countGroups(first), 1000, "one job per group")
	ops := make([]service.StoreOp, len(first))
	for i, j := range first {
		ops[i] = service.StoreOp{ID: j.ID, Lease: j.Lease, Type: "t"}
	}
	_, err = st.Apply(ctx, 1002, core.OpComplete, ops)
	require.NoError(t, err)
	second := leaseAll(1003, "B")
	require.Len(t, second, 1000)
	require.Len(t, countGroups(second), 1000)
}

// TestAParkedJobLeavesAndRanks: a job its group's limit parked counts as
// inactive; it can be cancelled (it leaves the parked set, the count of
// parked and of inactive), and a
// change of its priority applies once it is back; dropping the group
// limit brings every parked job back at the next lease.
func TestAParkedJobLeavesAndRanks(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "t", GroupConcurrency: 1}))
	jobs, _, err := st.Create(ctx, 1000, groupSpecs("t", "a", 4))
	require.NoError(t, err)
	got, _, err := st.Lease(ctx, &service.LeaseParams{Now: 1001, Types: []string{"t"}, Max: 4, Worker: "w", Token: "A"})
	require.NoError(t, err)
	require.Len(t, got, 1)
	parked := func() string {
		return st.rdb.HGet(ctx, st.prefix+":{t}:stats", "parked").Val()
	}
	require.Equal(t, "3", parked())
	inactive := func() int64 {
		n, err := st.Count(ctx, core.StateInactive, "t")
		require.NoError(t, err)
		return n
	}
	require.Equal(t, int64(3), inactive(), "a parked job counts as inactive")
	_, _, err = st.Cancel(ctx, 1002, jobs[1].ID)
	require.NoError(t, err)
	require.Equal(t, "2", parked())
	require.Equal(t, int64(2), inactive())
	_, err = st.SetPriority(ctx, 1002, jobs[3].ID, core.PriorityHigh)
	require.NoError(t, err)

	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "t"}))
	got, _, err = st.Lease(ctx, &service.LeaseParams{Now: 1003, Types: []string{"t"}, Max: 4, Worker: "w", Token: "B"})
	require.NoError(t, err)
	require.Len(t, got, 2, "the limit is gone: both parked jobs are back")
	require.Equal(t, jobs[3].ID, got[0].ID, "the high one first")
	require.Equal(t, "0", parked())
}

// TestGroupWakeTakesParkedJobsBack (group_wake.lua): a lease of several
// types reaches a type whose ready jobs are all parked: a completion in
// the group, or the end of its rate's window, brings the group's next job
// back, and the lease takes it.
func TestGroupWakeTakesParkedJobsBack(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "c", GroupConcurrency: 1}))
	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "r", GroupRate: &core.Rate{Limit: 1, Per: time.Second}}))
	for _, jobType := range []string{"c", "r"} {
		_, _, err := st.Create(ctx, 1000, groupSpecs(jobType, "g", 3))
		require.NoError(t, err)
	}
	lease := func(now int64, token string) []core.Job {
		t.Helper()
		jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"c", "r"}, Max: 5, Worker: "w", Token: token})
		require.NoError(t, err)
		return jobs
	}
	first := lease(1001, "A")
	require.Len(t, first, 2, "one of each type's group")
	require.Empty(t, lease(1002, "B"), "the rest are parked, or are when met")
	require.Equal(t, int64(0), st.rdb.ZCard(ctx, st.prefix+":{c}:ready").Val(), "c's other jobs are parked")
	for _, j := range first {
		if j.Type == "c" {
			_, err := st.Apply(ctx, 1003, core.OpComplete, []service.StoreOp{{ID: j.ID, Lease: "A", Type: "c"}})
			require.NoError(t, err)
		}
	}
	got := lease(1004, "C")
	require.Len(t, got, 1)
	require.Equal(t, "c", got[0].Type, "the completion freed c's group")
	got = lease(2001, "D")
	require.Len(t, got, 1)
	require.Equal(t, "r", got[0].Type, "r's group's window moved on")
}

// TestAgingReranksParkedJobs (aging_rerank.lua): a type_set that gives a
// type aging re-scores its inactive jobs parked by their group's limit
// too, so they come back to ready ranked by the new aging, as set_priority
// re-scores them.
func TestAgingReranksParkedJobs(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "t", GroupConcurrency: 1}))
	_, _, err := st.Create(ctx, 1000, groupSpecs("t", "a", 3))
	require.NoError(t, err)
	got, _, err := st.Lease(ctx, &service.LeaseParams{Now: 1001, Types: []string{"t"}, Max: 3, Worker: "w", Token: "A"})
	require.NoError(t, err)
	require.Len(t, got, 1)
	parked := st.prefix + ":{t}:parked:a"
	require.Equal(t, int64(2), st.rdb.ZCard(ctx, parked).Val(), "two parked")

	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "t", GroupConcurrency: 1, Aging: &core.Aging{Per: time.Second}}))
	for _, z := range st.rdb.ZRangeWithScores(ctx, parked, 0, -1).Val() {
		require.Equal(t, float64(1000), z.Score, "%v: created_at + priority 0 × 1 s, not the priority alone", z.Member)
	}
}
