package redisstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
)

// TestTypeSetStoresThePolicyAndTheFlag: type_set.lua keeps the whole
// policy as JSON and the numbers the leases act on, flags the type limited
// while it has a concurrency or a rate, drops the log of starts with the
// rate, and a policy that sets nothing leaves only the listed type.
func TestTypeSetStoresThePolicyAndTheFlag(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	p := &core.TypePolicy{Type: "t", Concurrency: 3, Rate: &core.Rate{Limit: 5, Per: time.Second}}
	require.NoError(t, st.SetType(ctx, p))
	st.requireKeys(keyspace{
		"{_}:types": []string{"t"},
		"{t}:stats": map[string]string{"limited": "1"},
		"{t}:policy": map[string]string{"json": `{"type":"t","concurrency":3,"rate":{"limit":5,"per":1000}}`,
			"concurrency": "3", "rate_limit": "5", "rate_per": "1000"},
	}, "a concurrency and a rate")
	got, err := st.TypePolicy(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, p, got)

	st.seed(keyspace{"{t}:starts": map[string]float64{"L:1": 900}})
	two := 2
	p = &core.TypePolicy{Type: "t", Defaults: &core.TypeDefaults{MaxAttempts: 3, StallLimit: &two}}
	require.NoError(t, st.SetType(ctx, p))
	st.requireKeys(keyspace{
		"{_}:types":  []string{"t"},
		"{t}:policy": map[string]string{"json": `{"type":"t","defaults":{"max_attempts":3,"stall_limit":2}}`},
	}, "defaults alone: no flag, no log of starts")
	list, err := st.TypePolicies(ctx)
	require.NoError(t, err)
	require.Equal(t, []core.TypePolicy{*p}, list)

	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "t"}))
	st.requireKeys(keyspace{"{_}:types": []string{"t"}}, "no policy: nothing but the listed type")
	got, err = st.TypePolicy(ctx, "t")
	require.NoError(t, err)
	require.Nil(t, got)
	list, err = st.TypePolicies(ctx)
	require.NoError(t, err)
	require.Empty(t, list)
}

// createN stores n jobs of jobType at now, ttl 10 s each.
func createN(t *testing.T, st *scriptStore, now int64, jobType string, n int) []core.Job {
	t.Helper()
	specs := make([]core.Spec, n)
	for i := range specs {
		specs[i] = core.Spec{Type: jobType, MaxAttempts: 1, TTL: 10_000 * time.Millisecond}
	}
	jobs, _, err := st.Create(ctx, now, specs)
	require.NoError(t, err)
	return jobs
}

// heldBack records what a lease's OnLimited heard.
type heldBack map[string]int64

func (h heldBack) note(jobType string, until int64) { h[jobType] = until }

// TestLeaseHeadHonoursConcurrency: with concurrency 3 and one job active,
// a lease asking for 5 gets 2 and hears the type was held back; the next
// gets none; a completion makes room for one more (lease_head.lua).
func TestLeaseHeadHonoursConcurrency(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	createN(t, st, 1000, "t", 10)
	first, _, err := st.Lease(ctx, &service.LeaseParams{Now: 1001, Types: []string{"t"}, Max: 1, Worker: "w", Token: "A"})
	require.NoError(t, err)
	require.Len(t, first, 1, "no policy yet")
	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "t", Concurrency: 3}))

	held := heldBack{}
	jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: 1002, Types: []string{"t"}, Max: 5, Worker: "w", Token: "B", OnLimited: held.note})
	require.NoError(t, err)
	require.Len(t, jobs, 2, "3 active at most, 1 was")
	require.Equal(t, heldBack{"t": 0}, held, "held back by concurrency: no time to wait for")
	jobs, _, err = st.Lease(ctx, &service.LeaseParams{Now: 1003, Types: []string{"t"}, Max: 5, Worker: "w", Token: "C"})
	require.NoError(t, err)
	require.Empty(t, jobs)

	_, err = st.Apply(ctx, 1004, core.OpComplete, []service.StoreOp{{ID: first[0].ID, Lease: "A", Type: "t"}})
	require.NoError(t, err)
	jobs, _, err = st.Lease(ctx, &service.LeaseParams{Now: 1005, Types: []string{"t"}, Max: 5, Worker: "w", Token: "D"})
	require.NoError(t, err)
	require.Len(t, jobs, 1, "the completion made room for one")
}

