package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/httpapi"
)

func TestPopAndFinish(t *testing.T) {
	t.Parallel()
	waiting := make(chan []string, 16)
	e := newEnv(t, httpapi.Config{MaxPopWait: 20 * time.Second},
		service.Config{OnLeaseWait: func(types []string) { waiting <- types }})

	pop := func(query string) core.Job {
		t.Helper()
		var job core.Job
		e.ok(http.StatusOK, "POST", "/pop?"+query, nil, &job)
		require.NotEmpty(t, job.Lease)
		require.Equal(t, core.StateActive, job.State)
		return job
	}

	t.Run("pop with nothing ready is 204 at once", func(t *testing.T) {
		r := e.do("POST", "/pop?type=empty", nil)
		require.Equal(t, http.StatusNoContent, r.status, r)
		require.Empty(t, r.body)
	})

	t.Run("pop leases a job; complete with its lease finishes it", func(t *testing.T) {
		job := e.create(map[string]any{"type": "email", "data": 1})
		got := pop("type=email&worker=curl-1")
		require.Equal(t, job.ID, got.ID)
		require.Equal(t, "curl-1", got.WorkerID)
		path := fmt.Sprintf("/job/%d/", got.ID)

		var touch struct {
			LeaseUntil int64 `json:"lease_until"`
		}
		e.ok(http.StatusOK, "POST", path+"touch", map[string]any{"lease": got.Lease}, &touch)
		require.GreaterOrEqual(t, touch.LeaseUntil, got.LeaseUntil)

		msg := e.fails(http.StatusConflict, "conflict", "POST", path+"complete", map[string]any{"lease": "stale-token"})
		require.Contains(t, msg, "lease")
		e.ok(http.StatusOK, "POST", path+"complete", map[string]any{"lease": got.Lease, "result": map[string]int{"sent": 1}}, nil)
		done, err := e.core.Client.Get(t.Context(), got.ID)
		require.NoError(t, err)
		require.Equal(t, core.StateComplete, done.State)
		require.JSONEq(t, `{"sent":1}`, string(done.Result))

		// A retry with the spent lease (its answer was lost) succeeds and
		// changes nothing; another operation with it is a conflict.
		e.ok(http.StatusOK, "POST", path+"complete", map[string]any{"lease": got.Lease}, nil)
		e.fails(http.StatusConflict, "conflict", "POST", path+"fail", map[string]any{"lease": got.Lease, "error": "late"})
	})

	t.Run("fail with the last attempt fails the job and answers it", func(t *testing.T) {
		job := e.create(map[string]any{"type": "report"})
		got := pop("type=report")
		var failed core.Job
		e.ok(http.StatusOK, "POST", fmt.Sprintf("/job/%d/fail", job.ID), map[string]any{"lease": got.Lease, "error": "disk full"}, &failed)
		require.Equal(t, core.StateFailed, failed.State)
		require.Equal(t, "disk full", failed.Error)
	})

	t.Run("release gives the job back, with no attempt used", func(t *testing.T) {
		job := e.create(map[string]any{"type": "thumb"})
		got := pop("type=thumb,other")
		e.ok(http.StatusOK, "POST", fmt.Sprintf("/job/%d/release", job.ID), map[string]any{"lease": got.Lease}, nil)
		back, err := e.core.Client.Get(t.Context(), job.ID)
		require.NoError(t, err)
		require.Equal(t, core.StateInactive, back.State)
		require.Zero(t, back.Attempts)
	})

	t.Run("pop with wait answers as soon as a job comes", func(t *testing.T) {
		popped := make(chan reply, 1)
		go func() {
			r, err := e.send("POST", "/pop?type=late&wait=10000", nil)
			if err != nil {
				r.body = []byte(err.Error())
			}
			popped <- r
		}()
		select {
		case types := <-waiting:
			require.True(t, slices.Contains(types, "late"), types)
		case <-time.After(waitTimeout):
			t.Fatal("the pop never waited")
		}
		job := e.create(map[string]any{"type": "late"})
		select {
		case r := <-popped:
			require.Equal(t, http.StatusOK, r.status, r)
			require.Contains(t, r.String(), fmt.Sprintf(`"id":%d`, job.ID))
		case <-time.After(waitTimeout):
			t.Fatal("the waiting pop did not get the job")
		}
	})

	t.Run("a pop with a ttl leases for that long, and a touch extends by it", func(t *testing.T) {
		job := e.create(map[string]any{"type": "short"}) // the job's own ttl: 60 s
		before := time.Now().UnixMilli()
		r := e.do("POST", "/pop?type=short&ttl=5000", nil)
		require.Equal(t, http.StatusOK, r.status, r)
		var got core.Job
		require.NoError(t, json.Unmarshal([]byte(r.String()), &got))
		require.Equal(t, job.ID, got.ID)
		require.InDelta(t, before+5000, got.LeaseUntil, 2000, "lease_until is now + 5 s, not + 60 s")
	})

	t.Run("bad pops and lease bodies say what is wrong", func(t *testing.T) {
		for query, want := range map[string]string{
			"":                  "type: missing: POST /pop?type=T (several: type=T,U)",
			"type=a&ttl=0":      `ttl: "0" is not a positive number of milliseconds`,
			"type=a&wait=soon":  `wait: "soon" is not a number of milliseconds`,
			"type=a&wait=20001": "wait: 20001 ms is over the limit of 20000 ms",
			// × 1ms wraps to about 10 s, under the limit, in a time.Duration.
			"type=a&wait=18446744083710": "wait: 18446744083710 ms is over the limit of 20000 ms",
			"type=a&size=2":              "size: unknown parameter (pop takes type, ttl, wait and worker)",
			"type=a.b":                   `types: [0] "a.b" is not a job type: character '.' at 1 is not one of A-Z a-z 0-9 _ -`,
		} {
			require.Equal(t, want, e.fails(http.StatusBadRequest, "invalid", "POST", "/pop?"+query, nil), query)
		}
		job := e.create(map[string]any{"type": "bad"})
		path := fmt.Sprintf("/job/%d/", job.ID)
		require.Equal(t, `lease: missing: send {"lease":"<the token from POST /pop>"}`,
			e.fails(http.StatusBadRequest, "invalid", "POST", path+"complete", `{}`))
		require.Equal(t, "body: truncated JSON", e.fails(http.StatusBadRequest, "invalid", "POST", path+"fail", `{"lease":`))
		require.Equal(t, "error: only fail takes an error, final and a stack",
			e.fails(http.StatusBadRequest, "invalid", "POST", path+"complete", `{"lease":"x","error":"no"}`))
		require.Equal(t, "token: unknown field", e.fails(http.StatusBadRequest, "invalid", "POST", path+"touch", `{"token":"x"}`))
		e.fails(http.StatusNotFound, "not_found", "POST", "/job/987654/complete", `{"lease":"x"}`)
		e.fails(http.StatusBadRequest, "invalid", "POST", "/job/nope/touch", `{"lease":"x"}`)
	})
}

