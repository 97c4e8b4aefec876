package core

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kuebus/kuebus/bus"
)

// Go code writes durations as time.Duration and reads instants as
// time.Time; the wire carries both as integers of milliseconds (instants
// as unix ms), the way every other client of the protocol writes them.
// The types a Go user fills in (Spec, Backoff, ScheduleSetRequest,
// Schedule, BulkActionRequest, and a type policy's Rate, Aging and
// TypeDefaults) have time.Duration (and time.Time) fields
// and JSON methods that write and
// read whole milliseconds: their JSON is what it was with int64 ms fields,
// so core reads and writes the same bytes, and docs/schema and
// docs/protocol.md stay true. A duration is rounded down to whole
// milliseconds on the wire. The types only Go reads (Job, AttemptError,
// Schedule's instants) keep their ms fields, which every decoder of a
// lease reply reads fast, and have methods that give them as
// time.Time and time.Duration.
//
// Each JSON method goes through a twin of its type (specJSON, ...): the
// same fields in the same order, so the same bytes, but the durations as
// int64 ms. A field added to the type must be added to its twin and to
// the copies both ways: TestWireTwins fails until it is. The twin is
// decoded by bus.DecodeField, as strictly as a request (unknown fields
// refused), with errors that name the field's path.

// msDuration is ms as a time.Duration, or an invalid error naming field
// when it is outside what a duration can hold (about ±292 years, far past
// MaxDelay, so it is refused anyway).
func msDuration(field string, ms int64) (time.Duration, error) {
	const limit = int64(1<<63-1) / int64(time.Millisecond)
	if ms > limit || ms < -limit {
		return 0, bus.FieldError(field, fmt.Sprintf("%d ms is outside 0..%d", ms, int64(MaxDelay)))
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// MsDuration is ms, a duration as the wire writes it, as a time.Duration,
// held at the largest or smallest duration when it is beyond one (about
// ±292 years, far past MaxDelay: a check still refuses it).
func MsDuration(ms int64) time.Duration {
	const limit = int64(1<<63-1) / int64(time.Millisecond)
	switch {
	case ms > limit:
		return time.Duration(1<<63 - 1)
	case ms < -limit:
		return time.Duration(-1 << 63)
	}
	return time.Duration(ms) * time.Millisecond
}

// unixMs is a wire instant as a time.Time; 0 (none) is the zero Time.
func unixMs(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// msOf is a wire duration as a time.Duration.
func msOf(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// isNull reports whether b is JSON's null, which leaves a value as it is.
// Any other value is read whole, fields absent from it left zero.
func isNull(b []byte) bool { return string(b) == "null" }

// specJSON is Spec on the wire: its fields in its order (TestWireTwins
// checks both), the durations as ms.
type specJSON struct {
	Type                string          `json:"type"`
	Data                json.RawMessage `json:"data,omitempty"`
	Priority            Priority        `json:"priority,omitempty"`
	Delay               int64           `json:"delay,omitempty"`
	MaxAttempts         int             `json:"max_attempts,omitempty"`
	Backoff             *Backoff        `json:"backoff,omitempty"`
	TTL                 int64           `json:"ttl,omitempty"`
	RemoveOnComplete    Retention       `json:"remove_on_complete,omitzero"`
	UniqueKey           string          `json:"unique_key,omitempty"`
	StallLimit          *int            `json:"stall_limit,omitempty"`
	RemoveOnFail        Retention       `json:"remove_on_fail,omitzero"`
	Trace               string          `json:"trace,omitempty"`
	Broadcast           bool            `json:"broadcast,omitempty"`
	Group               string          `json:"group,omitempty"`
	DependsOn           []int64         `json:"depends_on,omitempty"`
	OnDependencyFailure DepPolicy       `json:"on_dependency_failure,omitempty"`
	DependsOnRefs       []int           `json:"-"` // never on the wire
}

// MarshalJSON writes the spec with its delay and ttl in milliseconds: the
// bytes bus.Encode writes for its twin, by code of its own (wirefast.go).
func (s Spec) MarshalJSON() ([]byte, error) {
	return s.appendJSON(nil)
}

// UnmarshalJSON reads a spec whose delay and ttl are milliseconds.
func (s *Spec) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var w specJSON
	if err := bus.DecodeField(b, &w); err != nil {
		return err
	}
	sp, err := w.spec()
	if err != nil {
		return err
	}
	*s = sp
	return nil
}

// spec is the spec the twin holds.
func (w *specJSON) spec() (Spec, error) {
	delay, err := msDuration("delay", w.Delay)
	if err != nil {
		return Spec{}, err
	}
	ttl, err := msDuration("ttl", w.TTL)
	if err != nil {
		return Spec{}, err
	}
	return Spec{
		Type: w.Type, Data: w.Data, Priority: w.Priority, Delay: delay,
		MaxAttempts: w.MaxAttempts, Backoff: w.Backoff, TTL: ttl,
		RemoveOnComplete: w.RemoveOnComplete, UniqueKey: w.UniqueKey, StallLimit: w.StallLimit,
		RemoveOnFail: w.RemoveOnFail, Trace: w.Trace, Broadcast: w.Broadcast, Group: w.Group,
		DependsOn: w.DependsOn, OnDependencyFailure: w.OnDependencyFailure,
	}, nil
}

// backoffJSON is Backoff on the wire.
type backoffJSON struct {
	Type  BackoffType `json:"type"`
	Delay int64       `json:"delay"`
}

// MarshalJSON writes the backoff with its delay in milliseconds.
func (b Backoff) MarshalJSON() ([]byte, error) {
	return bus.Encode(backoffJSON{Type: b.Type, Delay: b.Delay.Milliseconds()})
}

// UnmarshalJSON reads a backoff whose delay is milliseconds.
func (b *Backoff) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		return nil
	}
	var w backoffJSON
	if err := bus.DecodeField(data, &w); err != nil {
		return err
	}
	delay, err := msDuration("delay", w.Delay)
	if err != nil {
		return err
	}
	*b = Backoff{Type: w.Type, Delay: delay}
	return nil
}

// scheduleSetJSON is ScheduleSetRequest on the wire.
type scheduleSetJSON struct {
	Name   string `json:"name"`
	Cron   string `json:"cron,omitempty"`
	Every  *int64 `json:"every,omitempty"`
	TZ     string `json:"tz,omitempty"`
	Spec   Spec   `json:"spec"`
	Paused bool   `json:"paused,omitempty"`
}

// MarshalJSON writes the request with its interval in milliseconds.
func (r ScheduleSetRequest) MarshalJSON() ([]byte, error) {
	w := scheduleSetJSON{Name: r.Name, Cron: r.Cron, TZ: r.TZ, Spec: r.Spec, Paused: r.Paused}
	if r.Every != nil {
		w.Every = new(r.Every.Milliseconds())
	}
	return bus.Encode(w)
}

// UnmarshalJSON reads a request whose interval is milliseconds.
func (r *ScheduleSetRequest) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var w scheduleSetJSON
	if err := bus.DecodeField(b, &w); err != nil {
		return err
	}
	*r = ScheduleSetRequest{Name: w.Name, Cron: w.Cron, TZ: w.TZ, Spec: w.Spec, Paused: w.Paused}
	if w.Every != nil {
		every, err := msDuration("every", *w.Every)
		if err != nil {
			return err
		}
		r.Every = &every
	}
	return nil
}

