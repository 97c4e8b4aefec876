package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kuebus/kuebus/bus"
)

// durableBuffer is how many stored events a durable stream reads ahead of
// what it has written; the reader then waits, it never drops.
const durableBuffer = 256

// durableEvents serves GET /events from the durable event stream: from the
// event after Last-Event-ID, or from the next event stored. Each client has
// its own reader (an ordered consumer), so a slow client only slows itself.
func (s *Server) durableEvents(w http.ResponseWriter, r *http.Request, st *stream) {
	from, err := s.durableStart(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	msgs := make(chan bus.StoredEvent, durableBuffer)
	var reader sync.WaitGroup
	var readErr error
	reader.Go(func() {
		defer close(msgs)
		readErr = bus.ReplayEvents(ctx, s.cfg.Conn, s.subj, bus.ReplayOptions{FromSeq: from}, func(ev bus.StoredEvent) error {
			select {
			case msgs <- ev:
				return nil
			case <-ctx.Done():
				return nil
			}
		})
	})
	defer reader.Wait()
	defer cancel()

	rc, buf := openSSE(w)
	heartbeat := time.NewTicker(s.cfg.Heartbeat)
	defer heartbeat.Stop()
	add := func(ev bus.StoredEvent) {
		m := sseMsg{kind: "queue", data: ev.Data}
		if _, id, typ, err := s.subj.ParseJob(ev.Subject); err == nil {
			m.kind, m.id, m.typ = "job", id, typ
		}
		if !st.wants(&m) {
			return
		}
		buf.WriteString("id: ")
		buf.WriteString(strconv.FormatUint(ev.Seq, 10))
		buf.WriteByte('\n')
		writeSSE(buf, m.kind, m.data)
	}
	for {
		if !sendSSE(w, rc, buf) {
			return
		}
		select {
		case ev, ok := <-msgs:
			if !ok {
				if readErr != nil && ctx.Err() == nil {
					s.log.Warn("durable event stream ended", "err", readErr)
				}
				return
			}
			add(ev)
			for more := true; more && buf.Len() < 64<<10; {
				select {
				case ev, ok = <-msgs:
					if !ok {
						more = false
						break
					}
					add(ev)
				default:
					more = false
				}
			}
		case <-heartbeat.C:
			buf.WriteString(": ping\n\n")
		case <-r.Context().Done():
			return
		case <-s.hub.done:
			return
		}
	}
}

// durableStart is the stream sequence a durable /events starts at: the
// one after Last-Event-ID, or the next one stored.
func (s *Server) durableStart(r *http.Request) (uint64, error) {
	if raw := strings.TrimSpace(r.Header.Get("Last-Event-ID")); raw != "" {
		seq, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			return 0, badRequest("Last-Event-ID: %q is not an event's sequence (a whole number)", raw)
		}
		return seq + 1, nil
	}
	next, err := bus.EventStreamNext(r.Context(), s.cfg.Conn, s.subj)
	if errors.Is(err, bus.ErrNotDurable) {
		return 0, bus.Errorf(bus.CodeUnavailable, "%v", err)
	}
	return next, err
}
