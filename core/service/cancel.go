package service

import (
	"context"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// cancel: a person ends a job that has not finished. The job is cancelled in
// Redis first; only then does job.cancel go out, on which the worker running
// it (if any) cancels its handler's context. That worker's acknowledgement
// arrives after the lease is gone, so it answers conflict and changes
// nothing, whatever the order in which the two cross.

func (s *Service) checkCancel(req *core.CancelRequest) error {
	if err := checkID(req.ID); err != nil {
		return err
	}
	if len(req.Reason) > s.cfg.MaxLogLineBytes {
		return core.Invalidf("reason", "%d bytes is over the limit of %d", len(req.Reason), s.cfg.MaxLogLineBytes)
	}
	return nil
}

func (s *Service) cancel(ctx context.Context, req *core.CancelRequest) (*core.Job, error) {
	if err := s.checkCancel(req); err != nil {
		return nil, err
	}
	job, changed, err := s.store.Cancel(ctx, s.now(), req.ID)
	if err != nil {
		return nil, err
	}
	if !changed {
		// A finished job stays as it is: cancelling a failed job would hide
		// its error among the cancelled, and a complete job has nothing
		// left to stop. conflict tells the caller it was too late.
		return nil, bus.Errorf(bus.CodeConflict, "job %d is %s already: only a delayed, inactive, active or waiting job can be cancelled", job.ID, job.State)
	}
	s.publish(bus.EventCancel, job, func(ev *core.Event) { ev.Reason = req.Reason })
	return job, nil
}
