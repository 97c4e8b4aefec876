package service

import (
	"context"
	"fmt"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// clean: the leader's cleaner removes finished jobs (complete, failed,
// cancelled) that their retention no longer keeps (remove_on_complete,
// remove_on_fail, or the type's default from Config.Retention; cancelled
// jobs by the default alone), in bounded batches, and each removal is
// announced on queue.cleaned once per type and state.

// AnyType is the key of Config.Retention whose defaults hold for every type
// without an entry of its own.
const AnyType = "*"

// retentionOf is the default retention of a type: its own entry, else
// AnyType's, else none.
func (s *Service) retentionOf(jobType string) core.TypeRetention {
	if r, ok := s.cfg.Retention[jobType]; ok {
		return r
	}
	return s.cfg.Retention[AnyType]
}

// addRetention sets st.Retention: the default of each type of st that has
// one.
func (s *Service) addRetention(st *core.Stats) {
	for t := range st.Types {
		if r := s.retentionOf(t); r != (core.TypeRetention{}) {
			if st.Retention == nil {
				st.Retention = map[string]core.TypeRetention{}
			}
			st.Retention[t] = r
		}
	}
}

// checkRetention checks Config.Retention: type names (or AnyType), and
// defaults that are none or {age, count}.
func checkRetention(defaults map[string]core.TypeRetention) error {
	for t, r := range defaults {
		if t != AnyType {
			if err := bus.ValidToken(t); err != nil {
				return fmt.Errorf("core: Retention: %q is not a job type (or %q): %v", t, AnyType, err)
			}
		}
		for _, st := range core.FinishedStates {
			d := r.For(st)
			if d.AtOnce || d.Age < 0 || d.Count < 0 {
				return fmt.Errorf("core: Retention[%s].%s: %+v is not {age ≥ 0, count ≥ 0}", t, st, d)
			}
		}
	}
	return nil
}

// clean runs the store's clean over every type, complete, failed then
// cancelled, each at most limit jobs, after a batch of the type's
// re-scoring (Store.RescoreJobs); reply.More asks the leader to call
// again at once. A type whose Redis fails (a Cluster master down) is
// skipped, named in reply.TypeErrors and on queue.error, and the others
// are cleaned; only a call that cleaned no type fails.
func (s *Service) clean(ctx context.Context, req *core.LimitRequest) (*core.CleanReply, error) {
	limit, err := checkLimit(req.Limit)
	if err != nil {
		return nil, err
	}
	types, err := s.store.Types(ctx)
	if err != nil {
		return nil, err
	}
	// Rounded down, as for promote: no job goes before its age is over.
	now := s.dueNow()
	reply := &core.CleanReply{}
	failed := map[string]error{}
	for _, t := range types {
		// Jobs an earlier version indexed by id take their place in
		// creation order (the order of a range over every state), a
		// batch per type and call, beside the cleaning.
		moved, more, err := s.store.RescoreJobs(ctx, t)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("core: clean: re-score the jobs of %s: %w", t, err)
			}
			failed[t] = fmt.Errorf("core: clean: re-score the jobs of %s: %w", t, err)
			continue
		}
		if moved > 0 {
			s.log.Info("jobs of an earlier version took their place in creation order", "type", t, "count", moved)
		}
		reply.More = reply.More || more
		defaults := s.retentionOf(t)
		for _, state := range core.FinishedStates {
			n, more, err := s.store.Clean(ctx, &CleanParams{Now: now, Type: t, State: state, Rule: defaults.For(state), Limit: limit})
			if n > 0 {
				reply.Removed += n
				s.emit(s.subj.Queue(bus.QueueCleaned), &core.Event{Event: bus.QueueCleaned, Type: t, State: state, Removed: n, At: s.now()})
			}
			if err != nil {
				err = fmt.Errorf("core: clean %s %s after %d removed: %w", t, state, reply.Removed, err)
				if ctx.Err() != nil {
					return nil, err
				}
				// Its Redis failed (a Cluster master down): clean the
				// other types, and name this one.
				failed[t] = err
				break
			}
			reply.More = reply.More || more
		}
	}
	if len(failed) == 0 {
		return reply, nil
	}
	err = NewTypesError(failed)
	if len(failed) == len(types) {
		return nil, err.(*TypesError).Unwrap() // served none
	}
	te := err.(*TypesError)
	s.errs.report(bus.MethodClean, err)
	s.log.Warn("clean skipped job types whose Redis failed", "types", te.Types(), "removed", reply.Removed, "err", err)
	reply.TypeErrors = te.Wire()
	return reply, nil
}