// TestLeaseHonoursConcurrencyAcrossTypes: a lease of several types
// (lease.lua) takes no more of a limited type than its concurrency, and
// the rest from the others, though the limited type's jobs rank first.
func TestLeaseHonoursConcurrencyAcrossTypes(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "t", Concurrency: 1}))
	createN(t, st, 1000, "t", 5)
	createN(t, st, 1001, "u", 5)
	held := heldBack{}
	jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: 1002, Types: []string{"t", "u"}, Max: 4, Worker: "w", Token: "A", OnLimited: held.note})
	require.NoError(t, err)
	byType := map[string]int{}
	for _, j := range jobs {
		byType[j.Type]++
	}
	require.Equal(t, map[string]int{"t": 1, "u": 3}, byType)
	require.Equal(t, heldBack{"t": 0}, held)
}

// TestLeaseHonoursRate: with a rate of 3 per 1000 ms, leases at 1000 and
// 1500 start 3 in all and hear when the next slot opens (2000, when the
// first start leaves the window); at 1999 none starts, at 2000 three more
// do. The log of starts holds the window's starts only.
func TestLeaseHonoursRate(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "t", Rate: &core.Rate{Limit: 3, Per: time.Second}}))
	createN(t, st, 900, "t", 10)
	lease := func(now int64, max int, token string) ([]core.Job, heldBack) {
		t.Helper()
		held := heldBack{}
		jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"t"}, Max: max, Worker: "w", Token: token, OnLimited: held.note})
		require.NoError(t, err)
		return jobs, held
	}
	jobs, held := lease(1000, 2, "A")
	require.Len(t, jobs, 2)
	require.Empty(t, held, "2 of 3: not held back")
	jobs, held = lease(1500, 5, "B")
	require.Len(t, jobs, 1, "the third start of the window")
	require.Equal(t, heldBack{"t": 2000}, held, "held back until the first start leaves the window")
	jobs, held = lease(1999, 5, "C")
	require.Empty(t, jobs)
	require.Equal(t, heldBack{"t": 2000}, held)
	jobs, held = lease(2000, 5, "D")
	require.Len(t, jobs, 2, "the two starts of 1000 left the window, the one of 1500 is in it")
	require.Equal(t, heldBack{"t": 2500}, held)
	starts, err := st.rdb.ZRangeWithScores(ctx, st.prefix+":{t}:starts", 0, -1).Result()
	require.NoError(t, err)
	var at []float64
	for _, z := range starts {
		at = append(at, z.Score)
	}
	require.Equal(t, []float64{1500, 2000, 2000}, at, "the log holds the window's starts")
}

// TestPolicyOnRedisCluster: on a Redis Cluster, type_set, the lease
// scripts' limited path (one type and several, each type on its own
// slot), type_list and explain's read of a held job make no cross-slot
// call, and the limits hold.
func TestPolicyOnRedisCluster(t *testing.T) {
	st, _, _ := clusterStore(t)
	ctx := t.Context()
	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "cl-a", Concurrency: 2}))
	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "cl-b", Rate: &core.Rate{Limit: 1, Per: time.Minute}}))
	_, _, err := st.Create(ctx, 1000, clusterSpecs("cl-a", 5))
	require.NoError(t, err)
	_, _, err = st.Create(ctx, 1000, clusterSpecs("cl-b", 5))
	require.NoError(t, err)
	held := heldBack{}
	one, _, err := st.Lease(ctx, &service.LeaseParams{Now: 2000, Types: []string{"cl-a"}, Max: 5, Worker: "w", Token: "A", OnLimited: held.note})
	require.NoError(t, err)
	require.Len(t, one, 2)
	jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: 2001, Types: []string{"cl-a", "cl-b"}, Max: 5, Worker: "w", Token: "B", OnLimited: held.note})
	require.NoError(t, err)
	require.Len(t, jobs, 1, "cl-a is full; cl-b starts one")
	require.Equal(t, "cl-b", jobs[0].Type)
	require.Equal(t, heldBack{"cl-a": 0, "cl-b": 62_001}, held)
	list, err := st.TypePolicies(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)
	h, err := st.Holding(ctx, &core.Job{ID: jobs[0].ID + 1, Type: "cl-b"}, 2002, 60_000, 0)
	require.NoError(t, err)
	require.Equal(t, int64(1), h.Starts)
	require.Equal(t, int64(2001), h.OldestStart)

	// aging and groups: the type's stats hash, in its slot
	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "cl-c", Aging: &core.Aging{Per: 10 * time.Millisecond}}))
	_, _, err = st.Create(ctx, 3000, []core.Spec{{Type: "cl-c", MaxAttempts: 1, TTL: time.Second, Group: "g"}})
	require.NoError(t, err)
	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "cl-c"}))
	got, _, err := st.Lease(ctx, &service.LeaseParams{Now: 3001, Types: []string{"cl-c"}, Max: 1, Worker: "w", Token: "C"})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "g", got[0].Group)

	// group limits: the groups' slots, logs and parked sets, in the
	// type's slot; a completion frees the group's slot
	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "cl-d", GroupConcurrency: 1, GroupRate: &core.Rate{Limit: 5, Per: time.Minute}}))
	specs := clusterSpecs("cl-d", 4)
	for i := range specs {
		specs[i].Group = fmt.Sprint("g", i%2)
	}
	_, _, err = st.Create(ctx, 4000, specs)
	require.NoError(t, err)
	got, _, err = st.Lease(ctx, &service.LeaseParams{Now: 4001, Types: []string{"cl-d"}, Max: 4, Worker: "w", Token: "D"})
	require.NoError(t, err)
	require.Len(t, got, 2, "one per group")
	_, err = st.Apply(ctx, 4002, core.OpComplete, []service.StoreOp{{ID: got[0].ID, Lease: "D", Type: "cl-d"}})
	require.NoError(t, err)
	more, _, err := st.Lease(ctx, &service.LeaseParams{Now: 4003, Types: []string{"cl-d", "cl-a"}, Max: 4, Worker: "w", Token: "E"})
	require.NoError(t, err)
	require.Len(t, more, 1, "the completed job's group starts its next; cl-a is full")
	require.Equal(t, got[0].Group, more[0].Group)
}

