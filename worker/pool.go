package worker

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/batch"
	"github.com/kuebus/kuebus/core"
)

// pool is a set of job types that share one concurrency limit and one
// leasing loop.
type pool struct {
	w           *Worker
	concurrency int
	types       []string
	handlers    map[string]Handler
	// retryDelays holds the retry delay of each type that has one of its
	// own: its HandlerOpts.RetryDelay, or else its handler's RetryDelayer,
	// read before the middleware hid it.
	retryDelays map[string]RetryDelayFunc
	// timeouts holds the HandlerOpts.Timeout of each type that has one.
	timeouts map[string]time.Duration
	slots    chan struct{} // a token per handler that may start
}

// add registers h, the handler as given (its RetryDelayer is read from
// it), to run as wrapped (inside the middleware), with the registration's
// options (nil: none).
func (p *pool) add(jobType string, h, wrapped Handler, opts *HandlerOpts) {
	p.types = append(p.types, jobType)
	p.handlers[jobType] = wrapped
	retryDelay := opts.retryDelay()
	if d, ok := h.(RetryDelayer); ok && retryDelay == nil {
		retryDelay = d.RetryDelay
	}
	if retryDelay != nil {
		if p.retryDelays == nil {
			p.retryDelays = map[string]RetryDelayFunc{}
		}
		p.retryDelays[jobType] = retryDelay
	}
	if opts != nil && opts.Timeout > 0 {
		if p.timeouts == nil {
			p.timeouts = map[string]time.Duration{}
		}
		p.timeouts[jobType] = opts.Timeout
	}
}

// leaseCallers is how many lease calls of one pool may be on the wire at
// once (each fetch loop has one). With one, the slots freed while a lease
// was on its way waited for its answer before the next could leave: a
// worker of concurrency 64 with no-op handlers leased ~59 jobs per call,
// one call at a time, ~2.4 ms each, with a third of the machine idle. Two
// made scripts/cpu-per-job.sh process 3-8% faster in 5 rounds of 5, for
// ~1.5 us more of core's CPU per job; three were no faster than two.
const leaseCallers = 2

// fillSlots gives the pool a token per handler that may run.
func (p *pool) fillSlots() {
	p.slots = make(chan struct{}, p.concurrency)
	for range p.concurrency {
		p.slots <- struct{}{}
	}
}

// fetch leases jobs for free slots until ctx ends. Only a free slot is ever
// leased for, so the worker holds no job it cannot start at once. Run
// starts up to leaseCallers of them per pool, sharing its slots.
func (p *pool) fetch(ctx, jobsCtx context.Context) {
	types := slices.Clone(p.types)
	failures := 0
	for {
		n := p.acquire(ctx)
		if n == 0 {
			return // ctx ended
		}
		jobs, err := p.lease(ctx, types, n)
		if ctx.Err() != nil {
			// Stopping: what this last call brought goes straight back.
			p.freeSlots(n)
			held := make([]*core.Job, len(jobs))
			for i := range jobs {
				held[i] = &jobs[i]
			}
			p.w.giveBack(held)
			return
		}
		p.freeSlots(n - len(jobs))
		for i := range jobs {
			p.start(jobsCtx, &jobs[i])
		}
		if err != nil {
			failures++
			p.w.log.Warn("lease failed; retrying", "types", types, "err", err, "failures", failures)
			if errors.Is(err, context.DeadlineExceeded) {
				// No answer in LeaseWait + core.LeaseReplyMargin: the core that
				// had the call died. The call itself took that long, so
				// calling again at once is no busy loop, and reaches a live core.
				continue
			}
			if !sleep(ctx, backoff(failures)) {
				return
			}
			continue
		}
		failures = 0
	}
}

// acquire waits for one free slot, then takes every other free one,
// once the handlers finishing at the same moment have freed theirs
// (batch.Gather: a yield while the free slots grow, no timer): one lease
// for many jobs costs the same round trip as a lease for one. An idle pool
// has every slot free and leases at once.
func (p *pool) acquire(ctx context.Context) int {
	select {
	case <-p.slots:
	case <-ctx.Done():
		return 0
	}
	batch.Gather(func() int { return len(p.slots) })
	n := 1
	for n < p.concurrency {
		select {
		case <-p.slots:
			n++
			continue
		default:
		}
		return n
	}
	return n
}

// freeSlots gives n slots back for the next jobs.
func (p *pool) freeSlots(n int) {
	for range n {
		p.slots <- struct{}{}
	}
}

