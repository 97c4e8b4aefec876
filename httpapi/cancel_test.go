package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
)

func TestCancelRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{MaxBodyBytes: 4096})

	t.Run("cancels a job, with or without a reason, and publishes job.cancel", func(t *testing.T) {
		st := e.events("")
		for _, body := range []any{nil, `{"reason":"by hand"}`} {
			job := e.create(`{"type":"email"}`)
			var out struct {
				Message string
				Job     core.Job
			}
			e.ok(http.StatusOK, "POST", fmt.Sprintf("/job/%d/cancel", job.ID), body, &out)
			require.Equal(t, fmt.Sprintf("job %d cancelled", job.ID), out.Message)
			require.Equal(t, core.StateCancelled, out.Job.State)
			ev := st.until(bus.EventCancel, job.ID)
			if body != nil {
				require.Equal(t, "by hand", ev.Reason)
			}
		}
	})

	t.Run("a finished job is 409 and an unknown one 404", func(t *testing.T) {
		job := e.create(`{"type":"email"}`)
		e.ok(http.StatusOK, "POST", fmt.Sprintf("/job/%d/cancel", job.ID), nil, nil)
		msg := e.fails(http.StatusConflict, "conflict", "POST", fmt.Sprintf("/job/%d/cancel", job.ID), nil)
		require.Contains(t, msg, "cancelled already")
		e.fails(http.StatusNotFound, "not_found", "POST", "/job/987654/cancel", nil)
	})

	t.Run("bad input is 400 and changes nothing", func(t *testing.T) {
		job := e.create(`{"type":"email"}`)
		path := fmt.Sprintf("/job/%d/cancel", job.ID)
		for _, body := range []string{`{"reason":7}`, `{"why":"x"}`, `nope`} {
			e.fails(http.StatusBadRequest, "invalid", "POST", path, body)
		}
		e.fails(http.StatusBadRequest, "invalid", "POST", "/job/-1/cancel", nil)
		got, err := e.core.Client.Get(t.Context(), job.ID)
		require.NoError(t, err)
		require.Equal(t, core.StateInactive, got.State)
	})
}

func TestBulkRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{MaxBodyBytes: 4096})
	for range 3 {
		e.create(`{"type":"email"}`)
	}
	var out core.BulkActionReply
	e.ok(http.StatusOK, "POST", "/jobs/bulk", `{"action":"cancel","state":"inactive","type":"email","limit":2}`, &out)
	require.Equal(t, 2, out.Done)
	require.True(t, out.More)
	cursor := out.Cursor
	out = core.BulkActionReply{}
	e.ok(http.StatusOK, "POST", "/jobs/bulk", fmt.Sprintf(`{"action":"cancel","state":"inactive","type":"email","limit":2,"cursor":%q}`, cursor), &out)
	require.Equal(t, core.BulkActionReply{Matched: 1, Done: 1}, out)

	for _, body := range []string{`{"action":"explode","state":"failed"}`, `{"action":"retry","state":"done"}`,
		`{"action":"retry","state":"inactive"}`, `{"action":"remove","state":"failed","before":-1}`,
		`{"action":"remove","state":"failed","limit":10001}`, `{"action":"remove","state":"failed","limit":-2}`, `nope`} {
		e.fails(http.StatusBadRequest, "invalid", "POST", "/jobs/bulk", body)
	}
	n, err := e.core.Client.Count(t.Context(), core.StateCancelled, "email")
	require.NoError(t, err)
	require.Equal(t, int64(3), n, "bad requests changed nothing")
}
