package httpapi_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/httpapi"
	"github.com/kuebus/kuebus/node/nodetest"
)

// untilID is until that also returns the event's SSE id.
func (s *stream) untilID(event string, id int64) uint64 {
	s.t.Helper()
	for {
		ev := s.next()
		if ev.name != "job" || !containsEvent(ev.data, event, id) {
			continue
		}
		seq, err := strconv.ParseUint(ev.id, 10, 64)
		require.NoError(s.t, err, "id %q", ev.id)
		return seq
	}
}

func containsEvent(data, event string, id int64) bool {
	return strings.Contains(data, fmt.Sprintf(`"event":%q,"id":%d,`, event, id))
}

// TestTheDashboardCatchesUpAfterAReconnect: with durable events every
// event carries its stream sequence as its SSE id, and a client that
// comes back with Last-Event-ID (as EventSource does by itself) first gets
// every event it missed, in order, then the live ones.
func TestTheDashboardCatchesUpAfterAReconnect(t *testing.T) {
	t.Parallel()
	e := newEnvOn(t, nodetest.NewDurableCore(t, service.Config{}), httpapi.Config{DurableEvents: true})

	first := e.events("")
	a := e.create(map[string]any{"type": "email"})
	seen := first.untilID(bus.EventEnqueue, a.ID)

	// The browser is away: three events it misses.
	b := e.create(map[string]any{"type": "email"})
	e.ok(http.StatusOK, "POST", fmt.Sprintf("/job/%d/log", a.ID), `{"line":"hello"}`, nil)
	c := e.create(map[string]any{"type": "sms"})

	back := e.events("", "Last-Event-ID", strconv.FormatUint(seen, 10))
	for i, want := range []struct {
		event string
		id    int64
	}{{bus.EventEnqueue, b.ID}, {bus.EventLog, a.ID}, {bus.EventEnqueue, c.ID}} {
		ev := back.next()
		require.Equal(t, "job", ev.name)
		require.True(t, containsEvent(ev.data, want.event, want.id), "event %d: %s", i, ev.data)
		require.Equal(t, strconv.FormatUint(seen+1+uint64(i), 10), ev.id, "event %d", i)
	}
	d := e.create(map[string]any{"type": "email"})
	require.Equal(t, seen+4, back.untilID(bus.EventEnqueue, d.ID), "then live")

	// A filter applies to the replay too.
	sms := e.events("?type=sms", "Last-Event-ID", strconv.FormatUint(seen, 10))
	require.Equal(t, seen+3, sms.untilID(bus.EventEnqueue, c.ID))

	r := e.do("GET", "/events", nil, "Last-Event-ID", "x")
	require.Equal(t, http.StatusBadRequest, r.status)
	code, msg := r.err()
	require.Equal(t, "invalid", code)
	require.Equal(t, `Last-Event-ID: "x" is not an event's sequence (a whole number)`, msg)
}