// lease asks core for up to n jobs. The call is not cancelled with ctx:
// core may already have leased jobs for it, and they must come back to us
// to be released rather than sit leased until their ttl.
func (p *pool) lease(ctx context.Context, types []string, n int) ([]core.Job, error) {
	wait := p.w.cfg.LeaseWait
	// Core answers within the wait plus milliseconds (see
	// core.LeaseReplyMargin), and releases what it leased too late to reach
	// us. A call still unanswered past the margin went to a core that died
	// or hangs: giving up then, and calling again at once (fetch), reaches a
	// live core, so a worker idles about LeaseWait + the margin after its
	// core dies.
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait+core.LeaseReplyMargin)
	defer cancel()
	// A reply that comes after the call gave up (this process was stopped
	// while core answered in time) is given back at once, rather than its
	// jobs staying leased to this live worker until their ttl.
	callCtx = bus.WithLateReply(callCtx, p.w.giveBackLate)
	return p.w.client.Lease(callCtx, core.LeaseRequest{
		Types: types, Max: n, Worker: p.w.cfg.ID, Wait: wait.Milliseconds(),
	})
}

// start runs one job's handler on a goroutine of its own (one of the
// worker's kept runners), on a slot already taken.
func (p *pool) start(jobsCtx context.Context, cj *core.Job) {
	// Two layers: the outer one ends with a cause (ErrCancelled on
	// job.cancel; context.Canceled for a lost lease), the inner one at the
	// ttl (ErrTTLExceeded) or the type's timeout (ErrTimeout).
	outer, stop := context.WithCancelCause(jobsCtx)
	timeout := p.timeouts[cj.Type]
	ctx, cancel, deadline := runContext(outer, cj.TTL, timeout)
	r := p.w.jobs.add(cj, deadline, stop)
	job := NewJob(*cj, p.w.client)
	job.Attempts++ // the attempt that runs, counted from 1
	p.w.handlers.Run(func() {
		defer p.freeSlots(1)
		defer stop(nil)
		defer cancel()
		m := p.w.cfg.Metrics
		m.Started(cj.Type)
		began := time.Now()
		err := ranOut(ctx, call(ctx, p.handlers[cj.Type], job), cj.TTL, timeout)
		m.Finished(cj.Type, OutcomeOf(err), time.Since(began))
		p.w.acknowledge(r, job, err, p.retryDelays[cj.Type])
	})
}

// runContext is a handler's context under parent: it ends at the job's
// ttl (ms) with cause ErrTTLExceeded, or at timeout (when positive and
// sooner) with cause ErrTimeout. It returns that deadline too. A ttl of 0
// (a job made in a test without one) sets no deadline of its own.
func runContext(parent context.Context, ttl int64, timeout time.Duration) (context.Context, context.CancelFunc, time.Time) {
	now := time.Now()
	var deadline time.Time
	var cause error
	if ttl > 0 {
		deadline, cause = now.Add(time.Duration(ttl)*time.Millisecond), ErrTTLExceeded
	}
	if timeout > 0 && (deadline.IsZero() || now.Add(timeout).Before(deadline)) {
		deadline, cause = now.Add(timeout), ErrTimeout
	}
	if deadline.IsZero() {
		ctx, cancel := context.WithCancel(parent)
		return ctx, cancel, deadline
	}
	ctx, cancel := context.WithDeadlineCause(parent, deadline, cause)
	return ctx, cancel, deadline
}

// ranOut is the outcome err of a handler run under ctx (runContext), as
// the worker judges it: past the ttl or the timeout, see ttlExceeded.
func ranOut(ctx context.Context, err error, ttl int64, timeout time.Duration) error {
	if ctx.Err() == nil {
		return err
	}
	switch context.Cause(ctx) {
	case ErrTTLExceeded:
		return ttlExceeded(fmt.Errorf("%w of %d ms", ErrTTLExceeded, ttl), err)
	case ErrTimeout:
		return ttlExceeded(fmt.Errorf("%w of %s", ErrTimeout, timeout), err)
	}
	return err
}

