package service

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// errorEvery is how often queue.error is published at most, per code: an
// outage fails every request, and should not flood the bus with as many
// events.
const errorEvery = time.Second

// errorReporter publishes queue.error when core could not do its work: a
// method failed with unavailable (Redis down, failing over, core full or
// stopping) or internal (a script failing, a bug). A caller's mistakes
// (invalid, not_found, conflict) and a caller that gave up are not core's
// and are not reported. At most one event per code per errorEvery; the
// errors left out meanwhile are counted in the next one's suppressed.
type errorReporter struct {
	s *Service

	mu         sync.Mutex // guards last, suppressed
	last       map[bus.Code]time.Time
	suppressed map[bus.Code]int
}

func newErrorReporter(s *Service) *errorReporter {
	return &errorReporter{s: s, last: map[bus.Code]time.Time{}, suppressed: map[bus.Code]int{}}
}

func (r *errorReporter) report(method string, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return
	}
	code := bus.CodeOf(err)
	if code != bus.CodeUnavailable && code != bus.CodeInternal {
		return
	}
	now := r.s.cfg.Now()
	r.mu.Lock()
	if last, ok := r.last[code]; ok && now.Sub(last) < errorEvery {
		r.suppressed[code]++
		r.mu.Unlock()
		return
	}
	r.last[code] = now
	suppressed := r.suppressed[code]
	r.suppressed[code] = 0
	r.mu.Unlock()
	r.s.emit(r.s.subj.Queue(bus.QueueError), &core.Event{Event: bus.QueueError, At: now.UnixMilli(),
		Error: bus.MessageOf(err), Code: string(code), Method: method, Suppressed: suppressed})
}
