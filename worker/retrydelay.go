package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kuebus/kuebus/core"
)

// A failed attempt with attempts left waits before the next one. By
// default core waits the job's backoff (core.Backoff, set at create). A
// worker may choose the wait instead, from the job and the error, and send
// it with the fail (its delay, in ms): the first of these that says one,
// in this order, decides:
//
//  1. the handler's error is a DelayRetry: its d;
//  2. the registration's HandlerOpts.RetryDelay: what it says;
//  3. the handler is a RetryDelayer (WithRetryDelay makes one): what it says;
//  4. Config.RetryDelay: what it says.
//
// A negative duration says "the job's backoff", as none does; 0 retries at
// once; a wait is cut to whole milliseconds and to core.MaxDelay. Nothing
// is asked when no attempt remains, or for Discard.

// RetryDelayFunc says how long a job waits before its next attempt, given
// the job as its handler saw it (its Type, Backoff, Data, and Attempts,
// the attempt that failed, 1 for the first), that attempt again (as
// attempt) and the handler's error. A
// negative duration leaves it to the job's backoff. It runs on the
// handler's goroutine, after the handler returned; it must be quick.
type RetryDelayFunc func(job *core.Job, attempt int, err error) time.Duration

// RetryDelayer is a Handler that chooses the wait before its failed jobs'
// next attempt (River's NextRetry); it wins over Config.RetryDelay for the
// types it is registered for.
type RetryDelayer interface {
	RetryDelay(job *core.Job, attempt int, err error) time.Duration
}

// WithRetryDelay returns h with fn as its RetryDelayer: a handler function
// with a retry delay of its own, for Handle. (Process, HandleArgs and
// ProcessArgs take it in their HandlerOpts.)
//
//	w.Handle("email", worker.WithRetryDelay(send, func(job *core.Job, attempt int, err error) time.Duration {
//		return time.Duration(attempt) * time.Minute
//	}))
func WithRetryDelay(h Handler, fn RetryDelayFunc) Handler {
	if h == nil || fn == nil {
		panic("worker: WithRetryDelay needs a handler and a function")
	}
	return &delayingHandler{Handler: h, fn: fn}
}

type delayingHandler struct {
	Handler
	fn RetryDelayFunc
}

func (d *delayingHandler) RetryDelay(job *core.Job, attempt int, err error) time.Duration {
	return d.fn(job, attempt, err)
}

var _ RetryDelayer = (*delayingHandler)(nil)

// DelayRetry wraps err so that the attempt fails with it and, while
// attempts remain, the next one waits d instead of the job's backoff: for
// an error that says when to try again (a rate limit's Retry-After).
// Unlike RetryAfter, the attempt counts and err is stored.
func DelayRetry(err error, d time.Duration) error {
	if err == nil {
		panic("worker: DelayRetry needs an error")
	}
	return &delayRetry{err: err, delay: d}
}

type delayRetry struct {
	err   error
	delay time.Duration
}

func (d *delayRetry) Error() string { return d.err.Error() }
func (d *delayRetry) Unwrap() error { return d.err }

// retryDelay is the delay a failed attempt of job sends (ms), or nil for
// the job's backoff: see the order above. handler is the type's own
// RetryDelayFunc (nil for none).
func (w *Worker) retryDelay(job *core.Job, err error, handler RetryDelayFunc) *int64 {
	attempt := job.Attempts // the handler's Job: the attempt that failed
	if attempt >= job.MaxAttempts {
		return nil // no retry: the wait would be for nothing
	}
	var d time.Duration
	var given *delayRetry
	switch {
	case errors.As(err, &given):
		d = given.delay
	case handler != nil:
		d = w.askRetryDelay(handler, job, attempt, err)
	case w.cfg.RetryDelay != nil:
		d = w.askRetryDelay(w.cfg.RetryDelay, job, attempt, err)
	default:
		return nil
	}
	if d < 0 {
		return nil
	}
	return new(min(d.Milliseconds(), int64(core.MaxDelay)))
}

// askRetryDelay calls fn, taking a panic in it for "the job's backoff" (-1)
// with a line in the log: a retry that waits its backoff beats a worker
// that dies.
func (w *Worker) askRetryDelay(fn RetryDelayFunc, job *core.Job, attempt int, err error) (d time.Duration) {
	defer func() {
		if v := recover(); v != nil {
			w.log.ErrorContext(context.Background(), "retry delay function panicked; the job waits its backoff",
				"job_id", job.ID, "attempt", attempt, "panic", fmt.Sprint(v))
			d = -1
		}
	}()
	return fn(job, attempt, err)
}

// RetryWaitOf is the wait before the next run that err asks for, the d of
// a RetryAfter or a DelayRetry in its chain, and whether it asks for one:
// for middleware and tests (kuebustest) that report it.
func RetryWaitOf(err error) (time.Duration, bool) {
	var retry *retryAfter
	var given *delayRetry
	switch {
	case errors.As(err, &retry):
		return retry.delay, true
	case errors.As(err, &given):
		return given.delay, true
	}
	return 0, false
}
