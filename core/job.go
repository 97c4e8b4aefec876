package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kuebus/kuebus/bus"
)

// State is where a job is in its life: delayed → inactive → active →
// complete | failed, with active → inactive or delayed again for retries,
// released leases and rejoins. A person's cancel ends a delayed, inactive
// or active job in cancelled.
type State string

// The states (docs/protocol.md §2, "States").
const (
	StateDelayed  State = "delayed"
	StateInactive State = "inactive"
	StateActive   State = "active"
	StateComplete State = "complete"
	StateFailed   State = "failed"
	// StateCancelled is terminal: a cancelled job is never leased again
	// (its worker's later acknowledgement answers conflict) until a person
	// moves it back by hand (set_state, or a bulk retry).
	StateCancelled State = "cancelled"
	// StateWaiting: the job waits for its dependencies (Spec.DependsOn,
	// deps.go) and is never leased; it moves to inactive (delayed with a
	// delay) when the last of them completes.
	StateWaiting State = "waiting"
)

// States lists every state in the order of a job's life.
// (waiting, which comes first, is listed last: it was added in issue 26).
var States = []State{StateDelayed, StateInactive, StateActive, StateComplete, StateFailed, StateCancelled, StateWaiting}

// stateNames is States for messages: "delayed, inactive, …".
var stateNames = func() string {
	names := make([]string, len(States))
	for i, st := range States {
		names[i] = string(st)
	}
	return strings.Join(names, ", ")
}()

