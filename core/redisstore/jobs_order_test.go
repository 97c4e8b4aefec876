package redisstore_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
)

// The jobs index of a type orders by creation (lua/includes/jobs_order.lua):
// score created_at × 1000 + the job's place among those its core created in
// that ms.

// t0 is a time of a real clock (2025-11-27), whose created_at × 1000 is
// above the scores of ids (1e15).
const jobsT0 = int64(1_764_240_000_000)

// secondCore is another Store on st's Redis and prefix: another core, with
// id blocks of its own.
func secondCore(t *testing.T, st *scriptStore) *redisstore.Store {
	t.Helper()
	other, err := redisstore.New(redisstore.Config{Client: st.rdb, Prefix: st.prefix})
	require.NoError(t, err)
	return other
}

// everyJob lists the jobs of every state and type, by range's cursor pages
// of size, in order desc or not, and by positions: both must agree.
func everyJob(t *testing.T, st *redisstore.Store, size int, desc bool) []int64 {
	t.Helper()
	var ids []int64
	var after *core.RangeCursor
	for range 1000 {
		page, err := st.Range(ctx, &service.RangeParams{Desc: desc, After: after, Limit: size})
		require.NoError(t, err)
		for _, j := range page.Jobs {
			ids = append(ids, j.ID)
		}
		if !page.More {
			byPosition, err := st.Range(ctx, &service.RangeParams{Desc: desc, From: 0, To: -1})
			require.NoError(t, err)
			var all []int64
			for _, j := range byPosition.Jobs {
				all = append(all, j.ID)
			}
			require.Equal(t, all, ids, "the pages by cursor, and one read by positions")
			return ids
		}
		after = &page.Places[len(page.Places)-1]
	}
	t.Fatal("the pages never ended")
	return nil
}

// TestEveryStateListsNewestFirstAcrossTypesAndCores: jobs created by two
// cores (two Stores: id blocks of their own), of two types, by single
// creates, a bulk over both types and a flow, list in creation order, not
// in id order, whichever the state they are in: the order of a call's jobs
// is their place in it.
func TestEveryStateListsNewestFirstAcrossTypesAndCores(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	other := secondCore(t, st)
	spec := func(jobType string) core.Spec {
		return core.Spec{Type: jobType, MaxAttempts: 1, TTL: time.Second}
	}
	var created []int64 // in creation order
	create := func(s *redisstore.Store, at int64, specs ...core.Spec) {
		t.Helper()
		jobs, _, err := s.Create(ctx, at, specs)
		require.NoError(t, err)
		for _, j := range jobs {
			created = append(created, j.ID)
		}
	}
	create(st.Store, jobsT0, spec("a"))                                 // id 1: block 0, a's on this core
	create(other, jobsT0+1, spec("b"))                                  // 1001: block 1, b's on the other
	create(st.Store, jobsT0+2, spec("b"))                               // 2001: block 2, b's on this one
	create(other, jobsT0+3, spec("a"))                                  // 3001: block 3
	create(st.Store, jobsT0+4, spec("a"))                               // 2: block 0 again, newer than 3001
	create(other, jobsT0+5, spec("b"), spec("a"), spec("b"), spec("a")) // one ms, places 0..3 over both types
	delayed := spec("b")
	delayed.Delay = time.Minute
	create(st.Store, jobsT0+5, spec("a"), delayed) // the same ms again, on the other core
	flow := []core.Spec{spec("b"), spec("a"), spec("b")}
	flow[1].DependsOnRefs = []int{0}
	flow[2].DependsOnRefs = []int{1}
	create(other, jobsT0+6, flow...) // a flow: the path of jobs that wait
	require.False(t, slices.IsSorted(created), "ids are not in creation order: %v", created)

	newest := slices.Clone(created)
	slices.Reverse(newest)
	// the two calls of jobsT0+5 tie place by place (0 and 1): Redis orders
	// a tie by member as bytes, the order the merge keeps
	tied := everyJob(t, st.Store, 3, true)
	require.Len(t, tied, len(created))
	require.Equal(t, newest[:3], tied[:3], "the flow, newest first")
	require.Equal(t, newest[len(newest)-5:], tied[len(tied)-5:], "the single creates, oldest last")
	require.ElementsMatch(t, newest[3:9], tied[3:9], "the two calls of one ms")
	atMs5 := map[int64]int{} // id → its place in its call
	for i, id := range created[5:9] {
		atMs5[id] = i
	}
	for i, id := range created[9:11] {
		atMs5[id] = i
	}
	for i := 3; i+1 < 9; i++ {
		require.GreaterOrEqual(t, atMs5[tied[i]], atMs5[tied[i+1]], "newest first within one ms: by place (%v)", tied[3:9])
	}
	oldest := everyJob(t, st.Store, 4, false)
	want := slices.Clone(tied)
	slices.Reverse(want)
	require.Equal(t, want, oldest, "oldest first: the same order reversed")
	require.Equal(t, tied, everyJob(t, other, 100, true), "the other core reads the same order")
}

