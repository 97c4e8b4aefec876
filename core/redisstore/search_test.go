package redisstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
)

// searchSeed holds jobs 1..4 of type t and 5 of type u: job 2's data and
// job 3's unique key hold "Acme", job 12 (of u) holds it in neither but
// its id holds "12"; job 4 is failed.
func searchSeed() keyspace {
	return keyspace{
		"{_}:types":  []string{"t", "u"},
		"{t}:jobs":   map[string]float64{"1": 1, "2": 2, "3": 3, "4": 4},
		"{t}:job:1":  jobHash(map[string]string{"data": `{"to":"bob"}`}),
		"{t}:job:2":  jobHash(map[string]string{"id": "2", "data": `{"to":"ACME corp"}`}),
		"{t}:job:3":  jobHash(map[string]string{"id": "3", "unique_key": "acme-3", "data": ""}),
		"{t}:job:4":  jobHash(map[string]string{"id": "4", "state": "failed", "data": `{"who":"acme"}`}),
		"{u}:jobs":   map[string]float64{"12": 12},
		"{u}:job:12": jobHash(map[string]string{"id": "12", "type": "u", "data": `{"to":"acme"}`}),
	}
}

func ids(jobs []core.Job) []int64 {
	out := []int64{}
	for _, j := range jobs {
		out = append(out, j.ID)
	}
	return out
}

// TestSearchMatchesIDKeyAndDataWithoutCase: a text in the data or the
// unique key, in any case of ASCII letters, or in the id; by type and
// state; the rows come without data, and nothing is written.
func TestSearchMatchesIDKeyAndDataWithoutCase(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := searchSeed()
	st.seed(before)
	for _, tc := range []struct {
		name, q, jobType string
		state            core.State
		want             []int64
	}{
		{"data and key, any case, over the types", "acme", "", "", []int64{2, 3, 4, 12}},
		{"one type", "aCmE", "u", "", []int64{12}},
		{"one state", "acme", "", core.StateFailed, []int64{4}},
		{"the id", "12", "", "", []int64{12}},
		{"a text in no job", "zebra", "", "", []int64{}},
		{"a type with no jobs", "acme", "v", "", []int64{}},
	} {
		page, err := st.Search(ctx, &service.SearchParams{Query: tc.q, Type: tc.jobType, State: tc.state, Limit: 10, Budget: 100})
		require.NoError(t, err, tc.name)
		jobs := page.Jobs
		require.Nil(t, page.Next, tc.name)
		require.Equal(t, tc.want, ids(jobs), tc.name)
		for _, j := range jobs {
			require.Nil(t, j.Data, tc.name)
		}
	}
	st.requireKeys(before, "a search writes nothing")
}

// TestSearchLooksAtNoMoreThanItsBudget: each call looks at no more than
// budget jobs and stops at limit matches; the cursor goes on after the last
// job looked at, across types, until it is nil.
func TestSearchLooksAtNoMoreThanItsBudget(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	st.seed(searchSeed())
	type page struct {
		ids  []int64
		next string
	}
	walk := func(limit, budget int) []page {
		var pages []page
		var from core.SearchCursor
		for range 20 {
			p, err := st.Search(ctx, &service.SearchParams{Query: "acme", Type: "", State: "", From: from, Limit: limit, Budget: budget})
			require.NoError(t, err)
			jobs, next := p.Jobs, p.Next
			if next == nil {
				return append(pages, page{ids(jobs), ""})
			}
			pages = append(pages, page{ids(jobs), next.String()})
			from = *next
		}
		t.Fatal("the cursor never ended")
		return nil
	}
	require.Equal(t, []page{{[]int64{2}, "t:2:2"}, {[]int64{3, 4}, "t:4:4"}, {[]int64{12}, ""}}, walk(10, 2),
		"two jobs looked at per call; an empty read costs none")
	require.Equal(t, []page{{[]int64{2}, "t:2:2"}, {[]int64{3}, "t:3:3"}, {[]int64{4}, "u:0:0"}, {[]int64{12}, ""}}, walk(1, 100),
		"one match per call; a call that looked at the last job of a type goes on at the next type's start")
}