// ParseState checks a state name.
func ParseState(s string) (State, error) {
	for _, st := range States {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("%q is not a state (%s)", s, stateNames)
}

// Finished reports whether a job in this state will not run again by itself.
func (s State) Finished() bool {
	return s == StateComplete || s == StateFailed || s == StateCancelled
}

// Priority orders jobs of one type: lower runs first; within one priority,
// first in, first out. On the wire it is a number or one of Kue's names.
type Priority int64

// Kue's named priorities.
const (
	PriorityLow      Priority = 10
	PriorityNormal   Priority = 0
	PriorityMedium   Priority = -5
	PriorityHigh     Priority = -10
	PriorityCritical Priority = -15
)

// MaxPriority bounds a priority's magnitude: Redis keeps scores as doubles,
// which hold every integer up to 2^53 exactly.
const MaxPriority = 1<<53 - 1

var priorityNames = map[string]Priority{
	"low": PriorityLow, "normal": PriorityNormal, "medium": PriorityMedium,
	"high": PriorityHigh, "critical": PriorityCritical,
}

// ParsePriority reads a priority name (low, normal, medium, high, critical)
// or an integer.
func ParsePriority(s string) (Priority, error) {
	if p, ok := priorityNames[strings.ToLower(s)]; ok {
		return p, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is neither a priority name (low, normal, medium, high, critical) nor an integer", s)
	}
	p := Priority(n)
	return p, p.check()
}

func (p Priority) check() error {
	if p > MaxPriority || p < -MaxPriority {
		return fmt.Errorf("%d is outside ±%d", int64(p), int64(MaxPriority))
	}
	return nil
}

// UnmarshalJSON accepts a number or a name. Its errors are the reason
// alone (bus.FieldError): the decoder puts the field's path before it,
// "priority" in a create, "spec.priority" in a schedule_set.
func (p *Priority) UnmarshalJSON(b []byte) error {
	// The common case, a plain integer in range (every job of every lease
	// reply has one), is read without decoding into an any, which was 5% of
	// a worker's CPU; anything else takes the general way below, whose
	// errors it keeps.
	if n, ok := plainInteger(b); ok && n <= MaxPriority && n >= -MaxPriority {
		*p = Priority(n)
		return nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return bus.FieldError("", err.Error())
	}
	var err error
	switch v := v.(type) {
	case string:
		*p, err = ParsePriority(v)
	case float64:
		if v != math.Trunc(v) {
			return bus.FieldError("", fmt.Sprintf("%v is not an integer", v))
		}
		if math.Abs(v) > MaxPriority {
			// The number as sent: %g of the float would say 9.223372036854776e+18.
			return bus.FieldError("", fmt.Sprintf("%s is outside ±%d", bytes.TrimSpace(b), int64(MaxPriority)))
		}
		*p = Priority(v)
	default:
		return bus.FieldError("", fmt.Sprintf("expected a number or a name, got %s", b))
	}
	if err != nil {
		return bus.FieldError("", err.Error())
	}
	return nil
}

// plainInteger reads b when it is a JSON integer written plainly: an
// optional minus, then 0 or a digit 1-9 followed by digits, at most 16 of
// them (any such value is within an int64, and within ±MaxPriority up to
// 9007199254740991).
func plainInteger(b []byte) (int64, bool) {
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 16 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// BackoffType names how long a failed attempt waits before the next.
type BackoffType string

// The backoff types (docs/protocol.md §2, "Backoff").
const (
	BackoffFixed       BackoffType = "fixed"
	BackoffExponential BackoffType = "exponential"
)

// Backoff says how long to wait before retrying a failed attempt: fixed
// waits Delay; exponential waits Delay × 0.5 × (2^attempts − 1) after the
// attempts-th failed attempt, Kue's formula, rounded; both capped at
// MaxDelay. A job without a Backoff retries at once. The store computes
// the wait where it counts the attempt (core/redisstore's
// lua/includes/attempt_failed.lua, the one place the formula is written).
// On the wire Delay is whole milliseconds (units.go); ExponentialBackoff
// picks the Delay whose first wait is the one it is given.
type Backoff struct {
	Type  BackoffType   `json:"type"`
	Delay time.Duration `json:"delay"` // whole ms on the wire
}

// FixedBackoff waits d before each retry. The wire carries milliseconds:
// d is rounded down to one.
func FixedBackoff(d time.Duration) *Backoff {
	return &Backoff{Type: BackoffFixed, Delay: d.Truncate(time.Millisecond)}
}

// ExponentialBackoff waits d before the first retry, then doubles the
// step: d, 3d, 7d, 15d, … after the 1st, 2nd, 3rd, 4th failed attempt
// (the total since the first failure doubles), capped at MaxDelay. It
// sends the wire's formula (Delay × 0.5 × (2^attempts − 1), Kue's) a Delay
// of 2d, so that its first wait is d rather than Kue's d/2.
func ExponentialBackoff(d time.Duration) *Backoff {
	delay := min(2*d.Truncate(time.Millisecond), MaxDelay*time.Millisecond)
	return &Backoff{Type: BackoffExponential, Delay: delay}
}

func (b *Backoff) validate() error {
	if b.Type != BackoffFixed && b.Type != BackoffExponential {
		return Invalidf("backoff.type", "%q is not fixed or exponential", b.Type)
	}
	if ms := b.Delay.Milliseconds(); b.Delay < 0 || ms > MaxDelay {
		return Invalidf("backoff.delay", "%d ms is outside 0..%d", ms, int64(MaxDelay))
	}
	return nil
}

// Limits on a job spec.
const (
	MaxDelay        = 10 * 365 * 24 * 3600 * 1000 // ten years, in ms
	MaxAttempts     = 1_000_000
	MaxUniqueKeyLen = 512
	MaxStallLimit   = 1_000_000
	TTLDefault      = 60_000 // ms
	// MaxDataBytesDefault is the default limit on a job's data (and result),
	// well below NATS's 1 MiB message limit so that the job with its other
	// fields still fits in a reply.
	MaxDataBytesDefault = 512 << 10
)

// Spec is what a producer sends to create a job.
type Spec struct {
	Type     string          `json:"type"`
	Data     json.RawMessage `json:"data,omitempty"`
	Priority Priority        `json:"priority,omitempty"`
	// Delay is how long the job waits before it may run (whole ms on the
	// wire, units.go).
	Delay       time.Duration `json:"delay,omitempty"`
	MaxAttempts int           `json:"max_attempts,omitempty"` // default 1
	Backoff     *Backoff      `json:"backoff,omitempty"`
	// TTL is how long one attempt may hold its lease (whole ms on the
	// wire); 0: TTLDefault ms.
	TTL time.Duration `json:"ttl,omitempty"`
	// RemoveOnComplete and RemoveOnFail: how long the job is kept once
	// complete, once failed (Retention). Zero: as its type's default says.
	RemoveOnComplete Retention `json:"remove_on_complete,omitzero"`
	UniqueKey        string    `json:"unique_key,omitempty"`
	// StallLimit is how many times the job's lease may run out (its worker
	// died or hung past the ttl) and the job go back without using an
	// attempt; every stall past it is a failed attempt. Default: the core's
	// configured limit (1). 0 makes every stall a failed attempt.
	StallLimit   *int      `json:"stall_limit,omitempty"`
	RemoveOnFail Retention `json:"remove_on_fail,omitzero"`
	// Trace is the W3C traceparent of the creator's span (trace.go): the
	// job keeps it, and the worker's span continues that trace. Empty: the
	// request's traceparent header, if any and valid.
	Trace string `json:"trace,omitempty"`
	// Broadcast makes the job a message to every listener instead of work
	// for one worker (DESIGN §10.4): no worker leases it; when it is due
	// (at once, or after Delay) core publishes it once, with its data, on
	// job.broadcast.<id>.<type>, and it ends complete. Its attempts,
	// backoff, ttl and stall limit do not apply.
	Broadcast bool `json:"broadcast,omitempty"`
	// Group is the job's group within its type (a tenant, a customer):
	// one token like a type, "" for none. Among the ready jobs of one type
	// and one priority, leases take the groups in turn (DESIGN §10.1).
	Group string `json:"group,omitempty"`
	// DependsOn lists the jobs this one waits for (deps.go): it is
	// created waiting and runs once every one of them completed.
	DependsOn []int64 `json:"depends_on,omitempty"`
	// OnDependencyFailure says what becomes of the job when a dependency
	// fails for good, is cancelled or removed: fail (default), ignore or
	// cancel.
	OnDependencyFailure DepPolicy `json:"on_dependency_failure,omitempty"`
	// DependsOnRefs, never on the wire, are dependencies on jobs of the
	// same create call, by their index in it (create_flow): the store
	// reads them once it has the call's ids.
	DependsOnRefs []int `json:"-"`
}

// NewJob is the job s makes when it is created with id at now (unix ms),
// as core stores it: the one place that says what a new job looks like
// (redisstore writes its fields verbatim; kuebustest builds its jobs from
// it). s is normalized.
func (s *Spec) NewJob(id, now int64) Job {
	j := Job{ID: id, Type: s.Type, Data: s.Data, Priority: s.Priority, State: StateInactive,
		Delay: s.Delay.Milliseconds(), MaxAttempts: s.MaxAttempts, Backoff: s.Backoff, TTL: s.TTL.Milliseconds(),
		RemoveOnComplete: s.RemoveOnComplete, RemoveOnFail: s.RemoveOnFail, UniqueKey: s.UniqueKey, StallLimit: 1,
		CreatedAt: now, UpdatedAt: now, PromoteAt: now + s.Delay.Milliseconds(), Trace: s.Trace, Broadcast: s.Broadcast, Group: s.Group,
		DependsOn: s.DependsOn, OnDependencyFailure: s.OnDependencyFailure}
	// A broadcast waits in due even without a delay: its promotion is
	// its broadcast (promote_due.lua), and ready, where workers lease,
	// never holds it.
	if s.Delay > 0 || s.Broadcast {
		j.State = StateDelayed
	}
	if s.StallLimit != nil { // core fills it in; 1 guards a caller that did not
		j.StallLimit = *s.StallLimit
	}
	return j
}

// Normalize fills defaults and checks every field, returning an invalid
// error that names the first bad one. maxData limits len(Data).
func (s *Spec) Normalize(maxData int) error {
	if err := bus.ValidToken(s.Type); err != nil {
		return Invalidf("type", "%q is not a job type: %v", s.Type, err)
	}
	if len(s.Data) > maxData {
		return Invalidf("data", "%d bytes is over the limit of %d", len(s.Data), maxData)
	}
	if err := CheckJSON("data", s.Data); err != nil {
		return err
	}
	if err := s.Priority.check(); err != nil {
		return Invalidf("priority", "%v", err)
	}
	if ms := s.Delay.Milliseconds(); s.Delay < 0 || ms > MaxDelay {
		return Invalidf("delay", "%d ms is outside 0..%d", ms, int64(MaxDelay))
	}
	if s.MaxAttempts < 0 || s.MaxAttempts > MaxAttempts {
		return Invalidf("max_attempts", "%d is outside 0..%d (0 means the default, 1)", s.MaxAttempts, MaxAttempts)
	}
	if s.MaxAttempts == 0 {
		s.MaxAttempts = 1
	}
	if s.Backoff != nil {
		if err := s.Backoff.validate(); err != nil {
			return err
		}
	}
	if ms := s.TTL.Milliseconds(); s.TTL < 0 || ms > MaxDelay {
		return Invalidf("ttl", "%d ms is outside 0..%d (0 means the default, %d)", ms, int64(MaxDelay), TTLDefault)
	}
	// What the wire carries: whole milliseconds, so that the job core
	// stores is the spec it checked.
	s.Delay, s.TTL = s.Delay.Truncate(time.Millisecond), s.TTL.Truncate(time.Millisecond)
	if s.TTL == 0 {
		s.TTL = TTLDefault * time.Millisecond
	}
	if len(s.UniqueKey) > MaxUniqueKeyLen {
		return Invalidf("unique_key", "%d bytes is longer than %d", len(s.UniqueKey), MaxUniqueKeyLen)
	}
	if err := s.RemoveOnComplete.validate("remove_on_complete"); err != nil {
		return err
	}
	if err := s.RemoveOnFail.validate("remove_on_fail"); err != nil {
		return err
	}
	if s.StallLimit != nil && (*s.StallLimit < 0 || *s.StallLimit > MaxStallLimit) {
		return Invalidf("stall_limit", "%d is outside 0..%d", *s.StallLimit, MaxStallLimit)
	}
	if s.Trace != "" {
		if err := CheckTraceparent(s.Trace); err != nil {
			return Invalidf("trace", "%v", err)
		}
	}
	if s.Group != "" {
		if err := bus.ValidToken(s.Group); err != nil {
			return Invalidf("group", "%q is not a group: %v", s.Group, err)
		}
	}
	return s.checkDeps()
}

// Job is a stored job. Times are unix ms, durations ms, as on the wire;
// methods (units.go) give them as time.Time and time.Duration: CreatedTime,
// TTLDuration and the others.
type Job struct {
	ID               int64           `json:"id"`
	Type             string          `json:"type"`
	Data             json.RawMessage `json:"data,omitempty"`
	Priority         Priority        `json:"priority"`
	State            State           `json:"state"`
	Delay            int64           `json:"delay"`
	MaxAttempts      int             `json:"max_attempts"`
	Attempts         int             `json:"attempts"`
	Backoff          *Backoff        `json:"backoff,omitempty"`
	TTL              int64           `json:"ttl"`
	RemoveOnComplete Retention       `json:"remove_on_complete"` // false when none
	UniqueKey        string          `json:"unique_key,omitempty"`
	Progress         int             `json:"progress"`
	Result           json.RawMessage `json:"result,omitempty"`
	Error            string          `json:"error,omitempty"`
	CreatedAt        int64           `json:"created_at"`
	PromoteAt        int64           `json:"promote_at,omitempty"`
	StartedAt        int64           `json:"started_at,omitempty"`
	UpdatedAt        int64           `json:"updated_at"`
	FailedAt         int64           `json:"failed_at,omitempty"`
	Duration         int64           `json:"duration,omitempty"`
	WorkerID         string          `json:"worker_id,omitempty"`
	Stalls           int             `json:"stalls,omitempty"` // leases that ran out
	// StallLimit is how many stalls go back without using an attempt (see
	// Spec.StallLimit); every later one is a failed attempt.
	StallLimit int `json:"stall_limit"`
	// Lease and LeaseUntil are set on a job handed out by lease: the token a
	// worker must show, and when the lease runs out.
	Lease      string `json:"lease,omitempty"`
	LeaseUntil int64  `json:"lease_until,omitempty"`
	// Schedule is the name of the schedule that made the job, and
	// ScheduleAt the tick it was made for (unix ms; the job is created at
	// or after it, never before). Both empty for a job a producer created.
	Schedule   string `json:"schedule,omitempty"`
	ScheduleAt int64  `json:"schedule_at,omitempty"`
	// RemoveOnFail is the job's own retention once failed (absent: none).
	RemoveOnFail Retention `json:"remove_on_fail,omitzero"`
	// Errors is the job's error history: its last ErrorsKept failed
	// attempts, newest last. Only get carries it; range, lease and events
	// leave it out, to stay light.
	Errors []AttemptError `json:"errors,omitempty"`
	// Trace is the W3C traceparent of the create that made the job (empty:
	// none came with it): a worker's span for the job continues that trace.
	Trace string `json:"trace,omitempty"`
	// Broadcast marks a job that goes to every listener when due, never to
	// a worker (Spec.Broadcast).
	Broadcast bool `json:"broadcast,omitempty"`
	// Group is the job's group within its type (Spec.Group); "" for none.
	Group string `json:"group,omitempty"`
	// DependsOn are the jobs this one waits for (Spec.DependsOn), Pending
	// how many of them have not completed yet, and OnDependencyFailure its
	// rule when one fails (absent: fail).
	DependsOn           []int64   `json:"depends_on,omitempty"`
	Pending             int       `json:"pending,omitempty"`
	OnDependencyFailure DepPolicy `json:"on_dependency_failure,omitempty"`
}

// AttemptError is one failed attempt in a job's error history: which
// attempt, when (unix ms; Time gives it as a time.Time), its error, and
// the stack the worker sent with it (none for a stall past the stall
// limit).
type AttemptError struct {
	Attempt int    `json:"attempt"`
	At      int64  `json:"at"`
	Error   string `json:"error"`
	Stack   string `json:"stack,omitempty"`
}

// ErrorsKept is how many failed attempts a job's error history keeps, the
// newest (core/redisstore's lua/includes/errors.lua keeps as many).
const ErrorsKept = 25

// MaxStackBytes bounds the stack a fail may carry; a longer one is
// invalid. The Go worker cuts a stack to this size before it sends it.
const MaxStackBytes = 16 << 10

// ForEvent returns the copy an event carries: without its data, and never
// with the lease token, which would let any listener complete or fail a job
// another worker holds.
func (j Job) ForEvent() *Job {
	j.Data, j.Lease = nil, ""
	return &j
}
