package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
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

// TestStatsAndMetricsShowWhatALimitHoldsBack: stats' limits give a type's
// concurrency and the inactive jobs it holds back, and /metrics exports
// them as kuebus_type_limited_jobs.
func TestStatsAndMetricsShowWhatALimitHoldsBack(t *testing.T) {
	t.Parallel()
	e := metricsEnv(t, "node-a", true)
	e.ok(http.StatusOK, "PUT", "/types/capped/policy", `{"concurrency":1,"rate":{"limit":10,"per":60000}}`, nil)
	for range 3 {
		e.create(map[string]any{"type": "capped"})
	}
	e.ok(http.StatusOK, "POST", "/pop?type=capped", nil, nil)
	require.Equal(t, map[string]any{"capped": map[string]any{"concurrency": float64(1), "rate": map[string]any{"limit": float64(10), "per": float64(60000)},
		"starts": float64(1), "held": float64(2), "held_by": "concurrency"}}, e.stats()["limits"])
	got := e.scrape()
	require.Contains(t, got, `kuebus_type_limited_jobs{reason="concurrency",type="capped"} 2`+"\n")
	require.Contains(t, got, `kuebus_type_limited_jobs{reason="rate",type="capped"} 0`+"\n")

	// a group limit: the jobs set aside while their group is at it
	e.ok(http.StatusOK, "PUT", "/types/tenants/policy", `{"group_concurrency":1}`, nil)
	for range 3 { // over NATS: HTTP's create has no group
		_, err := e.core.Client.Create(context.Background(), "tenants", nil, &core.CreateOpts{Group: "acme"})
		require.NoError(t, err)
	}
	e.ok(http.StatusOK, "POST", "/pop?type=tenants", nil, nil)
	e.ok(http.StatusNoContent, "POST", "/pop?type=tenants", nil, nil) // sets the other two aside
	require.Contains(t, e.scrape(), `kuebus_type_limited_jobs{reason="group_concurrency",type="tenants"} 2`+"\n")
}
