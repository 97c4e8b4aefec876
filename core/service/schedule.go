package service

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// Schedules: schedule_set, schedule_list and schedule_remove keep them;
// schedule_fire, the promoter leader's call, fires every tick that has
// come. Ticks are judged by dueNow, the clock promote judges due jobs by,
// so a tick at T fires at or after T, never before; the job is stamped
// with now (rounded up), so its created_at is at or after its
// schedule_at. A tick fires at most once (the store's one script checks
// the schedule's last tick); the ticks missed while no leader ran fire
// once, as the latest of them.

func (s *Service) registerSchedules() error {
	return errors.Join(
		handle(s, bus.MethodScheduleSet, s.scheduleSet),
		handle(s, bus.MethodScheduleList, s.scheduleList),
		handle(s, bus.MethodScheduleRemove, s.scheduleRemove),
		handle(s, bus.MethodScheduleFire, s.scheduleFire),
		handle(s, bus.MethodScheduleRun, s.scheduleRun),
	)
}

func checkScheduleName(name string) error {
	if err := bus.ValidToken(name); err != nil {
		return core.Invalidf("name", "%q is not a schedule name: %v", name, err)
	}
	return nil
}

// checkScheduleSet checks a schedule as create checks a job spec, and
// returns its timing, anchored at now.
func (s *Service) checkScheduleSet(req *core.ScheduleSetRequest, now int64) (timing, error) {
	if err := checkScheduleName(req.Name); err != nil {
		return nil, err
	}
	var every *int64
	if req.Every != nil {
		every = new(req.Every.Milliseconds())
	}
	tm, err := parseTiming(req.Cron, every, req.TZ, now)
	if err != nil {
		return nil, err
	}
	if err := req.Spec.Normalize(s.cfg.MaxDataBytes); err != nil {
		return nil, bus.Errorf(bus.CodeInvalid, "spec.%s", bus.MessageOf(err)) // "spec.type: ..."
	}
	if req.Spec.Trace != "" {
		// Every tick's job would join the one trace of whoever set the
		// schedule, for ever: a schedule's jobs start traces of their own.
		return nil, core.Invalidf("spec.trace", "a schedule's jobs keep no trace: only a create's do")
	}
	if len(req.Spec.DependsOn) > 0 || req.Spec.OnDependencyFailure != "" {
		// Every tick's job would wait for the same jobs, which finished
		// long ago: a schedule's jobs wait for none.
		return nil, core.Invalidf("spec.depends_on", "a schedule's jobs wait for no other job")
	}
	if tm.after(now) <= 0 { // only a cron: every is bounded
		return nil, core.Invalidf("cron", "%q never comes", req.Cron)
	}
	return tm, nil
}

func (s *Service) scheduleSet(ctx context.Context, req *core.ScheduleSetRequest) (*core.Schedule, error) {
	now := s.now()
	tm, err := s.checkScheduleSet(req, now)
	if err != nil {
		return nil, err
	}
	sc := &core.Schedule{Name: req.Name, Cron: req.Cron, TZ: req.TZ, Spec: req.Spec, Paused: req.Paused}
	if req.Every != nil {
		sc.Every = req.Every.Truncate(time.Millisecond) // what the wire carries
	}
	if !req.Paused {
		sc.NextAt = tm.after(now)
	}
	stored, err := s.store.SetSchedule(ctx, now, sc)
	if err != nil {
		return nil, err
	}
	if !stored.Paused {
		// A sleeping leader wakes for a tick earlier than it knew of, as
		// for a delayed job: the same announcement.
		s.announceDue(stored.NextAt)
	}
	return &stored.Schedule, nil
}

func (s *Service) scheduleList(ctx context.Context, _ *core.Empty) (*core.SchedulesReply, error) {
	list, err := s.store.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]core.Schedule, len(list))
	for i := range list {
		out[i] = list[i].Schedule
	}
	return &core.SchedulesReply{Schedules: out}, nil
}

func (s *Service) scheduleRemove(ctx context.Context, req *core.NameRequest) (*core.Empty, error) {
	if err := checkScheduleName(req.Name); err != nil {
		return nil, err
	}
	removed, err := s.store.RemoveSchedule(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	if !removed {
		return nil, bus.Errorf(bus.CodeNotFound, "schedule %q not found", req.Name)
	}
	return &core.Empty{}, nil
}

// scheduleFire fires the due schedules, up to limit, and answers when the
// next tick is, as promote answers its next_due.
func (s *Service) scheduleFire(ctx context.Context, req *core.LimitRequest) (*core.FireReply, error) {
	limit, err := checkLimit(req.Limit)
	if err != nil {
		return nil, err
	}
	now := s.dueNow()
	due, next, err := s.store.DueSchedules(ctx, now, limit)
	failed := map[string]error{}
	var te *TypesError
	switch {
	case errors.As(err, &te):
		maps.Copy(failed, te.Errs) // some types' Redis failed: fire the others'
	case err != nil:
		return nil, err
	}
	fired := 0
	for i := range due {
		jobType := due[i].Spec.Type
		if _, down := failed[jobType]; down {
			continue // its Redis failed on an earlier schedule of this call
		}
		at, ok, err := s.fire(ctx, now, &due[i])
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("core: schedule_fire after %d fired: %w", fired, err)
			}
			failed[jobType] = err
			continue
		}
		if ok {
			fired++
		}
		if at > 0 && (next == 0 || at < next) {
			next = at
		}
	}
	reply := &core.FireReply{Fired: fired, NextDue: next}
	if len(failed) > 0 {
		// As promote's type_errors (moveReply): reported, and the call
		// succeeds for the types it served, so the leader keeps its pace.
		err := NewTypesError(failed)
		te = err.(*TypesError)
		s.errs.report(bus.MethodScheduleFire, err)
		s.log.Warn("schedule_fire skipped job types whose Redis failed", "types", te.Types(), "fired", fired, "err", err)
		reply.TypeErrors = te.Wire()
	}
	return reply, nil
}

