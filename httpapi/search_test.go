package httpapi_test

import (
	"net/http"
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
	require.Equal(t, "q: missing: the text to look for", msg)
	msg = e.fails(http.StatusBadRequest, "invalid", "GET", "/job/search?q=a&limit=x", nil)
	require.Equal(t, `limit: "x" is not an integer`, msg)
	msg = e.fails(http.StatusBadRequest, "invalid", "GET", "/jobs/search?q=a&state=done", nil)
	require.Contains(t, msg, `state: "done" is not a state`)
}