// readyScores reads a type's ready index: member → score.
func readyScores(t *testing.T, st *scriptStore, jobType string) map[string]float64 {
	t.Helper()
	zs, err := st.rdb.ZRangeWithScores(ctx, st.prefix+":{"+jobType+"}:ready", 0, -1).Result()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, z := range zs {
		out[z.Member.(string)] = z.Score
	}
	return out
}

// TestAgingScoresReadyJobsAndReranksThem: with aging, a job enters ready
// at created_at + priority × per, by create, set_priority and a release;
// setting aging re-ranks the jobs already ready (aging_rerank.lua, in
// steps), and dropping it gives them their priorities back.
func TestAgingScoresReadyJobsAndReranksThem(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	low, _, err := st.Create(ctx, 1000, []core.Spec{{Type: "t", Priority: core.PriorityLow, MaxAttempts: 1, TTL: time.Second}})
	require.NoError(t, err)
	require.Equal(t, map[string]float64{"0000000000000001:" + itoa(low[0].ID): 10}, readyScores(t, st, "t"), "strict: the priority")

	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "t", Aging: &core.Aging{Per: 100 * time.Millisecond}}))
	require.Equal(t, map[string]float64{"0000000000000001:" + itoa(low[0].ID): 1000 + 10*100}, readyScores(t, st, "t"), "re-ranked")
	high, _, err := st.Create(ctx, 1500, []core.Spec{{Type: "t", Priority: core.PriorityHigh, MaxAttempts: 1, TTL: time.Second}})
	require.NoError(t, err)
	scores := readyScores(t, st, "t")
	require.Equal(t, float64(1500-10*100), scores["0000000000000002:"+itoa(high[0].ID)], "a create scores by its aging")
	_, err = st.SetPriority(ctx, 1600, high[0].ID, core.PriorityNormal)
	require.NoError(t, err)
	require.Equal(t, float64(1500), readyScores(t, st, "t")["0000000000000002:"+itoa(high[0].ID)], "set_priority too")

	jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: 1700, Types: []string{"t"}, Max: 1, Worker: "w", Token: "A"})
	require.NoError(t, err)
	require.Equal(t, high[0].ID, jobs[0].ID, "1500 ranks before 2000: created 500 ms later, but 10 steps of priority better")
	_, err = st.Apply(ctx, 1800, core.OpRelease, []service.StoreOp{{ID: high[0].ID, Lease: "A", Type: "t"}})
	require.NoError(t, err)
	for m, s := range readyScores(t, st, "t") {
		if m != "0000000000000001:"+itoa(low[0].ID) {
			require.Equal(t, float64(1500), s, "a release scores by created_at, not by when it went back")
		}
	}

	require.NoError(t, st.SetType(ctx, &core.TypePolicy{Type: "t"}))
	for m, s := range readyScores(t, st, "t") {
		want := float64(0)
		if m == "0000000000000001:"+itoa(low[0].ID) {
			want = 10
		}
		require.Equal(t, want, s, "aging dropped: the priority again (%s)", m)
	}
}

