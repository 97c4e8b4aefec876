package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
)

// TestJobsPageByCursorAtAnyDepth: GET /jobs pages every type by cursor and
// lists what Kue's /jobs/FROM..TO lists; Kue's route gives the cursor of
// its page in a header to go on from; a deep position of every type is
// refused naming the cursor; bad paging input names its field.
func TestJobsPageByCursorAtAnyDepth(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	var specs []core.Spec
	for i := range 30 {
		specs = append(specs, core.Spec{Type: fmt.Sprintf("t%d", i%3), Priority: core.Priority(i % 2 * 10)})
	}
	_, err := e.core.Client.CreateBulk(t.Context(), specs)
	require.NoError(t, err)
	idsOf := func(jobs []core.Job) []int64 {
		ids := make([]int64, len(jobs))
		for i, j := range jobs {
			ids[i] = j.ID
		}
		return ids
	}

	for _, list := range []struct{ path, query string }{{"/jobs/0..999/desc", "order=desc"}, {"/jobs/inactive/0..999", "state=inactive"}} {
		var whole []core.Job
		e.ok(http.StatusOK, "GET", list.path, nil, &whole)
		require.Len(t, whole, 30)
		var got []int64
		cursor := ""
		for range 10 {
			var page struct {
				Jobs   []core.Job
				Cursor string
			}
			e.ok(http.StatusOK, "GET", "/jobs?limit=7&"+list.query+"&cursor="+url.QueryEscape(cursor), nil, &page)
			got = append(got, idsOf(page.Jobs)...)
			if cursor = page.Cursor; cursor == "" {
				break
			}
		}
		require.Equal(t, idsOf(whole), got, list.path)
	}

	var first, second, want []core.Job
	r := e.ok(http.StatusOK, "GET", "/jobs/0..9", nil, &first)
	require.Len(t, first, 10)
	cursor := r.header.Get(httpapi.HeaderRangeCursor)
	require.NotEmpty(t, cursor)
	var page struct{ Jobs []core.Job }
	e.ok(http.StatusOK, "GET", "/jobs?limit=10&cursor="+url.QueryEscape(cursor), nil, &page)
	second = page.Jobs
	e.ok(http.StatusOK, "GET", "/jobs/10..19", nil, &want)
	require.Equal(t, idsOf(want), idsOf(second))

	var typed []core.Job
	e.ok(http.StatusOK, "GET", "/jobs/t1/all/1000000..1000019", nil, &typed)
	require.Empty(t, typed, "a range of one type reads any position")
	msg := e.fails(http.StatusBadRequest, "invalid", "GET", "/jobs/1000000..1000019", nil)
	require.Contains(t, msg, "from: 1000000..1000019 of every type is past position 999")
	require.Contains(t, msg, "cursor")
	require.Contains(t, e.fails(http.StatusBadRequest, "invalid", "GET", "/jobs?limit=x", nil), "limit: ")
	require.Contains(t, e.fails(http.StatusBadRequest, "invalid", "GET", "/jobs?limit=1001", nil), "limit: ")
	require.Contains(t, e.fails(http.StatusBadRequest, "invalid", "GET", "/jobs?cursor=zz", nil), "cursor: ")
	require.Contains(t, e.fails(http.StatusBadRequest, "invalid", "GET", "/jobs?state=done", nil), "state: ")
}
