package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/httpapi"
)

func TestPauseAndResumeAType(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	job := e.create(map[string]any{"type": "email"})

	var out map[string]any
	e.ok(http.StatusOK, "PUT", "/types/email/pause", nil, &out)
	require.Equal(t, map[string]any{"message": "paused", "type": "email", "paused": true}, out)
	require.Equal(t, []any{"email"}, e.stats()["paused"])
	// A paused type hands out nothing: the pop finds no job.
	e.ok(http.StatusNoContent, "POST", "/pop?type=email", nil, nil)

	out = nil
	e.ok(http.StatusOK, "PUT", "/types/email/pause", nil, &out)
	require.Equal(t, true, out["paused"], "pausing a paused type answers the same")

	out = nil
	e.ok(http.StatusOK, "PUT", "/types/email/resume", nil, &out)
	require.Equal(t, map[string]any{"message": "resumed", "type": "email", "paused": false}, out)
	require.NotContains(t, e.stats(), "paused")
	var leased map[string]any
	e.ok(http.StatusOK, "POST", "/pop?type=email", nil, &leased)
	require.EqualValues(t, job.ID, leased["id"])

	t.Run("a type that is not a subject token is invalid and pauses nothing", func(t *testing.T) {
		msg := e.fails(http.StatusBadRequest, "invalid", "PUT", "/types/a.b/pause", nil)
		require.Contains(t, msg, "type")
		require.NotContains(t, e.stats(), "paused")
	})
}

// stats reads GET /stats into a fresh map: decoding into a used one would
// keep keys the new body lacks.
func (e *env) stats() map[string]any {
	var out map[string]any
	e.ok(http.StatusOK, "GET", "/stats", nil, &out)
	return out
}
