package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
)

// TestSchedulesOverREST: PUT sets a schedule under the path's name, GET
// reads one or all, DELETE removes it; bad input is 400 invalid and
// stores nothing, a missing schedule 404.
func TestSchedulesOverREST(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{MaxBodyBytes: 4096})

	var sc core.Schedule
	e.ok(http.StatusOK, "PUT", "/schedules/nightly", `{"cron":"0 3 * * *","tz":"Europe/Paris","spec":{"type":"report","priority":"high"}}`, &sc)
	require.Equal(t, "nightly", sc.Name)
	require.Equal(t, "0 3 * * *", sc.Cron)
	require.Equal(t, core.PriorityHigh, sc.Spec.Priority)
	require.Positive(t, sc.NextAt)

	var one core.Schedule
	e.ok(http.StatusOK, "GET", "/schedules/nightly", nil, &one)
	require.Equal(t, sc, one)
	var all core.SchedulesReply
	e.ok(http.StatusOK, "GET", "/schedules", nil, &all)
	require.Equal(t, []core.Schedule{sc}, all.Schedules)

	for _, body := range []string{
		`{"spec":{"type":"report"}}`,
		`{"cron":"0 3 * * *","every":60000,"spec":{"type":"report"}}`,
		`{"every":-5,"spec":{"type":"report"}}`,
		`{"cron":"bad","spec":{"type":"report"}}`,
		`{"every":60000,"spec":{"type":"a b"}}`,
		`{"name":"other","every":60000,"spec":{"type":"report"}}`,
	} {
		e.fails(http.StatusBadRequest, "invalid", "PUT", "/schedules/s2", body)
	}
	e.fails(http.StatusBadRequest, "invalid", "PUT", "/schedules/a.b", `{"every":60000,"spec":{"type":"report"}}`)

	var ran core.Job
	e.ok(http.StatusCreated, "POST", "/schedules/nightly/run", nil, &ran)
	require.Equal(t, "nightly", ran.Schedule, "run now: the schedule's job, made now")
	require.Equal(t, core.StateInactive, ran.State)
	e.fails(http.StatusNotFound, "not_found", "POST", "/schedules/nope/run", nil)

	var out map[string]any
	e.ok(http.StatusOK, "DELETE", "/schedules/nightly", nil, &out)
	require.Equal(t, "schedule nightly removed", out["message"])
	e.fails(http.StatusNotFound, "not_found", "DELETE", "/schedules/nightly", nil)
	e.fails(http.StatusNotFound, "not_found", "GET", "/schedules/nightly", nil)
	e.ok(http.StatusOK, "GET", "/schedules", nil, &all)
	require.Empty(t, all.Schedules, "bad input stored nothing")
}
