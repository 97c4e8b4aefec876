package service

import (
	"context"

	"github.com/kuebus/kuebus/core"
)

// ScheduleStore is the part of the Store that keeps schedules. The Service
// computes every tick (the store knows no cron); the store keeps each
// schedule beside its job type's keys and fires a tick in one script.
type ScheduleStore interface {
	// SetSchedule creates or replaces the schedule sc.Name, of job type
	// sc.Spec.Type, whatever type it had before. sc.NextAt is its first
	// tick after now (0 when paused); a schedule whose timing and pause
	// are unchanged keeps the next tick it had.
	SetSchedule(ctx context.Context, now int64, sc *core.Schedule) (*StoredSchedule, error)
	// Schedules lists every schedule, sorted by name.
	Schedules(ctx context.Context) ([]StoredSchedule, error)
	// RemoveSchedule deletes a schedule: false when there was none.
	RemoveSchedule(ctx context.Context, name string) (bool, error)
	// DueSchedules returns up to limit unpaused schedules whose next tick
	// is at or before now, and the earliest next tick of the others (0:
	// none).
	DueSchedules(ctx context.Context, now int64, limit int) (due []StoredSchedule, next int64, err error)
	// FireSchedule fires p.Tick of p.Schedule, at most once ever: it
	// creates the job of p.Spec (stamped p.Now, marked with the schedule
	// and the tick) and moves the schedule's next tick to p.Next, all in
	// one step, unless the tick is after p.Now, or the schedule is gone,
	// paused, set again since it was read, or fired a tick at or after
	// this one. fired says whether the tick fired; job is nil when it did
	// not, or when it fired but an unfinished job had the spec's unique
	// key.
	FireSchedule(ctx context.Context, p *FireParams) (job *core.Job, fired bool, err error)
}

// FireParams are a FireSchedule's arguments.
type FireParams struct {
	Now      int64           // unix ms
	Schedule *StoredSchedule // as read, with its Rev
	Tick     int64           // the tick to fire, unix ms
	Next     int64           // the schedule's next tick after it, unix ms
	Spec     core.Spec       // the tick's job, checked
}

// StoredSchedule is a schedule as the store holds it: Rev is new with each
// set, also across a remove, so that a tick read before a set does not
// fire after it.
type StoredSchedule struct {
	core.Schedule
	Rev int64
}
