package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
)

// TestFlowAndDepsRoutes: POST /flow creates a flow (201), GET
// /job/{id}/deps lists a job's dependencies and dependents with their
// states; a cycle is 400 invalid naming the field.
func TestFlowAndDepsRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	var flow core.FlowReply
	e.ok(http.StatusCreated, "POST", "/flow", map[string]any{"jobs": []map[string]any{
		{"ref": "a", "spec": map[string]any{"type": "extract"}},
		{"ref": "b", "spec": map[string]any{"type": "load"}, "depends_on": []any{"a"}},
	}}, &flow)
	require.Equal(t, core.StateWaiting, flow.Jobs[1].State)
	var deps struct{ Dependencies, Dependents []core.DepJob }
	e.ok(http.StatusOK, "GET", fmt.Sprintf("/job/%d/deps", flow.IDOf("b")), nil, &deps)
	require.Equal(t, []core.DepJob{{ID: flow.IDOf("a"), Type: "extract", State: core.StateInactive}}, deps.Dependencies)
	require.Empty(t, deps.Dependents)
	e.ok(http.StatusOK, "GET", fmt.Sprintf("/job/%d/deps", flow.IDOf("a")), nil, &deps)
	require.Equal(t, []core.DepJob{{ID: flow.IDOf("b"), Type: "load", State: core.StateWaiting}}, deps.Dependents)

	msg := e.fails(http.StatusBadRequest, "invalid", "POST", "/flow", map[string]any{"jobs": []map[string]any{
		{"ref": "a", "spec": map[string]any{"type": "t"}, "depends_on": []any{"b"}},
		{"ref": "b", "spec": map[string]any{"type": "t"}, "depends_on": []any{"a"}},
	}})
	require.Contains(t, msg, "cycle")
}
