package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
)

func TestReadRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	a := e.create(map[string]any{"type": "email", "data": map[string]string{"to": "a@example.com"}})
	b := e.create(map[string]any{"type": "email", "data": 2, "priority": "high"})
	c := e.create(map[string]any{"type": "sms", "data": 3})
	d := e.create(map[string]any{"type": "sms", "delay": 60000})
	e.ok(http.StatusOK, "PUT", fmt.Sprintf("/job/%d/state/failed", c.ID), nil, nil)

	t.Run("GET /stats counts per state and type, with Kue's names too", func(t *testing.T) {
		var st map[string]any
		e.ok(http.StatusOK, "GET", "/stats", nil, &st)
		require.EqualValues(t, 2, st["inactive"])
		require.EqualValues(t, 2, st["inactiveCount"])
		require.EqualValues(t, 1, st["failed"])
		require.EqualValues(t, 1, st["failedCount"])
		require.EqualValues(t, 1, st["delayedCount"])
		require.EqualValues(t, 0, st["workTime"])
		types := st["types"].(map[string]any)
		require.EqualValues(t, 2, types["email"].(map[string]any)["inactive"])
		require.EqualValues(t, 1, types["sms"].(map[string]any)["delayed"])
	})

	t.Run("GET /job/types lists the types as a bare array", func(t *testing.T) {
		var types []string
		e.ok(http.StatusOK, "GET", "/job/types", nil, &types)
		require.Equal(t, []string{"email", "sms"}, types)
	})

	t.Run("GET /job/{id} returns the job with its data", func(t *testing.T) {
		var got core.Job
		e.ok(http.StatusOK, "GET", fmt.Sprintf("/job/%d", a.ID), nil, &got)
		require.Equal(t, a, got)
		require.JSONEq(t, `{"to":"a@example.com"}`, string(got.Data))
	})

	t.Run("GET /job/{id} refuses ids that are not positive integers and says which", func(t *testing.T) {
		for _, id := range []string{"abc", "0", "-3", "1.5", "99999999999999999999"} {
			msg := e.fails(http.StatusBadRequest, "invalid", "GET", "/job/"+id, nil)
			require.Equal(t, fmt.Sprintf("id: %q is not a job id (a positive integer)", id), msg)
		}
		msg := e.fails(http.StatusBadRequest, "invalid", "GET", "/job/x/log", nil)
		require.Contains(t, msg, `id: "x"`)
	})

	t.Run("an unknown id is 404 not_found", func(t *testing.T) {
		msg := e.fails(http.StatusNotFound, "not_found", "GET", "/job/987654", nil)
		require.Equal(t, "job 987654 not found", msg)
		e.fails(http.StatusNotFound, "not_found", "GET", "/job/987654/log", nil)
	})

	t.Run("GET /job/{id}/log is a bare array of lines, [] when none", func(t *testing.T) {
		var lines []string
		e.ok(http.StatusOK, "GET", fmt.Sprintf("/job/%d/log", a.ID), nil, &lines)
		require.Equal(t, []string{}, lines)
		require.NoError(t, e.core.Client.AddLog(t.Context(), a.ID, "one"))
		e.ok(http.StatusOK, "GET", fmt.Sprintf("/job/%d/log", a.ID), nil, &lines)
		require.Equal(t, []string{"one"}, lines)
	})

	ids := func(path string) []int64 {
		t.Helper()
		var jobs []core.Job
		e.ok(http.StatusOK, "GET", path, nil, &jobs)
		out := []int64{}
		for _, j := range jobs {
			out = append(out, j.ID)
		}
		return out
	}
	t.Run("GET /jobs/FROM..TO pages through every job by creation", func(t *testing.T) {
		require.Equal(t, []int64{a.ID, b.ID, c.ID, d.ID}, ids("/jobs/0..9"))
		require.Equal(t, []int64{d.ID, c.ID}, ids("/jobs/0..1/desc"))
		require.Equal(t, []int64{b.ID}, ids("/jobs/1..1/asc"))
		require.Equal(t, []int64{}, ids("/jobs/50..59"))
	})
	t.Run("GET /jobs/STATE/FROM..TO uses the state's order", func(t *testing.T) {
		require.Equal(t, []int64{b.ID, a.ID}, ids("/jobs/inactive/0..9"), "high priority first")
		require.Equal(t, []int64{a.ID, b.ID}, ids("/jobs/inactive/0..9/desc"))
		require.Equal(t, []int64{c.ID}, ids("/jobs/failed/0..9"))
		require.Equal(t, []int64{a.ID, b.ID, c.ID, d.ID}, ids("/jobs/all/0..9"))
	})
	t.Run("GET /jobs/TYPE/STATE/FROM..TO narrows to one type", func(t *testing.T) {
		require.Equal(t, []int64{b.ID, a.ID}, ids("/jobs/email/inactive/0..9"))
		require.Equal(t, []int64{}, ids("/jobs/sms/inactive/0..9"))
		require.Equal(t, []int64{d.ID, c.ID}, ids("/jobs/sms/all/0..9/desc"))
		require.Equal(t, []int64{}, ids("/jobs/nosuch/inactive/0..9"))
	})

	t.Run("bad /jobs paths say what is wrong", func(t *testing.T) {
		for path, want := range map[string]string{
			"/jobs/5..1":                   `range "5..1": to 1 is before from 5`,
			"/jobs/a..9":                   `range "a..9": from "a" is not a number`,
			"/jobs/0..z":                   `range "0..z": to "z" is not a number`,
			"/jobs/-1..3":                  `range "-1..3": from -1 is negative`,
			"/jobs/0..1000":                `range "0..1000": more than 1000 jobs; ask for at most 1000 per page`,
			"/jobs/done/0..9":              `state: "done" is not a state (delayed, inactive, active, complete, failed, cancelled, waiting, or all)`,
			"/jobs/email/done/0..9":        `state: "done" is not a state (delayed, inactive, active, complete, failed, cancelled, waiting, or all)`,
			"/jobs/0..9/up":                `order: "up" is not asc or desc`,
			"/jobs/inactive":               `range: no FROM..TO in /jobs/inactive: expected /jobs/[TYPE/][STATE/]FROM..TO[/ORDER]`,
			"/jobs/a/b/c/0..9":             `path: /jobs/a/b/c/0..9 has 4 segments: expected /jobs/[TYPE/][STATE/]FROM..TO[/ORDER]`,
			"/jobs/0..9/asc/more":          `path: /jobs/0..9/asc/more has 3 segments: expected /jobs/[TYPE/][STATE/]FROM..TO[/ORDER]`,
			"/jobs/e%2Bmail/inactive/0..1": `type: "e+mail" is not a job type: character '+' at 1 is not one of A-Z a-z 0-9 _ -`,
		} {
			msg := e.fails(http.StatusBadRequest, "invalid", "GET", path, nil)
			require.Equal(t, want, msg, path)
		}
	})
}

// TestGetJobByTypeAndUniqueKey: GET /job?type&unique_key returns the
// unfinished job holding the key; a key nobody holds is 404; a half query
// is 400.
func TestGetJobByTypeAndUniqueKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	k := e.create(map[string]any{"type": "invoice", "unique_key": "INV 42/7"})
	var got core.Job
	e.ok(http.StatusOK, "GET", "/job?type=invoice&unique_key=INV+42%2F7", nil, &got)
	require.Equal(t, k.ID, got.ID)
	msg := e.fails(http.StatusNotFound, "not_found", "GET", "/job?type=invoice&unique_key=nope", nil)
	require.Equal(t, `no unfinished invoice job holds unique_key "nope"`, msg)
	msg = e.fails(http.StatusBadRequest, "invalid", "GET", "/job?unique_key=k", nil)
	require.Contains(t, msg, "type: missing")
	msg = e.fails(http.StatusBadRequest, "invalid", "GET", "/job", nil)
	require.Contains(t, msg, "type, unique_key: missing")
}
