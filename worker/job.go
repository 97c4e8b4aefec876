package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kuebus/kuebus/core"
)

// Handler runs one job. Returning nil completes it; an error fails the
// attempt (retried while attempts remain); RetryAfter and Discard steer what
// happens next. Delivery is at least once: a handler must be idempotent.
type Handler interface {
	Handle(ctx context.Context, job *Job) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, job *Job) error

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, job *Job) error { return f(ctx, job) }

var _ Handler = HandlerFunc(nil)

// Job is what a handler gets: the leased job and the calls it may make while
// it holds the lease. Its Attempts counts the attempt that runs, so the
// first reports 1 (core's count of attempts used is one less until the
// attempt ends; OnFailed gets core's count, which is then the same).
//
// A Job made in a test (&worker.Job{...}, or kuebustest's, which records
// what the handler does) is safe to use: with no queue behind it, Log and
// Progress go nowhere and return nil.
type Job struct {
	core.Job
	calls  JobCalls
	result json.RawMessage
}

// JobCalls is where a Job's Log and Progress go: to core (*core.Client) for
// the jobs a Worker leases; to a recorder for the jobs of a test
// (kuebustest).
type JobCalls interface {
	AddLog(ctx context.Context, id int64, line string) error
	Progress(ctx context.Context, op core.LeaseOp) error
	Dependencies(ctx context.Context, id int64) ([]core.DepJob, error)
}

var _ JobCalls = (*core.Client)(nil)

// NewJob returns the Job a handler gets for job, its Log and Progress
// going to calls (nil: nowhere). A Worker makes its own; this is for
// running a handler without one, as kuebustest does. job is taken as the
// handler sees it: Attempts counts the attempt that runs.
func NewJob(job core.Job, calls JobCalls) *Job {
	return &Job{Job: job, calls: calls}
}

// Decode unmarshals the job's data into v.
func (j *Job) Decode(v any) error {
	if err := json.Unmarshal(j.Data, v); err != nil {
		return fmt.Errorf("worker: decode data of job %d: %w", j.ID, err)
	}
	return nil
}

// SetResult stores v, as JSON, as the job's result when the handler returns
// nil. The job's Result field shows it from then on.
func (j *Job) SetResult(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("worker: result of job %d: %w", j.ID, err)
	}
	j.result, j.Result = b, b
	return nil
}

// Progress reports how much is done: complete of total (shown as 0–100).
func (j *Job) Progress(ctx context.Context, complete, total int64) error {
	if j.calls == nil {
		return nil
	}
	return j.calls.Progress(ctx, core.LeaseOp{ID: j.ID, Lease: j.Lease, Type: j.Type, Complete: &complete, Total: &total})
}

// Log appends a line to the job's log.
func (j *Job) Log(ctx context.Context, line string) error {
	if j.calls == nil {
		return nil
	}
	return j.calls.AddLog(ctx, j.ID, line)
}

// RetryAfter returns an error that puts the job back to delayed for d
// without using an attempt (Kue-style rejoin): "not now, later".
func RetryAfter(d time.Duration) error { return &retryAfter{delay: d} }

type retryAfter struct{ delay time.Duration }

func (r *retryAfter) Error() string { return fmt.Sprintf("worker: retry after %s", r.delay) }

// Discard wraps err so that the job fails for good, whatever attempts remain:
// for input that no retry will fix.
func Discard(err error) error { return &discard{err: err} }

type discard struct{ err error }

func (d *discard) Error() string { return "worker: discard: " + d.err.Error() }
func (d *discard) Unwrap() error { return d.err }

// ErrShutdown is the cause of a handler's context when the worker stopped
// and its grace period ran out; the job is released, not failed.
var ErrShutdown = errors.New("kuebus: worker shut down")

// ErrCancelled is the cause of a handler's context when the job was
// cancelled (core's cancel, from the CLI, REST or any client) while it ran:
// the worker heard job.cancel.<id>.<type>. Read it with
// context.Cause(ctx). The job is cancelled in core already, so whatever the
// handler returns changes nothing: its acknowledgement answers conflict,
// which the worker expects (no retry, a debug line only).
var ErrCancelled = errors.New("kuebus: job cancelled")

// ErrTTLExceeded is the cause of a handler's context when the job ran past
// its time-to-run. The attempt fails with "kuebus: job ran past its ttl of
// N ms" when the handler returns nil or its context's error.
var ErrTTLExceeded = errors.New("kuebus: job ran past its ttl")

// ErrTimeout is the cause of a handler's context when it ran past its
// registration's HandlerOpts.Timeout (shorter than the job's ttl). The
// attempt fails with "kuebus: handler ran past its timeout of D" when the
// handler returns nil or its context's error.
var ErrTimeout = errors.New("kuebus: handler ran past its timeout")

// PanicError is a handler's recovered panic; the attempt fails with it and
// the stack goes to the job's log and, with the error, to its error
// history.
type PanicError struct {
	Value any
	Stack []byte
}

func (p *PanicError) Error() string { return fmt.Sprintf("worker: handler panicked: %v", p.Value) }

// Stacker is an error that carries the stack where it was made. When a
// handler's error (or one it wraps) is a Stacker, the failed attempt sends
// its Stack with the error, and the job's error history shows it (cut to
// core.MaxStackBytes). A panic's stack is sent without it.
type Stacker interface {
	Stack() []byte
}
