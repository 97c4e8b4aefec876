package core

import (
	"context"
	"time"

	"github.com/kuebus/kuebus/bus"
)

// Schedules (docs/protocol.md §3.31–§3.33): a named job spec that the
// promoter leader creates a job from at each tick of a cron expression or
// of a fixed interval.

// MinEvery is the shortest interval a schedule may tick at: a schedule is
// an operator's periodic job, not a rate, and the leader fires each tick
// with one call to core and one script.
const MinEvery = time.Second

// MaxCronLen bounds a schedule's cron expression, in bytes: a cron of six
// fields, each a list of ranges with steps, fits with room to spare.
const MaxCronLen = 256

// MaxTZLen bounds a schedule's tz, in bytes: the longest IANA zone name
// is 32 ("America/Argentina/ComodRivadavia"); a longer tz is refused by
// its length before a file is looked for by that name.
const MaxTZLen = 64

// ScheduleSetRequest is schedule_set's request: exactly one of Cron and
// Every. Setting a schedule that exists replaces it; when its timing (cron,
// every, tz) and pause are unchanged it keeps its next tick.
type ScheduleSetRequest struct {
	// Name is the schedule's name, one subject token like a job type.
	Name string `json:"name"`
	// Cron is 5 fields (minute hour day-of-month month day-of-week), or 6
	// with seconds first, or a descriptor (@hourly, @daily, ...); at most
	// MaxCronLen bytes.
	Cron string `json:"cron,omitempty"`
	// Every is the interval, from MinEvery to MaxDelay ms (ten years), in
	// whole ms on the wire (units.go); ticks fall at the time the schedule
	// was set plus whole intervals.
	Every *time.Duration `json:"every,omitempty"`
	// TZ is the IANA zone the cron expression is read in, at most
	// MaxTZLen bytes. Default UTC.
	TZ string `json:"tz,omitempty"`
	// Spec is the job each tick creates, checked as create checks a spec.
	Spec Spec `json:"spec"`
	// Paused keeps the schedule but fires none of its ticks; a schedule
	// set unpaused again starts from its first tick after now.
	Paused bool `json:"paused,omitempty"`
}

// Schedule is a stored schedule, as schedule_set and schedule_list reply.
// Its instants are unix ms, as on the wire; NextTime and the others give
// them as time.Time.
type Schedule struct {
	Name   string        `json:"name"`
	Cron   string        `json:"cron,omitempty"`
	Every  time.Duration `json:"every,omitempty"` // whole ms on the wire
	TZ     string        `json:"tz,omitempty"`
	Spec   Spec          `json:"spec"`
	Paused bool          `json:"paused"`
	// NextAt is the next tick (unix ms); 0 while paused.
	NextAt int64 `json:"next_at,omitempty"`
	// LastAt is the last tick fired (unix ms); 0 before the first.
	LastAt    int64 `json:"last_at,omitempty"`
	CreatedAt int64 `json:"created_at"`
	UpdatedAt int64 `json:"updated_at"`
}

// SchedulesReply is schedule_list's reply, sorted by name.
type SchedulesReply struct {
	Schedules []Schedule `json:"schedules"`
}

// NameRequest is schedule_remove's request.
type NameRequest struct {
	Name string `json:"name"`
}

// FireReply is schedule_fire's reply: how many schedules made a job, and
// the next tick of any schedule (unix ms; 0 when none waits).
type FireReply struct {
	Fired   int   `json:"fired"`
	NextDue int64 `json:"next_due"`
	// TypeErrors lists the types whose schedules this call could not look
	// at or fire, sorted by type: the Redis Cluster master that holds them
	// failed. Left out when every type was served.
	TypeErrors []TypeError `json:"type_errors,omitempty"`
}

// SetSchedule creates or replaces a schedule and returns it with its next
// tick.
func (c *Client) SetSchedule(ctx context.Context, req *ScheduleSetRequest) (*Schedule, error) {
	var reply Schedule
	if err := c.call(ctx, bus.MethodScheduleSet, req, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}

// Schedules lists every schedule, sorted by name.
func (c *Client) Schedules(ctx context.Context) ([]Schedule, error) {
	var reply SchedulesReply
	if err := c.call(ctx, bus.MethodScheduleList, Empty{}, &reply); err != nil {
		return nil, err
	}
	return reply.Schedules, nil
}

// RemoveSchedule deletes a schedule; ErrNotFound (not_found) when there is
// none of that name. Jobs it made stay.
func (c *Client) RemoveSchedule(ctx context.Context, name string) error {
	return c.call(ctx, bus.MethodScheduleRemove, NameRequest{Name: name}, nil)
}

// RunSchedule runs a schedule once now, out of its timing ("run now"): it
// creates the job of its spec, marked with the schedule and stamped now,
// as a tick would, and returns it; the next tick stays when it was.
// ErrNotFound when there is no such schedule; a conflict when it is
// paused, or the job's unique key is held by an unfinished job.
func (c *Client) RunSchedule(ctx context.Context, name string) (*Job, error) {
	var reply Job
	if err := c.call(ctx, bus.MethodScheduleRun, NameRequest{Name: name}, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}

// FireSchedules is the promoter leader's call: it creates the job of every
// schedule whose tick has come, at most limit, and says when the next tick
// is.
func (c *Client) FireSchedules(ctx context.Context, limit int) (*FireReply, error) {
	var reply FireReply
	if err := c.call(ctx, bus.MethodScheduleFire, LimitRequest{Limit: limit}, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}
