package service

import (
	"context"
	"encoding/json"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// pause and resume: a paused type keeps its jobs and takes new ones, but the
// store hands none out until it is resumed. The flag is in Redis, so every
// core honours it and it survives restarts.

func checkPause(req *core.PauseRequest) error {
	if req.Type == "" {
		return core.Invalidf("type", "missing")
	}
	return checkType(req.Type)
}

func (s *Service) pause(ctx context.Context, req *core.PauseRequest) (*core.PauseReply, error) {
	return s.setPaused(ctx, req, true)
}

func (s *Service) resume(ctx context.Context, req *core.PauseRequest) (*core.PauseReply, error) {
	return s.setPaused(ctx, req, false)
}

// setPaused stores the flag and, when it changed, publishes queue.pause or
// queue.resume. A repeat changes nothing and publishes nothing.
func (s *Service) setPaused(ctx context.Context, req *core.PauseRequest, paused bool) (*core.PauseReply, error) {
	if err := checkPause(req); err != nil {
		return nil, err
	}
	changed, err := s.store.Pause(ctx, req.Type, paused)
	if err != nil {
		return nil, err
	}
	event := bus.QueuePause
	if !paused {
		event = bus.QueueResume
		// Our own waiting leases of the type try again now, as publish
		// does for an enqueue; other cores' wake on queue.resume. Woken
		// also on a repeat: a waiter costs one lease attempt, and a
		// resume another core made may not have reached us.
		s.waits.resume(req.Type)
	}
	if changed {
		s.emit(s.subj.Queue(event), &core.Event{Event: event, Type: req.Type, At: s.now()})
	}
	return &core.PauseReply{Type: req.Type, Paused: paused}, nil
}

// onResume is the queue.resume subscription's callback: waiting leases of
// the resumed type try again. It runs whether or not any lease waits, to
// clear the type's paused mark.
func (r *waitRoom) onResume(m *nats.Msg) {
	var ev core.Event
	if json.Unmarshal(m.Data, &ev) == nil && ev.Type != "" {
		r.resume(ev.Type)
	}
}