// scheduleJSON is Schedule on the wire.
type scheduleJSON struct {
	Name      string `json:"name"`
	Cron      string `json:"cron,omitempty"`
	Every     int64  `json:"every,omitempty"`
	TZ        string `json:"tz,omitempty"`
	Spec      Spec   `json:"spec"`
	Paused    bool   `json:"paused"`
	NextAt    int64  `json:"next_at,omitempty"`
	LastAt    int64  `json:"last_at,omitempty"`
	CreatedAt int64  `json:"created_at"`
	UpdatedAt int64  `json:"updated_at"`
}

// MarshalJSON writes the schedule with its interval in milliseconds.
func (sc Schedule) MarshalJSON() ([]byte, error) {
	return bus.Encode(scheduleJSON{
		Name: sc.Name, Cron: sc.Cron, Every: sc.Every.Milliseconds(), TZ: sc.TZ, Spec: sc.Spec, Paused: sc.Paused,
		NextAt: sc.NextAt, LastAt: sc.LastAt, CreatedAt: sc.CreatedAt, UpdatedAt: sc.UpdatedAt,
	})
}

// UnmarshalJSON reads a schedule whose interval is milliseconds.
func (sc *Schedule) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var w scheduleJSON
	if err := bus.DecodeField(b, &w); err != nil {
		return err
	}
	every, err := msDuration("every", w.Every)
	if err != nil {
		return err
	}
	*sc = Schedule{
		Name: w.Name, Cron: w.Cron, Every: every, TZ: w.TZ, Spec: w.Spec, Paused: w.Paused,
		NextAt: w.NextAt, LastAt: w.LastAt, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt,
	}
	return nil
}

