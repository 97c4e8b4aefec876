package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
)

func TestCreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{MaxBodyBytes: 4096})

	t.Run("Kue's body with options creates the job as Kue would", func(t *testing.T) {
		var out map[string]any
		e.ok(http.StatusCreated, "POST", "/job", `{"type":"email","data":{"title":"welcome"},
			"options":{"attempts":5,"priority":"high","delay":60000,"backoff":{"type":"exponential","delay":2000},
			"ttl":30000,"removeOnComplete":true}}`, &out)
		require.Equal(t, "job created", out["message"])
		id := int64(out["id"].(float64))
		got, err := e.core.Client.Get(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, "email", got.Type)
		require.JSONEq(t, `{"title":"welcome"}`, string(got.Data))
		require.Equal(t, 5, got.MaxAttempts)
		require.Equal(t, core.PriorityHigh, got.Priority)
		require.EqualValues(t, 60000, got.Delay)
		require.Equal(t, core.StateDelayed, got.State)
		require.Equal(t, &core.Backoff{Type: core.BackoffExponential, Delay: 2000 * time.Millisecond}, got.Backoff)
		require.EqualValues(t, 30000, got.TTL)
		require.True(t, got.RemoveOnComplete.AtOnce)
	})

	t.Run("Kue's backoff true waits the job's delay, and a backoff without delay takes it too", func(t *testing.T) {
		job := e.create(`{"type":"email","options":{"delay":500,"backoff":true}}`)
		require.Equal(t, &core.Backoff{Type: core.BackoffFixed, Delay: 500 * time.Millisecond}, job.Backoff)
		job = e.create(`{"type":"email","options":{"delay":700,"backoff":{"type":"exponential"}}}`)
		require.Equal(t, &core.Backoff{Type: core.BackoffExponential, Delay: 700 * time.Millisecond}, job.Backoff)
		job = e.create(`{"type":"email","options":{"backoff":false}}`)
		require.Nil(t, job.Backoff)
	})

	t.Run("core.create's flat spec works too, with unique_key", func(t *testing.T) {
		job := e.create(`{"type":"sms","data":[1],"priority":-3,"max_attempts":2,"ttl":1000,"unique_key":"order-7"}`)
		require.Equal(t, core.Priority(-3), job.Priority)
		require.Equal(t, 2, job.MaxAttempts)
		require.EqualValues(t, 1000, job.TTL)
		require.Equal(t, "order-7", job.UniqueKey)
		again := e.create(`{"type":"sms","unique_key":"order-7","options":{"priority":"low"}}`)
		require.Equal(t, job.ID, again.ID, "the unfinished job holding the key comes back")
	})

	t.Run("retention is true or {age, count} in both forms", func(t *testing.T) {
		job := e.create(`{"type":"sms","remove_on_complete":{"count":10},"remove_on_fail":{"age":60000}}`)
		require.Equal(t, core.Retention{Count: 10}, job.RemoveOnComplete)
		require.Equal(t, core.Retention{Age: time.Minute}, job.RemoveOnFail)
		job = e.create(`{"type":"sms","options":{"removeOnComplete":{"age":5000,"count":3}}}`)
		require.Equal(t, core.Retention{Age: 5 * time.Second, Count: 3}, job.RemoveOnComplete, "Kue's form")
		require.Equal(t, "remove_on_fail.count: -1 is negative",
			e.fails(http.StatusBadRequest, "invalid", "POST", "/job", `{"type":"sms","remove_on_fail":{"count":-1}}`))
	})

	t.Run("stall_limit sits at the top in both forms", func(t *testing.T) {
		job := e.create(`{"type":"sms","stall_limit":0,"options":{"attempts":3}}`)
		require.Zero(t, job.StallLimit, "Kue's form")
		job = e.create(`{"type":"sms","stall_limit":4,"max_attempts":2}`)
		require.Equal(t, 4, job.StallLimit, "the flat spec")
		job = e.create(`{"type":"sms"}`)
		require.Equal(t, 1, job.StallLimit, "the node's default")
	})

	t.Run("broadcast sits at the top in both forms, and is a boolean", func(t *testing.T) {
		job := e.create(`{"type":"radio","broadcast":true,"options":{"delay":500}}`)
		require.True(t, job.Broadcast, "Kue's form")
		require.Equal(t, core.StateDelayed, job.State)
		job = e.create(`{"type":"radio","broadcast":true,"data":{"say":"hi"}}`)
		require.True(t, job.Broadcast, "the flat spec")
		require.Equal(t, core.StateDelayed, job.State, "a broadcast waits for the promoter, never in ready")
		require.Equal(t, "broadcast: expected bool, got JSON string",
			e.fails(http.StatusBadRequest, "invalid", "POST", "/job", `{"type":"radio","broadcast":"yes"}`))
	})

	t.Run("group and dependencies sit at the top in both forms", func(t *testing.T) {
		first := e.create(`{"type":"tenant","group":"shop-1","options":{"attempts":2}}`)
		require.Equal(t, "shop-1", first.Group, "Kue's form")
		job := e.create(fmt.Sprintf(`{"type":"tenant","group":"shop-2","depends_on":[%d],"on_dependency_failure":"cancel","priority":"high"}`, first.ID))
		require.Equal(t, "shop-2", job.Group, "the flat spec")
		require.Equal(t, core.StateWaiting, job.State)
		require.Equal(t, []int64{first.ID}, job.DependsOn)
		require.Equal(t, core.DepCancel, job.OnDependencyFailure)
		require.Contains(t, e.fails(http.StatusBadRequest, "invalid", "POST", "/job", `{"type":"tenant","group":"a b"}`), "group")
		require.Contains(t, e.fails(http.StatusBadRequest, "invalid", "POST", "/job", `{"type":"tenant","depends_on":[999999999]}`), "depends_on")
	})

	t.Run("an array creates all its jobs and answers an array", func(t *testing.T) {
		var out []struct {
			Message string
			ID      int64
			Job     core.Job
		}
		e.ok(http.StatusCreated, "POST", "/job", `[{"type":"a","data":1},{"type":"b","options":{"priority":"critical"}},{"type":"a","priority":"low"}]`, &out)
		require.Len(t, out, 3)
		for i, want := range []string{"a", "b", "a"} {
			require.Equal(t, "job created", out[i].Message)
			require.Equal(t, want, out[i].Job.Type)
			require.Equal(t, out[i].ID, out[i].Job.ID)
		}
		require.Equal(t, core.PriorityCritical, out[1].Job.Priority)
		require.Equal(t, core.PriorityLow, out[2].Job.Priority)
	})

	t.Run("bad bodies are 400s that name the field", func(t *testing.T) {
		for body, want := range map[string]string{
			``:                               `body: empty: expected a job {"type":...,"data":...} or an array of them`,
			`{"type":"a",`:                   `body: truncated JSON`,
			`{"type":"a"}}`:                  `body: unexpected data after the JSON value`,
			`{"type":"a" "data":1}`:          `body: not valid JSON at byte 13: invalid character '"' after object key:value pair`,
			`"email"`:                        `body: expected a JSON object, got JSON string`,
			`{"type":"a","foo":1}`:           `foo: unknown field`,
			`{"type":"a","options":{"x":1}}`: `options.x: unknown field`,
			`{"type":1}`:                     `type: expected string, got JSON number`,
			`{"type":"a.b"}`:                 `type: "a.b" is not a job type: character '.' at 1 is not one of A-Z a-z 0-9 _ -`,
			`{"type":"a","options":{"priority":"urgent"}}`:         `options.priority: "urgent" is neither a priority name (low, normal, medium, high, critical) nor an integer`,
			`{"type":"a","options":{"backoff":"yes"}}`:             `options.backoff: expected true, false or {"type":"fixed"|"exponential","delay":ms}, got "yes" (body: expected a JSON object, got JSON string)`,
			`{"type":"a","options":{"backoff":{"type":"linear"}}}`: `backoff.type: "linear" is not fixed or exponential`,
			`{"type":"a","priority":1,"options":{"attempts":2}}`:   `options: give the job's options either in "options" (Kue's form) or at the top level (core.create's spec), not both`,
			`[]`:                                `body: an empty array: no jobs given`,
			`[{"type":"never"},{"type":"b c"}]`: `jobs[1].type: "b c" is not a job type: character ' ' at 1 is not one of A-Z a-z 0-9 _ -`,
			`[{"type":"never"},{"tipe":"b"}]`:   `jobs[1].tipe: unknown field`,
			`[{"type":"never"},7]`:              `jobs[1].body: expected a JSON object, got JSON number`,
			`{"type":"never","stall_limit":-1}`: `stall_limit: -1 is outside 0..1000000`,
		} {
			msg := e.fails(http.StatusBadRequest, "invalid", "POST", "/job", body)
			require.Equal(t, want, msg, body)
		}
		var st core.Stats
		e.ok(http.StatusOK, "GET", "/stats", nil, &st)
		require.NotContains(t, st.Types, "never", "a failed array creates nothing")
	})

	t.Run("a body over the limit is 413 and says the limit", func(t *testing.T) {
		big := `{"type":"a","data":"` + strings.Repeat("x", 5000) + `"}`
		msg := e.fails(http.StatusRequestEntityTooLarge, "invalid", "POST", "/job", big)
		require.Equal(t, "body: over the limit of 4096 bytes", msg)
		msg = e.fails(http.StatusRequestEntityTooLarge, "invalid", "POST", "/job/1/log", big)
		require.Equal(t, "body: over the limit of 4096 bytes", msg)
	})

	t.Run("a body that is not JSON is 415", func(t *testing.T) {
		r := e.do("POST", "/job", `type=a`, "Content-Type", "multipart/form-data; boundary=x")
		require.Equal(t, http.StatusUnsupportedMediaType, r.status, r)
		_, msg := r.err()
		require.Equal(t, `Content-Type: "multipart/form-data; boundary=x" is not application/json`, msg)
	})
}

func TestChangeRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	job := e.create(map[string]any{"type": "email", "data": 1})
	path := fmt.Sprintf("/job/%d", job.ID)

	t.Run("PUT state moves a job, and a failed job set to inactive runs again", func(t *testing.T) {
		var out struct {
			Message string
			Job     core.Job
		}
		e.ok(http.StatusOK, "PUT", path+"/state/failed", nil, &out)
		require.Equal(t, "updated state", out.Message)
		require.Equal(t, core.StateFailed, out.Job.State)
		e.ok(http.StatusOK, "PUT", path+"/state/inactive", nil, &out)
		require.Equal(t, core.StateInactive, out.Job.State)
	})

	t.Run("PUT state refuses an unknown state and an unknown job", func(t *testing.T) {
		msg := e.fails(http.StatusBadRequest, "invalid", "PUT", path+"/state/done", nil)
		require.Equal(t, `state: "done" is not a state (delayed, inactive, active, complete, failed, cancelled, waiting)`, msg)
		e.fails(http.StatusNotFound, "not_found", "PUT", "/job/987654/state/failed", nil)
		e.fails(http.StatusBadRequest, "invalid", "PUT", "/job/x/state/failed", nil)
	})

	t.Run("PUT priority takes a name or an integer", func(t *testing.T) {
		var out struct{ Job core.Job }
		e.ok(http.StatusOK, "PUT", path+"/priority/high", nil, &out)
		require.Equal(t, core.PriorityHigh, out.Job.Priority)
		e.ok(http.StatusOK, "PUT", path+"/priority/-7", nil, &out)
		require.Equal(t, core.Priority(-7), out.Job.Priority)
		msg := e.fails(http.StatusBadRequest, "invalid", "PUT", path+"/priority/urgent", nil)
		require.Equal(t, `priority: "urgent" is neither a priority name (low, normal, medium, high, critical) nor an integer`, msg)
		e.fails(http.StatusNotFound, "not_found", "PUT", "/job/987654/priority/high", nil)
	})

	t.Run("POST log adds a line from JSON or plain text", func(t *testing.T) {
		e.ok(http.StatusOK, "POST", path+"/log", `{"line":"from json"}`, nil)
		r := e.do("POST", path+"/log", "from text", "Content-Type", "text/plain; charset=utf-8")
		require.Equal(t, http.StatusOK, r.status, r)
		var lines []string
		e.ok(http.StatusOK, "GET", path+"/log", nil, &lines)
		require.Equal(t, []string{"from json", "from text"}, lines)
		require.Equal(t, `line: missing: send {"line":"..."} or a text/plain body`, e.fails(http.StatusBadRequest, "invalid", "POST", path+"/log", `{}`))
		require.Equal(t, `line: expected string, got JSON number`, e.fails(http.StatusBadRequest, "invalid", "POST", path+"/log", `{"line":3}`))
		e.fails(http.StatusNotFound, "not_found", "POST", "/job/987654/log", `{"line":"x"}`)
	})

	t.Run("DELETE removes the job; a second DELETE is 404", func(t *testing.T) {
		var out struct{ Message string }
		e.ok(http.StatusOK, "DELETE", path, nil, &out)
		require.Equal(t, fmt.Sprintf("job %d removed", job.ID), out.Message)
		e.fails(http.StatusNotFound, "not_found", "GET", path, nil)
		e.fails(http.StatusNotFound, "not_found", "DELETE", path, nil)
		e.fails(http.StatusBadRequest, "invalid", "DELETE", "/job/abc", nil)
	})

	t.Run("an unknown route is a JSON 404, a wrong method a JSON 405", func(t *testing.T) {
		msg := e.fails(http.StatusNotFound, "no_route", "GET", "/nope", nil)
		require.Equal(t, "no route GET /nope (see docs/http.md)", msg)
		r := e.do("PATCH", "/stats", nil)
		require.Equal(t, http.StatusMethodNotAllowed, r.status, r)
		require.Equal(t, "GET, HEAD", r.header.Get("Allow"))
		code, msg := r.err()
		require.Equal(t, "no_route", code)
		require.Equal(t, "/stats takes GET or HEAD, not PATCH", msg)
	})

	t.Run("core down is 503 unavailable", func(t *testing.T) {
		require.NoError(t, e.core.Service.Stop(t.Context()))
		// "service is shutting down" while the service unsubscribes, "no
		// service answers on core.stats" once it has.
		e.fails(http.StatusServiceUnavailable, "unavailable", "GET", "/stats", nil)
	})
}
