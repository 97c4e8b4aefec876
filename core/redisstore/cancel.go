package redisstore

import (
	"context"

	"github.com/kuebus/kuebus/core"
)

// Cancel ends a job that has not finished (lua/cancel.lua): the job after,
// and whether it changed. A job finished already (complete, failed,
// cancelled) comes back as it is, with changed false.
func (s *Store) Cancel(ctx context.Context, now, id int64) (*core.Job, bool, error) {
	tk, jobType, err := s.typeOf(ctx, id)
	if err != nil {
		return nil, false, err
	}
	j, changed, err := s.runCancel(ctx, tk, id, now)
	if err != nil {
		return nil, false, s.fail("cancel", err)
	}
	if changed {
		s.settleAfter(ctx, now, jobType) // those waiting for it take it as failed
	}
	if j == nil {
		return nil, false, core.JobNotFound(id)
	}
	return j, changed, nil
}