// TestAgingRerankWalksInSteps: aging_rerank.lua looks at limit jobs a
// call and says where to go on, nil at the end; finished jobs are passed
// over.
func TestAgingRerankWalksInSteps(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	jobs := createN(t, st, 1000, "t", 5)
	st.seed(keyspace{"{t}:stats": map[string]string{"aging": "10"}})
	after, err := redisstore.RunAgingRerank(ctx, st.Store, "t", nil, 2)
	require.NoError(t, err)
	require.Equal(t, &redisstore.JobsPlace{Score: "1000001", Member: itoa(jobs[1].ID)}, after,
		"the second job's place: created at 1000, second in its call")
	scores := readyScores(t, st, "t")
	require.Len(t, scores, 5)
	rescored := 0
	for _, s := range scores {
		if s == 1000 {
			rescored++
		}
	}
	require.Equal(t, 2, rescored, "two looked at: created at 1000, priority 0")
	for after != nil {
		after, err = redisstore.RunAgingRerank(ctx, st.Store, "t", after, 2)
		require.NoError(t, err)
	}
	for _, s := range readyScores(t, st, "t") {
		require.Equal(t, float64(1000), s)
	}
}

// TestGroupsTakeTurns: a group of 3 jobs created after a group of 60
// gets its 3 among the first 6 leased; a job released goes to its group's
// next turn; a type's jobs without a group keep the type's FIFO.
func TestGroupsTakeTurns(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	specs := func(group string, n int) []core.Spec {
		out := make([]core.Spec, n)
		for i := range out {
			out[i] = core.Spec{Type: "t", MaxAttempts: 1, TTL: 10_000 * time.Millisecond, Group: group}
		}
		return out
	}
	big, _, err := st.Create(ctx, 1000, specs("big", 60))
	require.NoError(t, err)
	small, _, err := st.Create(ctx, 1001, specs("small", 3))
	require.NoError(t, err)
	require.Equal(t, "small", small[0].Group)
	jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: 1002, Types: []string{"t"}, Max: 6, Worker: "w", Token: "A"})
	require.NoError(t, err)
	byGroup := map[string]int{}
	for _, j := range jobs {
		byGroup[j.Group]++
	}
	require.Equal(t, map[string]int{"big": 3, "small": 3}, byGroup, "the groups took turns")

	// released, a job of big takes big's next turn, after the turns its
	// 57 other waiting jobs hold: it is leased last
	_, err = st.Apply(ctx, 1003, core.OpRelease, []service.StoreOp{{ID: big[0].ID, Lease: "A", Type: "t"}})
	require.NoError(t, err)
	next, _, err := st.Lease(ctx, &service.LeaseParams{Now: 1004, Types: []string{"t"}, Max: 60, Worker: "w", Token: "B"})
	require.NoError(t, err)
	require.Len(t, next, 58)
	require.Equal(t, big[0].ID, next[len(next)-1].ID, "big's turns were taken up to its last job: the released one is its next")

	plain := createN(t, st, 1005, "u", 3)
	got, _, err := st.Lease(ctx, &service.LeaseParams{Now: 1006, Types: []string{"u"}, Max: 3, Worker: "w", Token: "C"})
	require.NoError(t, err)
	require.Equal(t, []int64{plain[0].ID, plain[1].ID, plain[2].ID}, []int64{got[0].ID, got[1].ID, got[2].ID})
}

// TestADelayedJobOfAGroupTakesItsTurnWhenPromoted: a type's first grouped
// job, created delayed behind ten jobs without a group, takes its group's
// turn when it is promoted: near the head, not at the back.
func TestADelayedJobOfAGroupTakesItsTurnWhenPromoted(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	createN(t, st, 1000, "t", 10)
	late, _, err := st.Create(ctx, 1000, []core.Spec{{Type: "t", MaxAttempts: 1, TTL: 10_000 * time.Millisecond, Delay: 10 * time.Millisecond, Group: "g"}})
	require.NoError(t, err)
	_, _, err = st.Promote(ctx, 1010, 10)
	require.NoError(t, err)
	jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: 1011, Types: []string{"t"}, Max: 2, Worker: "w", Token: "A"})
	require.NoError(t, err)
	require.Contains(t, []int64{jobs[0].ID, jobs[1].ID}, late[0].ID)
}
