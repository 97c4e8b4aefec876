package redisstore

import (
	"context"

	"github.com/kuebus/kuebus/core"
)

// A broadcast job is published by the core that takes it, after the
// promote that completed it (lua/promote_due.lua puts it in its type's
// broadcasts index). TakeBroadcasts claims the waiting ones for a while,
// data included; BroadcastsSent ends them once published. A core that
// dies between the two leaves its claim to run out, and the next take
// publishes them again: at least once.

// TakeBroadcasts claims up to limit broadcast jobs due to be published by
// now, until `until` (unix ms), returning them with their data and the
// earliest time another waits (0: none). Types whose Redis fails are
// skipped, as sweep says.
func (s *Store) TakeBroadcasts(ctx context.Context, now, until int64, limit int) ([]core.Job, int64, error) {
	return s.sweep(ctx, now, limit, typeKeys.broadcasts, func(tk typeKeys, ids []int64) (int64, []core.Job, error) {
		next, jobs, err := s.runBroadcastTake(ctx, tk, now, until, ids)
		if err != nil {
			return 0, nil, s.fail("take broadcasts", err)
		}
		return next, jobs, nil
	})
}

// BroadcastsSent ends the broadcasts of jobs, which were published: each
// enters its type's complete index, or is deleted when its
// remove_on_complete is true.
func (s *Store) BroadcastsSent(ctx context.Context, jobs []core.Job) error {
	byType := map[string][]int64{}
	for _, j := range jobs {
		byType[j.Type] = append(byType[j.Type], j.ID)
	}
	for t, ids := range byType {
		if _, err := s.runBroadcastSent(ctx, s.keys.ofType(t), ids); err != nil {
			return s.fail("end broadcasts", err)
		}
	}
	return nil
}