// bulkActionJSON is BulkActionRequest on the wire.
type bulkActionJSON struct {
	Action     BulkAction `json:"action"`
	State      State      `json:"state"`
	Type       string     `json:"type,omitempty"`
	Error      string     `json:"error,omitempty"`
	ErrorGroup string     `json:"error_group,omitempty"`
	Before     int64      `json:"before,omitempty"`
	Limit      int        `json:"limit,omitempty"`
	Cursor     string     `json:"cursor,omitempty"`
}

// MarshalJSON writes the request with Before in unix ms (0, left out, for
// none).
func (r BulkActionRequest) MarshalJSON() ([]byte, error) {
	w := bulkActionJSON{Action: r.Action, State: r.State, Type: r.Type, Error: r.Error, ErrorGroup: r.ErrorGroup, Limit: r.Limit, Cursor: r.Cursor}
	if !r.Before.IsZero() {
		w.Before = r.Before.UnixMilli()
	}
	return bus.Encode(w)
}

// UnmarshalJSON reads a request whose before is unix ms; a negative one
// is invalid.
func (r *BulkActionRequest) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var w bulkActionJSON
	if err := bus.DecodeField(b, &w); err != nil {
		return err
	}
	if w.Before < 0 {
		return bus.FieldError("before", fmt.Sprintf("%d is negative (unix ms, or 0 for any time)", w.Before))
	}
	*r = BulkActionRequest{Action: w.Action, State: w.State, Type: w.Type, Error: w.Error, ErrorGroup: w.ErrorGroup,
		Before: unixMs(w.Before), Limit: w.Limit, Cursor: w.Cursor}
	return nil
}

// rateJSON is Rate on the wire, per in ms.
type rateJSON struct {
	Limit int64 `json:"limit"`
	Per   int64 `json:"per"`
}

// MarshalJSON writes the rate with its window in milliseconds.
func (r Rate) MarshalJSON() ([]byte, error) {
	return bus.Encode(rateJSON{Limit: r.Limit, Per: r.Per.Milliseconds()})
}

// UnmarshalJSON reads a rate whose window is milliseconds.
func (r *Rate) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var w rateJSON
	if err := bus.DecodeField(b, &w); err != nil {
		return err
	}
	per, err := msDuration("per", w.Per)
	if err != nil {
		return err
	}
	*r = Rate{Limit: w.Limit, Per: per}
	return nil
}

// agingJSON is Aging on the wire, per in ms.
type agingJSON struct {
	Per int64 `json:"per"`
}

// MarshalJSON writes the aging's credit in milliseconds.
func (a Aging) MarshalJSON() ([]byte, error) {
	return bus.Encode(agingJSON{Per: a.Per.Milliseconds()})
}

// UnmarshalJSON reads an aging whose credit is milliseconds.
func (a *Aging) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var w agingJSON
	if err := bus.DecodeField(b, &w); err != nil {
		return err
	}
	per, err := msDuration("per", w.Per)
	if err != nil {
		return err
	}
	*a = Aging{Per: per}
	return nil
}

