package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/httpapi"
)

// TestATypesPolicyAndWhyAJobWaits: PUT /types/{type}/policy stores a
// policy, GET reads it and GET /types/policy lists it; a bad one is
// invalid naming the field and stores nothing; GET /job/{id}/why says why
// a job waits.
func TestATypesPolicyAndWhyAJobWaits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	var out map[string]any
	e.ok(http.StatusOK, "PUT", "/types/email/policy", `{"concurrency":1,"rate":{"limit":5,"per":1000}}`, &out)
	want := map[string]any{"type": "email", "concurrency": float64(1), "rate": map[string]any{"limit": float64(5), "per": float64(1000)}}
	require.Equal(t, want, out)
	out = nil
	e.ok(http.StatusOK, "GET", "/types/email/policy", nil, &out)
	require.Equal(t, want, out)
	out = nil
	e.ok(http.StatusOK, "GET", "/types/policy", nil, &out)
	require.Equal(t, map[string]any{"types": []any{want}}, out)

	msg := e.fails(http.StatusBadRequest, "invalid", "PUT", "/types/sms/policy", `{"concurrency":-1}`)
	require.Contains(t, msg, "concurrency")
	msg = e.fails(http.StatusBadRequest, "invalid", "PUT", "/types/sms/policy", `{"type":"email"}`)
	require.Contains(t, msg, "type")
	out = nil
	e.ok(http.StatusOK, "GET", "/types/sms/policy", nil, &out)
	require.Equal(t, map[string]any{"type": "sms"}, out, "nothing stored")

	e.create(map[string]any{"type": "email"})
	held := e.create(map[string]any{"type": "email"})
	e.ok(http.StatusOK, "POST", "/pop?type=email", nil, nil)
	out = nil
	e.ok(http.StatusOK, "GET", "/job/"+itoa(held.ID)+"/why", nil, &out)
	require.Equal(t, "concurrency", out["reason"], out)
	require.Equal(t, float64(1), out["limit"])
	e.fails(http.StatusNotFound, "not_found", "GET", "/job/999999/why", nil)
}
