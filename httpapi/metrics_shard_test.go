package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/httpapi"
	"github.com/kuebus/kuebus/httpapi/prom"
	"github.com/kuebus/kuebus/node/nodetest"
)

// Issue 15, finding 4, as operators see it: with one Redis Cluster master
// down (no replica to take over), /metrics still exports the healthy
// types' counts with kuebus_core_up 1, and kuebus_type_up 0 for the dead
// master's types, which have no depth at all; GET /stats?partial=true
// answers the healthy types and names the others, while plain GET /stats
// fails whole, as before. Before, the exporter called the whole stats:
// kuebus_core_up 0 and no count of any type.
func TestMetricsDeadShard(t *testing.T) {
	t.Parallel() // its cluster is its own
	c := nodetest.NewShardCluster(t)
	victim, dead, healthy := nodetest.ShardTypes(t, c, 1)
	cr := nodetest.NewCoreOnCluster(t, service.Config{}, c)
	e := newEnvOn(t, cr, func() httpapi.Config {
		exp, err := prom.New(prom.Config{Stats: cr.Client})
		require.NoError(t, err)
		return httpapi.Config{Metrics: exp, MetricsHandler: exp.Handler()}
	}())
	for _, jt := range append(append([]string{}, dead...), healthy...) {
		e.create(map[string]any{"type": jt})
	}
	got := e.scrape()
	for _, jt := range append(append([]string{}, dead...), healthy...) {
		require.Contains(t, got, fmt.Sprintf("kuebus_type_up{type=%q} 1\n", jt), "scrape:\n%s", got)
	}

	nodetest.KillMaster(t, c, victim)

	got = e.scrape() + "\n"
	require.Contains(t, got, "kuebus_core_up 1\n", "core answered, partially")
	for _, jt := range healthy {
		require.Contains(t, got, fmt.Sprintf("kuebus_type_up{type=%q} 1\n", jt), "scrape:\n%s", got)
		require.Contains(t, got, fmt.Sprintf("kuebus_queue_depth{state=\"inactive\",type=%q} 1\n", jt), "scrape:\n%s", got)
	}
	for _, jt := range dead {
		require.Contains(t, got, fmt.Sprintf("kuebus_type_up{type=%q} 0\n", jt), "scrape:\n%s", got)
		require.NotContains(t, got, fmt.Sprintf("kuebus_queue_depth{state=\"inactive\",type=%q}", jt), "a dead type has no count, not 0")
	}
	// The total leaves the dead types out: a counter that dropped would
	// read as a reset.
	require.NotContains(t, got, "kuebus_work_seconds_total")

	msg := e.fails(http.StatusServiceUnavailable, "unavailable", "GET", "/stats", nil)
	for _, jt := range dead {
		require.Contains(t, msg, jt, "plain /stats fails whole, naming the dead types")
	}
	var st struct {
		core.Stats
		InactiveCount int64 `json:"inactiveCount"`
	}
	e.ok(http.StatusOK, "GET", "/stats?partial=true", nil, &st)
	var failed []string
	for _, te := range st.TypeErrors {
		require.Equal(t, "unavailable", te.Code)
		require.NotEmpty(t, te.Error)
		failed = append(failed, te.Type)
	}
	require.Equal(t, dead, failed)
	for _, jt := range healthy {
		require.EqualValues(t, 1, st.Types[jt].Inactive, jt)
	}
	for _, jt := range dead {
		require.NotContains(t, st.Types, jt)
	}
	require.EqualValues(t, len(healthy), st.Inactive)
	require.EqualValues(t, len(healthy), st.InactiveCount)

	require.Contains(t, e.fails(http.StatusBadRequest, "invalid", "GET", "/stats?partial=maybe", nil), "partial")
}