// tiedSeed is n jobs of type jobType from id first on, all with one score
// in the jobs index: what many cores creating in the same ms would store
// at worst. Each is inactive, with its ready member, and data "<type>-<id>".
func tiedSeed(jobType string, first, n int64, score float64) keyspace {
	ks := keyspace{}
	jobs, ready := map[string]float64{}, map[string]float64{}
	for id := first; id < first+n; id++ {
		m := fmt.Sprintf("%016d:%d", id, id)
		jobs[itoa(id)], ready[m] = score, 0
		ks["{"+jobType+"}:job:"+itoa(id)] = jobHash(map[string]string{"id": itoa(id), "type": jobType,
			"rmember": m, "data": strconv.Quote(jobType + "-" + itoa(id)), "created_at": "1764240000000"})
	}
	ks["{"+jobType+"}:jobs"], ks["{"+jobType+"}:ready"] = jobs, ready
	return ks
}

// TestPagesOverTiedScoresNeitherSkipNorRepeat: with every job of two types
// at one score, range pages (by cursor, either way) and search pages (by
// budget) each list every job once.
func TestPagesOverTiedScoresNeitherSkipNorRepeat(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	score := float64(jobsT0 * 1000)
	st.seed(keyspace{"{_}:types": []string{"t", "u"}})
	st.seed(tiedSeed("t", 1, 23, score))
	st.seed(tiedSeed("u", 1001, 9, score))
	var all []int64
	for id := int64(1); id <= 23; id++ {
		all = append(all, id)
	}
	for id := int64(1001); id <= 1009; id++ {
		all = append(all, id)
	}
	for _, size := range []int{1, 4, 7} {
		for _, desc := range []bool{false, true} {
			got := everyJob(t, st.Store, size, desc)
			require.ElementsMatch(t, all, got, "range, pages of %d, desc %v", size, desc)
		}
	}
	for _, budget := range []int{1, 3, 10} {
		var got []int64
		var from core.SearchCursor
		for calls := 0; ; calls++ {
			require.Less(t, calls, 100, "the search never ended")
			page, err := st.Search(ctx, &service.SearchParams{From: from, Limit: 1000, Budget: budget})
			require.NoError(t, err)
			got = append(got, ids(page.Jobs)...)
			if page.Next == nil {
				break
			}
			from = *page.Next
		}
		require.ElementsMatch(t, all, got, "search, budget %d", budget)
		require.Len(t, got, len(all), "search, budget %d: none twice", budget)
	}
}

// TestSearchFindsAJobPastTwoThousandTied: a search goes on, call after
// call of its budget, over thousands of jobs of one score, to the one that
// matches near the end.
func TestSearchFindsAJobPastTwoThousandTied(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	st.seed(keyspace{"{_}:types": []string{"t"}})
	st.seed(tiedSeed("t", 1, 2500, float64(jobsT0*1000)))
	st.seed(keyspace{"{t}:job:2400": jobHash(map[string]string{"id": "2400", "rmember": "0000000000002400:2400",
		"data": `{"needle":true}`})})
	var found []int64
	var from core.SearchCursor
	calls := 0
	for {
		calls++
		require.Less(t, calls, 10, "the search never ended")
		page, err := st.Search(ctx, &service.SearchParams{Query: "needle", Type: "t", From: from, Limit: 20, Budget: core.SearchBudget})
		require.NoError(t, err)
		found = append(found, ids(page.Jobs)...)
		if page.Next == nil {
			break
		}
		from = *page.Next
	}
	require.Equal(t, []int64{2400}, found)
	require.Equal(t, 3, calls, "three calls of 1000: 2500 jobs")
}

// TestAgingRerankReachesEveryTiedJob: the aging walk, two jobs a call,
// re-scores every ready job of a type whose jobs all share one score.
func TestAgingRerankReachesEveryTiedJob(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	st.seed(tiedSeed("t", 1, 9, float64(jobsT0*1000)))
	st.seed(keyspace{"{t}:stats": map[string]string{"aging": "10"}})
	var after *redisstore.JobsPlace
	calls := 0
	for {
		next, err := redisstore.RunAgingRerank(ctx, st.Store, "t", after, 2)
		require.NoError(t, err)
		calls++
		require.Less(t, calls, 20, "the walk never ended")
		if next == nil {
			break
		}
		require.NotEqual(t, after, next, "the walk moves on")
		after = next
	}
	require.Equal(t, 5, calls, "9 jobs, 2 a call")
	for m, s := range readyScores(t, st, "t") {
		require.Equal(t, float64(1764240000000), s, "%s: created_at + priority 0 × aging", m)
	}
}

