package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
)

// TestJobsTooLargeForOneReplySayWhereTheRestStarts: three jobs of 400 KB
// do not fit one core reply; GET /jobs answers those that do and the
// Kuebus-Range-Next header, rather than an error or a silently short page.
func TestJobsTooLargeForOneReplySayWhereTheRestStarts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	data := json.RawMessage(`"` + strings.Repeat("x", 400<<10) + `"`)
	for range 3 {
		_, err := e.core.Client.Create(t.Context(), "big", data, nil)
		require.NoError(t, err)
	}
	var jobs []core.Job
	r := e.ok(http.StatusOK, "GET", "/jobs/big/inactive/0..9", nil, &jobs)
	require.Len(t, jobs, 2)
	require.Equal(t, "2", r.header.Get(httpapi.HeaderRangeNext))

	r = e.ok(http.StatusOK, "GET", "/jobs/big/inactive/2..9", nil, &jobs)
	require.Len(t, jobs, 1)
	require.Empty(t, r.header.Get(httpapi.HeaderRangeNext), "the page is whole")
}