// fire fires the latest tick of sc at or before now, and returns the tick
// after now (0 when the schedule has none, or is broken).
func (s *Service) fire(ctx context.Context, now int64, sc *StoredSchedule) (int64, bool, error) {
	tm, sp, err := s.storedTiming(sc)
	if err != nil {
		// Checked when it was set; only a store written by hand or by
		// another version gets here. Log it and leave it be.
		s.log.Warn("schedule not fired: stored schedule is invalid", "schedule", sc.Name, "err", err)
		return 0, false, nil
	}
	if sc.NextAt > now {
		// Fired by another leader between the store's read of the due
		// index and of the schedule: its next tick is still to come.
		return sc.NextAt, false, nil
	}
	if err := s.tickDefaults(ctx, &sp); err != nil {
		return 0, false, err
	}
	tick := latestTick(tm, sc.NextAt, now)
	next := tm.after(now)
	job, fired, err := s.store.FireSchedule(ctx, &FireParams{Now: s.now(), Schedule: sc, Tick: tick, Next: next, Spec: sp})
	if err != nil {
		return 0, false, err
	}
	if job != nil {
		s.announceCreated([]core.Job{*job}, []bool{false})
	}
	return next, fired, nil
}

// storedTiming reads a stored schedule's timing and checks its spec as
// schedule_set checked them: an error only for a store written by hand or
// by another version.
func (s *Service) storedTiming(sc *StoredSchedule) (timing, core.Spec, error) {
	var every *int64
	if sc.Every > 0 {
		every = new(sc.Every.Milliseconds())
	}
	tm, err := parseTiming(sc.Cron, every, sc.TZ, sc.NextAt)
	sp := sc.Spec
	if err == nil {
		err = sp.Normalize(s.cfg.MaxDataBytes)
	}
	return tm, sp, err
}

// tickDefaults fills what a schedule's spec left out, as a create of its
// type is filled: the type's defaults, then the node's (its max_attempts
// and ttl were filled in when it was set). A tick and a run by hand both
// take them.
func (s *Service) tickDefaults(ctx context.Context, sp *core.Spec) error {
	if err := s.withTypeDefaults(ctx, sp); err != nil {
		return err
	}
	s.withNodeDefaults(sp)
	return nil
}

// scheduleRun runs one schedule now, by hand: the store fires the tick
// "now" of it in the one script a due tick fires in (so the job is marked
// with the schedule, and a tick and a run cannot both take the same
// moment), and the schedule's next tick stays where it was (or, when it
// was overdue, moves to the first after now: the run was that run).
func (s *Service) scheduleRun(ctx context.Context, req *core.NameRequest) (*core.Job, error) {
	if err := checkScheduleName(req.Name); err != nil {
		return nil, err
	}
	list, err := s.store.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(list, func(sc StoredSchedule) bool { return sc.Name == req.Name })
	if i < 0 {
		return nil, bus.Errorf(bus.CodeNotFound, "schedule %q not found", req.Name)
	}
	sc := &list[i]
	if sc.Paused {
		return nil, bus.Errorf(bus.CodeConflict, "schedule %q is paused: resume it to run it", req.Name)
	}
	now := s.now()
	tm, sp, err := s.storedTiming(sc)
	if err != nil {
		return nil, fmt.Errorf("core: schedule_run %s: the stored schedule is invalid: %w", req.Name, err)
	}
	next := sc.NextAt
	if next <= now {
		next = tm.after(now)
	}
	if err := s.tickDefaults(ctx, &sp); err != nil {
		return nil, err
	}
	job, fired, err := s.store.FireSchedule(ctx, &FireParams{Now: now, Schedule: sc, Tick: now, Next: next, Spec: sp})
	switch {
	case err != nil:
		return nil, err
	case !fired:
		return nil, bus.Errorf(bus.CodeConflict, "schedule %q was changed or fired meanwhile: run it again", req.Name)
	case job == nil:
		return nil, bus.Errorf(bus.CodeConflict, "schedule %q ran, but its unique key %q is held by an unfinished job: no job was made", req.Name, sp.UniqueKey)
	}
	s.announceCreated([]core.Job{*job}, []bool{false})
	s.announceDue(next)
	return job, nil
}