// TestJobsRescoreMovesJobsIndexedByID: jobs that an earlier version
// entered in jobs by id (score = id) take created_at × 1000 + id mod 1000,
// a batch a call; a job entered by creation time is left as it is; a job
// whose hash is gone takes 1e15; then a range over every state lists in
// creation order.
func TestJobsRescoreMovesJobsIndexedByID(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	old := keyspace{
		"{_}:ids":    "2000",
		"{_}:blocks": map[string]string{"0": "t", "1": "t"},
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{"1": 1, "2": 2, "1001": 1001, "7": 7},
		"{t}:job:1":  jobHash(map[string]string{"created_at": itoa(jobsT0 + 20)}),
		"{t}:job:2":  jobHash(map[string]string{"id": "2", "created_at": itoa(jobsT0 + 20)}),
		"{t}:job:1001": jobHash(map[string]string{"id": "1001", "created_at": itoa(jobsT0 + 10),
			"rmember": "0000000000000003:1001"}),
		// 7 has no hash
	}
	st.seed(old)
	fresh, _, err := st.Create(ctx, jobsT0+30, []core.Spec{{Type: "t", MaxAttempts: 1, TTL: time.Second}})
	require.NoError(t, err)
	freshScore := float64((jobsT0 + 30) * 1000)

	moved, more, err := st.RescoreJobs(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, 4, moved)
	require.False(t, more)
	scores := map[string]float64{}
	for _, z := range st.rdb.ZRangeWithScores(ctx, st.prefix+":{t}:jobs", 0, -1).Val() {
		scores[z.Member.(string)] = z.Score
	}
	require.Equal(t, map[string]float64{
		"1":               float64((jobsT0+20)*1000 + 1),
		"2":               float64((jobsT0+20)*1000 + 2),
		"1001":            float64((jobsT0+10)*1000 + 1),
		"7":               1e15,
		itoa(fresh[0].ID): freshScore,
	}, scores)
	moved, more, err = st.RescoreJobs(ctx, "t")
	require.NoError(t, err)
	require.Zero(t, moved, "once moved, nothing to do")
	require.False(t, more)
	require.Equal(t, []int64{fresh[0].ID, 2, 1, 1001}, everyJob(t, st.Store, 2, true), "newest first, 7 (no hash) left out")
}

// TestJobsRescoreGoesInBatches: more than a batch of old jobs take two
// calls; the first says more.
func TestJobsRescoreGoesInBatches(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	ks := keyspace{}
	jobs := map[string]float64{}
	for id := int64(1); id <= 1001; id++ {
		jobs[itoa(id)] = float64(id)
		ks["{t}:job:"+itoa(id)] = jobHash(map[string]string{"id": itoa(id), "created_at": itoa(jobsT0)})
	}
	ks["{t}:jobs"] = jobs
	st.seed(ks)
	moved, more, err := st.RescoreJobs(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, 1000, moved)
	require.True(t, more)
	moved, more, err = st.RescoreJobs(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, 1, moved)
	require.False(t, more)
	n, err := st.rdb.ZCount(ctx, st.prefix+":{t}:jobs", "-inf", "(1e15").Result()
	require.NoError(t, err)
	require.Zero(t, n)
}

// TestOneCoreKeepsItsOrderWithinAMs: the creates one core stores in one
// ms, of two types, list in the order it stored them: each call's jobs
// take the places after the previous call's, where ids (two blocks)
// compared as bytes would mix them.
func TestOneCoreKeepsItsOrderWithinAMs(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	var created []int64
	for _, typ := range []string{"x", "y", "x", "y"} {
		jobs, _, err := st.Create(ctx, jobsT0, []core.Spec{{Type: typ, MaxAttempts: 1, TTL: time.Second}})
		require.NoError(t, err)
		created = append(created, jobs[0].ID)
	}
	require.Equal(t, []int64{1, 1001, 2, 1002}, created)
	require.Equal(t, []int64{1002, 2, 1001, 1}, everyJob(t, st.Store, 3, true), "newest first, within one ms")
	jobs, _, err := st.Create(ctx, jobsT0+1, []core.Spec{{Type: "x", MaxAttempts: 1, TTL: time.Second}})
	require.NoError(t, err)
	score, err := st.rdb.ZScore(ctx, st.prefix+":{x}:jobs", itoa(jobs[0].ID)).Result()
	require.NoError(t, err)
	require.Equal(t, float64((jobsT0+1)*1000), score, "a new ms starts at place 0")
}