// TestPopWaitCannotBeConfiguredPastCoresLimit: core refuses a lease that
// waits longer than core.MaxLeaseWait, so a longer MaxPopWait could only
// turn pops into errors.
func TestPopWaitCannotBeConfiguredPastCoresLimit(t *testing.T) {
	t.Parallel()
	conn := bustest.NewServer(t).Conn
	_, err := httpapi.New(httpapi.Config{Conn: conn, MaxPopWait: core.MaxLeaseWait*time.Millisecond + time.Millisecond})
	require.ErrorContains(t, err, "MaxPopWait 5m0.001s is over core's limit on a lease's wait, 5m0s")
	_, err = httpapi.New(httpapi.Config{Conn: conn, MaxPopWait: core.MaxLeaseWait * time.Millisecond})
	require.NoError(t, err)
}

// TestProgressAndRejoinForPopClients: a pop client sets progress and puts
// its job back for later without NATS; fail carries a stack to the job's
// error history, and a delay before the retry; bad bodies are 400 invalid
// and change nothing.
func TestProgressAndRejoinForPopClients(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	job := e.create(map[string]any{"type": "report", "max_attempts": 3})
	var got core.Job
	e.ok(http.StatusOK, "POST", "/pop?type=report", nil, &got)
	path := fmt.Sprintf("/job/%d/", got.ID)

	e.ok(http.StatusOK, "POST", path+"progress", map[string]any{"lease": got.Lease, "complete": 3, "total": 4}, nil)
	now, err := e.core.Client.Get(t.Context(), job.ID)
	require.NoError(t, err)
	require.Equal(t, 75, now.Progress)

	msg := e.fails(http.StatusBadRequest, "invalid", "POST", path+"progress", map[string]any{"lease": got.Lease, "complete": 1})
	require.Contains(t, msg, "progress needs complete and total")
	msg = e.fails(http.StatusBadRequest, "invalid", "POST", path+"rejoin", map[string]any{"lease": got.Lease, "delay": -1})
	require.Contains(t, msg, "delay: -1")
	msg = e.fails(http.StatusBadRequest, "invalid", "POST", path+"rejoin", map[string]any{"delay": 5})
	require.Contains(t, msg, "lease: missing")
	now, err = e.core.Client.Get(t.Context(), job.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateActive, now.State, "bad bodies changed nothing")
	require.Equal(t, 75, now.Progress)

	e.ok(http.StatusOK, "POST", path+"rejoin", map[string]any{"lease": got.Lease, "delay": 60000}, nil)
	now, err = e.core.Client.Get(t.Context(), job.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateDelayed, now.State)
	require.Zero(t, now.Attempts, "a rejoin uses no attempt")

	// A second job: fail with a stack.
	other := e.create(map[string]any{"type": "thumb", "max_attempts": 2})
	e.ok(http.StatusOK, "POST", "/pop?type=thumb", nil, &got)
	e.ok(http.StatusOK, "POST", fmt.Sprintf("/job/%d/fail", got.ID), map[string]any{"lease": got.Lease, "error": "boom", "stack": "app.py:12"}, nil)
	var shown core.Job
	e.ok(http.StatusOK, "GET", fmt.Sprintf("/job/%d", other.ID), nil, &shown)
	require.Len(t, shown.Errors, 1, "GET /job/:id has the error history")
	require.Equal(t, "app.py:12", shown.Errors[0].Stack)

	// A third: fail with a delay of its own, 400 when bad, else the job
	// waits that long (it has no backoff).
	third := e.create(map[string]any{"type": "crop", "max_attempts": 2})
	e.ok(http.StatusOK, "POST", "/pop?type=crop", nil, &got)
	failPath := fmt.Sprintf("/job/%d/fail", third.ID)
	msg = e.fails(http.StatusBadRequest, "invalid", "POST", failPath, map[string]any{"lease": got.Lease, "error": "x", "delay": -5})
	require.Contains(t, msg, "delay: -5 ms is outside")
	var failed core.Job
	e.ok(http.StatusOK, "POST", failPath, map[string]any{"lease": got.Lease, "error": "429", "delay": 30000}, &failed)
	require.Equal(t, core.StateDelayed, failed.State)
	require.Equal(t, failed.UpdatedAt+30000, failed.PromoteAt)
}
