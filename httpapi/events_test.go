package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
)

func TestEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})

	t.Run("a job created through the API reaches the stream as core published it", func(t *testing.T) {
		st := e.events("")
		job := e.create(map[string]any{"type": "email", "data": 1})
		ev := st.until(bus.EventEnqueue, job.ID)
		require.Equal(t, "email", ev.Type)
		require.Equal(t, core.StateInactive, ev.Job.State)

		e.ok(http.StatusOK, "POST", fmt.Sprintf("/job/%d/log", job.ID), `{"line":"hello"}`, nil)
		require.Equal(t, "hello", st.until(bus.EventLog, job.ID).Line)
	})

	t.Run("queue events pass as event: queue", func(t *testing.T) {
		st := e.events("")
		e.create(map[string]any{"type": "later", "delay": 60000})
		for {
			ev := st.next()
			if ev.name == "queue" {
				var body core.Event
				require.NoError(t, json.Unmarshal([]byte(ev.data), &body))
				require.Equal(t, bus.QueueDue, body.Event)
				require.Positive(t, body.DueAt)
				return
			}
		}
	})

	t.Run("?type= and ?id= narrow the job events", func(t *testing.T) {
		byType := e.events("?type=sms")
		other := e.create(map[string]any{"type": "email"})
		want := e.create(map[string]any{"type": "sms"})
		byID := e.events(fmt.Sprintf("?id=%d", other.ID))
		e.ok(http.StatusOK, "PUT", fmt.Sprintf("/job/%d/state/failed", want.ID), nil, nil)
		e.ok(http.StatusOK, "PUT", fmt.Sprintf("/job/%d/state/failed", other.ID), nil, nil)

		ev := byType.next()
		require.Equal(t, "job", ev.name)
		require.Contains(t, ev.data, fmt.Sprintf(`"id":%d`, want.ID), "the email job's events are filtered out")
		ev = byID.next()
		require.Equal(t, "job", ev.name)
		require.Contains(t, ev.data, fmt.Sprintf(`"event":"failed","id":%d`, other.ID))

		require.Equal(t, `id: "x" is not a job id (a positive integer)`, e.fails(http.StatusBadRequest, "invalid", "GET", "/events?id=x", nil))
		require.Equal(t, `type: "a.b" is not a job type: character '.' at 1 is not one of A-Z a-z 0-9 _ -`,
			e.fails(http.StatusBadRequest, "invalid", "GET", "/events?type=a.b", nil))
	})

	t.Run("an idle stream gets heartbeats", func(t *testing.T) {
		hb := newEnv(t, httpapi.Config{Heartbeat: 10 * time.Millisecond})
		st := hb.events("")
		require.Equal(t, sseEvent{name: ":", data: "ping"}, st.next())
		job := hb.create(map[string]any{"type": "a"})
		st.until(bus.EventEnqueue, job.ID)
	})

	t.Run("Close ends every stream", func(t *testing.T) {
		closing := newEnv(t, httpapi.Config{})
		st := closing.events("")
		closing.srv.Close()
		select {
		case _, ok := <-st.events:
			require.False(t, ok, "no event after Close")
		case <-time.After(waitTimeout):
			t.Fatal("the stream did not end")
		}
		require.Equal(t, "the server is shutting down", closing.fails(http.StatusServiceUnavailable, "unavailable", "GET", "/events", nil))
	})
}