// Execute runs h with job as a Worker runs a leased one, without a queue:
// under a context (from ctx) that ends at the job's ttl (cause
// ErrTTLExceeded) or opts' Timeout if sooner (ErrTimeout), with a panic
// recovered into a *PanicError. It returns the outcome as the worker would
// send it: nil completes the job (with what SetResult stored); an error
// fails the attempt, unless OutcomeOf says RetryAfter or Discard. A handler
// that overran and returned nil or its context's error gets the error that
// says so. Middleware, retry delays and acknowledgements are the worker's
// and not run here. kuebustest runs handlers with it.
func Execute(ctx context.Context, h Handler, job *Job, opts *HandlerOpts) error {
	var timeout time.Duration
	if opts != nil {
		timeout = opts.Timeout
	}
	ctx, cancel, _ := runContext(ctx, job.TTL, timeout)
	defer cancel()
	return ranOut(ctx, call(ctx, h, job), job.TTL, timeout)
}

// ttlExceeded is the outcome of a handler whose context ended because the
// job ran past its ttl or its timeout (ranOut says which). A handler that
// returned nil, or only what its context told it (context deadline
// exceeded, which says nothing to the person reading the stored error),
// failed for running too long, and the error says so; any other outcome
// (its own error, RetryAfter, Discard) stands.
func ttlExceeded(ranOut, err error) error {
	switch {
	case err == nil || err == context.DeadlineExceeded || errors.Is(err, ErrTTLExceeded) || errors.Is(err, ErrTimeout):
		return ranOut
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", ranOut, err)
	}
	return err
}

// call runs a handler, turning a panic into a *PanicError with the stack.
func call(ctx context.Context, h Handler, job *Job) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return h.Handle(ctx, job)
}

// acknowledge turns a handler's outcome into the operation that tells core
// (see acker), and queues it. retryDelay is the type's RetryDelayer, nil
// for none.
func (w *Worker) acknowledge(r *running, job *Job, err error, retryDelay RetryDelayFunc) {
	o := core.LeaseOp{ID: job.ID, Lease: job.Lease, Type: job.Type}
	var retry *retryAfter
	var discard *discard
	var panicked *PanicError
	switch {
	case err == nil:
		o.Op, o.Result = core.OpComplete, job.result
	case errors.As(err, &retry):
		o.Op, o.Delay = core.OpRejoin, new(max(retry.delay.Milliseconds(), 0))
	case errors.As(err, &discard):
		o.Op, o.Error, o.Final = core.OpFail, discard.err.Error(), true
	default:
		o.Op, o.Error = core.OpFail, err.Error()
		o.Delay = w.retryDelay(&job.Job, err, retryDelay)
		if errors.As(err, &panicked) {
			// The stack goes to the job's log, where a person looks first.
			logCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if lerr := job.Log(logCtx, fmt.Sprintf("panic: %v\n%s", panicked.Value, panicked.Stack)); lerr != nil {
				w.log.Warn("panic stack not logged", "job_id", job.ID, "err", lerr)
			}
			cancel()
		}
	}
	if len(o.Error) > maxErrorBytes {
		o.Error = o.Error[:maxErrorBytes]
	}
	switch {
	case r.cancelled.Load():
		// A person cancelled the job: whatever the handler returned is
		// no failure of its own, and core ignores it (conflict).
		if w.cfg.OnCancel != nil {
			w.cfg.OnCancel(&job.Job)
		}
	case o.Op == core.OpFail:
		o.Stack = stackOf(err)
		if w.cfg.OnError != nil {
			w.cfg.OnError(&job.Job, err)
		}
	}
	// Under the registry's lock: after a shutdown released the job, its
	// outcome no longer counts (the lease is gone).
	w.jobs.done(r, func() {
		w.acks.push(ack{op: o, job: &job.Job, err: err, leaseEnd: r.leaseEnd(), cancelled: &r.cancelled})
	})
}

// maxErrorBytes keeps an error within what core accepts in fail.
const maxErrorBytes = 32 << 10

// stackOf is the stack a failed attempt sends for the job's error history:
// a panic's, or that of the first error in err's chain that is a Stacker;
// "" for none. It keeps the head, where the failure is, within what core
// accepts (core.MaxStackBytes), cut at a character.
func stackOf(err error) string {
	var panicked *PanicError
	var stacker Stacker
	var stack []byte
	switch {
	case errors.As(err, &panicked):
		stack = panicked.Stack
	case errors.As(err, &stacker):
		stack = stacker.Stack()
	}
	s := strings.ToValidUTF8(string(stack), "?") // JSON would widen a bad byte to three
	if len(s) <= core.MaxStackBytes {
		return s
	}
	cut := core.MaxStackBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// backoff is the wait before retrying a failed lease call.
func backoff(failures int) time.Duration {
	return min(100*time.Millisecond<<min(failures-1, 5), 3*time.Second)
}

// sleep waits d or until ctx ends, reporting false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
