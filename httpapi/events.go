package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// GET /events is a server-sent event stream of every event on the bus:
//
//	event: ready           once, when the stream is subscribed
//	event: job             data: a job event's body, as core published it
//	event: queue           data: a queue event's body (queue.leader, ...)
//	event: lagged          events were dropped: read everything again
//	: ping                 a comment every Heartbeat, to keep proxies open
//
// ?type=T and ?id=N narrow the job events to one type or one job; queue
// events always pass.
//
// With durable events (Config.DurableEvents) every job and queue event
// carries "id: <stream sequence>", and a client that reconnects with
// Last-Event-ID (as a browser's EventSource does by itself) first gets
// every event stored after that one, then the live ones: no lagged event,
// since each stream reads the durable stream at its own pace
// (events_durable.go).

// sseBuffer is how many events a stream may be behind before it lags.
const sseBuffer = 256

// sseMsg is one event on its way to the streams.
type sseMsg struct {
	kind string // "job" or "queue": the SSE event name
	id   int64  // job events only
	typ  string
	data []byte
}

// stream is one GET /events client.
type stream struct {
	ch     chan sseMsg
	lagged chan struct{} // 1-buffered: "dropped something since last told"
	id     int64         // 0: any job
	typ    string        // "": any type
}

func (st *stream) wants(m *sseMsg) bool {
	return m.kind != "job" || ((st.id == 0 || st.id == m.id) && (st.typ == "" || st.typ == m.typ))
}

// hub fans the events of the server's one subscription out to the streams.
// A stream that cannot keep up loses events and is told so; it never slows
// the others or the NATS connection.
type hub struct {
	mu      sync.Mutex
	streams map[*stream]struct{}
	done    chan struct{} // closed by close: every stream ends
	closed  bool
}

func newHub() *hub {
	return &hub{streams: map[*stream]struct{}{}, done: make(chan struct{})}
}

func (h *hub) add(st *stream) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.streams[st] = struct{}{}
	return true
}

func (h *hub) remove(st *stream) {
	h.mu.Lock()
	delete(h.streams, st)
	h.mu.Unlock()
}

func (h *hub) broadcast(m sseMsg) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for st := range h.streams {
		if !st.wants(&m) {
			continue
		}
		select {
		case st.ch <- m:
		default:
			select {
			case st.lagged <- struct{}{}:
			default:
			}
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.done)
	}
}

// onEvent receives every job and queue event: it feeds the metrics and the
// streams. It runs on the subscription's goroutine and never blocks.
func (s *Server) onEvent(m *nats.Msg) {
	msg := sseMsg{kind: "queue", data: m.Data}
	if _, id, typ, err := s.subj.ParseJob(m.Subject); err == nil {
		msg.kind, msg.id, msg.typ = "job", id, typ
	}
	// Decoding costs more than fanning out: only for a real backend.
	if _, none := s.metrics.(nopMetrics); !none {
		var ev core.Event
		if json.Unmarshal(m.Data, &ev) == nil {
			s.metrics.Event(&ev)
		}
	}
	s.hub.broadcast(msg)
}

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	st := &stream{ch: make(chan sseMsg, sseBuffer), lagged: make(chan struct{}, 1)}
	q := r.URL.Query()
	if raw := q.Get("id"); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id <= 0 {
			s.writeError(w, r, badRequest("id: %q is not a job id (a positive integer)", raw))
			return
		}
		st.id = id
	}
	if st.typ = q.Get("type"); st.typ != "" {
		if err := bus.ValidToken(st.typ); err != nil {
			s.writeError(w, r, badRequest("type: %q is not a job type: %v", st.typ, err))
			return
		}
	}
	if s.cfg.DurableEvents {
		s.durableEvents(w, r, st)
		return
	}
	if !s.hub.add(st) {
		s.writeError(w, r, bus.Errorf(bus.CodeUnavailable, "the server is shutting down"))
		return
	}
	defer s.hub.remove(st)

	rc, buf := openSSE(w)
	heartbeat := time.NewTicker(s.cfg.Heartbeat)
	defer heartbeat.Stop()
	for {
		if !sendSSE(w, rc, buf) {
			return
		}
		select {
		case m := <-st.ch:
			writeSSE(buf, m.kind, m.data)
			// Send what else is waiting in the same write.
			for more := true; more && buf.Len() < 64<<10; {
				select {
				case m = <-st.ch:
					writeSSE(buf, m.kind, m.data)
				default:
					more = false
				}
			}
		case <-st.lagged:
			writeSSE(buf, "lagged", []byte(fmt.Sprintf(`{"buffer":%d}`, sseBuffer)))
		case <-heartbeat.C:
			buf.WriteString(": ping\n\n")
		case <-r.Context().Done():
			return
		case <-s.hub.done:
			return
		}
	}
}

// writeSSE appends one event. Each line of data gets its own "data:" field,
// so a body with newlines cannot end the event early.
func writeSSE(buf *bytes.Buffer, event string, data []byte) {
	buf.WriteString("event: ")
	buf.WriteString(event)
	buf.WriteByte('\n')
	for line := range strings.SplitSeq(string(data), "\n") {
		buf.WriteString("data: ")
		buf.WriteString(line)
		buf.WriteByte('\n')
	}
	buf.WriteByte('\n')
}

// openSSE answers an event stream's headers and queues its first lines
// (the reconnect delay, then "ready"): the controller that flushes the
// stream, and the buffer of what is still to be sent (sendSSE).
func openSSE(w http.ResponseWriter) (*http.ResponseController, *bytes.Buffer) {
	rc := http.NewResponseController(w)
	// A stream outlives any write timeout a host server may set.
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	buf := &bytes.Buffer{}
	buf.WriteString("retry: 2000\n")
	writeSSE(buf, "ready", []byte("{}"))
	return rc, buf
}

// sendSSE writes what buf holds to the client and flushes it: false when
// the client is gone.
func sendSSE(w http.ResponseWriter, rc *http.ResponseController, buf *bytes.Buffer) bool {
	if buf.Len() == 0 {
		return true
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return false
	}
	if err := rc.Flush(); err != nil {
		return false
	}
	buf.Reset()
	return true
}