// typeDefaultsJSON is TypeDefaults on the wire: its fields in its order,
// the ttl in ms.
type typeDefaultsJSON struct {
	Priority         Priority  `json:"priority,omitempty"`
	MaxAttempts      int       `json:"max_attempts,omitempty"`
	Backoff          *Backoff  `json:"backoff,omitempty"`
	TTL              int64     `json:"ttl,omitempty"`
	StallLimit       *int      `json:"stall_limit,omitempty"`
	RemoveOnComplete Retention `json:"remove_on_complete,omitzero"`
	RemoveOnFail     Retention `json:"remove_on_fail,omitzero"`
}

// MarshalJSON writes the defaults with their ttl in milliseconds.
func (d TypeDefaults) MarshalJSON() ([]byte, error) {
	return bus.Encode(typeDefaultsJSON{Priority: d.Priority, MaxAttempts: d.MaxAttempts, Backoff: d.Backoff,
		TTL: d.TTL.Milliseconds(), StallLimit: d.StallLimit, RemoveOnComplete: d.RemoveOnComplete, RemoveOnFail: d.RemoveOnFail})
}

// UnmarshalJSON reads defaults whose ttl is milliseconds.
func (d *TypeDefaults) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var w typeDefaultsJSON
	if err := bus.DecodeField(b, &w); err != nil {
		return err
	}
	ttl, err := msDuration("ttl", w.TTL)
	if err != nil {
		return err
	}
	*d = TypeDefaults{Priority: w.Priority, MaxAttempts: w.MaxAttempts, Backoff: w.Backoff,
		TTL: ttl, StallLimit: w.StallLimit, RemoveOnComplete: w.RemoveOnComplete, RemoveOnFail: w.RemoveOnFail}
	return nil
}

// CreatedTime is when the job was created; the zero Time for none.
func (j *Job) CreatedTime() time.Time { return unixMs(j.CreatedAt) }

// UpdatedTime is when the job last changed.
func (j *Job) UpdatedTime() time.Time { return unixMs(j.UpdatedAt) }

// PromoteTime is when a delayed job becomes ready; zero for none.
func (j *Job) PromoteTime() time.Time { return unixMs(j.PromoteAt) }

// StartedTime is when the job's last attempt started; zero before the first.
func (j *Job) StartedTime() time.Time { return unixMs(j.StartedAt) }

// FailedTime is when the job last failed an attempt; zero for never.
func (j *Job) FailedTime() time.Time { return unixMs(j.FailedAt) }

// LeaseUntilTime is when a leased job's lease runs out; zero when the job
// did not come from a lease.
func (j *Job) LeaseUntilTime() time.Time { return unixMs(j.LeaseUntil) }

// ScheduleTime is the tick of its schedule the job was made for; zero for
// a job a producer created.
func (j *Job) ScheduleTime() time.Time { return unixMs(j.ScheduleAt) }

// DelayDuration is the delay the job was created with.
func (j *Job) DelayDuration() time.Duration { return msOf(j.Delay) }

// TTLDuration is how long one attempt may hold its lease.
func (j *Job) TTLDuration() time.Duration { return msOf(j.TTL) }

// RunDuration is how long the job's last finished attempt ran; 0 before
// one finished.
func (j *Job) RunDuration() time.Duration { return msOf(j.Duration) }

// Time is when the attempt failed.
func (e *AttemptError) Time() time.Time { return unixMs(e.At) }

// NextTime is the schedule's next tick; zero while paused.
func (sc *Schedule) NextTime() time.Time { return unixMs(sc.NextAt) }

// LastTime is the last tick the schedule fired; zero before the first.
func (sc *Schedule) LastTime() time.Time { return unixMs(sc.LastAt) }

// CreatedTime is when the schedule was first set.
func (sc *Schedule) CreatedTime() time.Time { return unixMs(sc.CreatedAt) }

// UpdatedTime is when the schedule was last set.
func (sc *Schedule) UpdatedTime() time.Time { return unixMs(sc.UpdatedAt) }
