package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
)

// TestSearchRoutes: GET /jobs/search pages through core's search; Kue's
// GET /job/search answers a bare array of ids (no longer "search is not a
// job id"); bad input is 400 invalid.
func TestSearchRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	a := e.create(map[string]any{"type": "order", "data": map[string]string{"customer": "ACME"}})
	b := e.create(map[string]any{"type": "order", "unique_key": "acme-2"})
	e.create(map[string]any{"type": "order", "data": "other"})

	var page core.SearchReply
	e.ok(http.StatusOK, "GET", "/jobs/search?q=acme&limit=1", nil, &page)
	require.Len(t, page.Jobs, 1)
	require.Equal(t, a.ID, page.Jobs[0].ID)
	require.NotEmpty(t, page.Cursor)
	e.ok(http.StatusOK, "GET", "/jobs/search?q=acme&limit=1&type=order&state=inactive&cursor="+page.Cursor, nil, &page)
	require.Equal(t, b.ID, page.Jobs[0].ID)

	var ids []int64
	e.ok(http.StatusOK, "GET", "/job/search?q=ACME", nil, &ids)
	require.Equal(t, []int64{a.ID, b.ID}, ids)
	e.ok(http.StatusOK, "GET", "/job/search?q=zebra", nil, &ids)
	require.Equal(t, []int64{}, ids)

	msg := e.fails(http.StatusBadRequest, "invalid", "GET", "/jobs/search", nil)
	require.Equal(t, "q: missing: the text to look for (or error, or error_group)", msg)
	msg = e.fails(http.StatusBadRequest, "invalid", "GET", "/job/search?q=a&limit=x", nil)
	require.Equal(t, `limit: "x" is not an integer`, msg)
	msg = e.fails(http.StatusBadRequest, "invalid", "GET", "/jobs/search?q=a&state=done", nil)
	require.Contains(t, msg, `state: "done" is not a state`)
}

// TestFailedErrorsRoute: GET /jobs/errors groups a type's failed jobs by
// error, and GET /jobs/search filters them by error text or group with no
// q; bad input is 400 invalid.
func TestFailedErrorsRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	a := failJob(t, e, "sync", "dial tcp 10.0.0.1:443: connection refused")
	failJob(t, e, "sync", "quota exceeded for \"acme\"")
	c := failJob(t, e, "sync", "dial tcp 10.0.0.2:443: connection refused")

	var reply core.FailedErrorsReply
	e.ok(http.StatusOK, "GET", "/jobs/errors?type=sync&limit=10", nil, &reply)
	require.Equal(t, int64(3), reply.Failed)
	require.Equal(t, 3, reply.Read)
	require.Len(t, reply.Groups, 2)
	require.Equal(t, "dial tcp <addr>: connection refused", reply.Groups[0].Group)
	require.Equal(t, 2, reply.Groups[0].Count)
	require.Equal(t, c.ID, reply.Groups[0].JobID, "the newest job of the group")

	var page core.SearchReply
	e.ok(http.StatusOK, "GET", "/jobs/search?type=sync&state=failed&error_group="+url.QueryEscape(reply.Groups[0].Group), nil, &page)
	require.Len(t, page.Jobs, 2)
	require.Equal(t, []int64{a.ID, c.ID}, []int64{page.Jobs[0].ID, page.Jobs[1].ID})
	e.ok(http.StatusOK, "GET", "/jobs/search?state=failed&error=quota", nil, &page)
	require.Len(t, page.Jobs, 1)

	msg := e.fails(http.StatusBadRequest, "invalid", "GET", "/jobs/errors", nil)
	require.Equal(t, "type: missing", msg)
	msg = e.fails(http.StatusBadRequest, "invalid", "GET", "/jobs/errors?type=sync&limit=x", nil)
	require.Equal(t, `limit: "x" is not an integer`, msg)
	msg = e.fails(http.StatusBadRequest, "invalid", "GET", "/jobs/errors?type=sync&limit=10001", nil)
	require.Equal(t, "limit: 10001 is over the maximum of 10000", msg)
}

// TestLogEntriesRoute: GET /job/:id/log stays Kue's bare array of lines;
// with ?entries=1 each line comes with the time it was added, as the
// dashboard shows it.
func TestLogEntriesRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	j := e.create(map[string]any{"type": "email"})
	e.ok(http.StatusOK, "POST", "/job/"+itoa(j.ID)+"/log", `{"line":"connecting"}`, nil)
	var lines []string
	e.ok(http.StatusOK, "GET", "/job/"+itoa(j.ID)+"/log", nil, &lines)
	require.Equal(t, []string{"connecting"}, lines)
	var reply struct{ Entries []core.LogEntry }
	e.ok(http.StatusOK, "GET", "/job/"+itoa(j.ID)+"/log?entries=1", nil, &reply)
	require.Len(t, reply.Entries, 1)
	require.Equal(t, "connecting", reply.Entries[0].Line)
	require.GreaterOrEqual(t, reply.Entries[0].At, j.CreatedAt, "the line's time")
	e.fails(http.StatusNotFound, "not_found", "GET", "/job/999999/log?entries=1", nil)
}

// TestHistoryRouteNamesTheBadParameter: GET /history's minutes and hours
// are integers; a bad one is a 400 that names it, minutes first when both
// are bad.
func TestHistoryRouteNamesTheBadParameter(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	msg := e.fails(http.StatusBadRequest, "invalid", "GET", "/history?hours=x", nil)
	require.Equal(t, `hours: "x" is not an integer`, msg)
	for range 20 { // a map's order varied from call to call
		msg = e.fails(http.StatusBadRequest, "invalid", "GET", "/history?hours=x&minutes=y", nil)
		require.Equal(t, `minutes: "y" is not an integer`, msg)
	}
}
