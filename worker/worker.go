package worker

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/runner"
	"github.com/kuebus/kuebus/core"
)

// Defaults of Config.
const (
	ConcurrencyDefault     = 10
	LeaseWaitDefault       = time.Second
	ShutdownTimeoutDefault = 30 * time.Second
)

// Config configures a Worker.
type Config struct {
	// Conn is the NATS connection to the deployment, with its credentials
	// (bus.Auth: a user of the worker role on a locked server). Required.
	Conn *nats.Conn
	// Prefix is the deployment's subject prefix. Default: none.
	Prefix string
	// ID names this worker in leased jobs (worker_id). Default:
	// "<host>-<pid>-<random>".
	ID string
	// Concurrency bounds the handlers running at once for the types
	// registered with Handle. Default 10. Types registered with Process have
	// their own.
	Concurrency int
	// LeaseWait is how long one lease call waits at core when nothing is
	// ready; core answers at once when a job arrives, so this only bounds how
	// long a stopping worker waits for its last lease call, and (plus half a
	// second) how long a worker whose core died waits before it calls
	// another. Default 1s.
	LeaseWait time.Duration
	// ShutdownTimeout is the grace period: after Run's context ends, running
	// handlers have this long to finish before their contexts are cancelled
	// with ErrShutdown and their jobs released. Default 30s.
	ShutdownTimeout time.Duration
	// Logger gets the worker's troubles. Default: discard.
	Logger *slog.Logger
	// OnFailed is called when a job has failed for good (no attempts left,
	// or Discard), with the job as core stored it and the handler's error.
	// It runs on the worker's acknowledging goroutine: keep it short.
	OnFailed func(job *core.Job, err error)
	// OnError is called for every attempt that fails (the handler returned
	// an error other than RetryAfter, or panicked, or overran), before core
	// is told, with the job as its handler saw it (Attempts: the attempt
	// that failed, from 1) and the error: whether it will be retried is
	// known later (OnFailed). Not for a job a person cancelled while it ran
	// (OnCancel). It runs on the handler's goroutine.
	OnError func(job *core.Job, err error)
	// OnCancel is called when a job was cancelled (core's cancel, from the
	// CLI, REST or any client) while its handler ran, once the handler
	// returned, with the job as its handler saw it. It runs on the
	// handler's goroutine.
	OnCancel func(job *core.Job)
	// RetryDelay chooses the wait before a failed job's next attempt, for
	// every type whose handler is no RetryDelayer (see RetryDelayFunc; a
	// DelayRetry error wins over both). Default: each job's backoff.
	RetryDelay RetryDelayFunc
	// Metrics hears every handler's start and end (worker/workerprom has a
	// Prometheus one). Default: none.
	Metrics Metrics
	// Middleware wraps every handler, the first outermost: logging,
	// tracing, metrics, recovering of one's own. It sees the handler's
	// context and job and returns its error. Default: none.
	Middleware []Middleware
}

// Middleware wraps a handler: it returns one that calls next (or not)
// around work of its own.
type Middleware func(next Handler) Handler

// HandlerOpts are the options of one registration (Process, HandleArgs,
// ProcessArgs); nil: none.
type HandlerOpts struct {
	// Timeout bounds one run of the handler: past it, its context ends
	// with cause ErrTimeout and, when it returns nil or its context's
	// error, the attempt fails with an error that says so (retried while
	// attempts remain). It is the worker's own limit, beside the job's
	// ttl, which core enforces too: a timeout at or past the ttl changes
	// nothing. Default: none, the ttl alone.
	Timeout time.Duration
	// RetryDelay chooses the wait before a failed job's next attempt for
	// this type: it wins over Config.RetryDelay, a DelayRetry error over
	// it (see RetryDelayFunc). Default: Config.RetryDelay, else each job's
	// backoff.
	RetryDelay RetryDelayFunc
}

func (o *HandlerOpts) retryDelay() RetryDelayFunc {
	if o == nil {
		return nil
	}
	return o.RetryDelay
}

func (o *HandlerOpts) validate(jobType string) {
	if o != nil && o.Timeout < 0 {
		panic(fmt.Sprintf("worker: %q: timeout %s is negative", jobType, o.Timeout))
	}
}

func (c Config) withDefaults() Config {
	c.Concurrency = cmp.Or(c.Concurrency, ConcurrencyDefault)
	c.LeaseWait = cmp.Or(c.LeaseWait, LeaseWaitDefault)
	c.ShutdownTimeout = cmp.Or(c.ShutdownTimeout, ShutdownTimeoutDefault)
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	if c.Metrics == nil {
		c.Metrics = noMetrics{}
	}
	if c.ID == "" {
		host, _ := os.Hostname()
		var b [3]byte
		_, _ = rand.Read(b[:])
		c.ID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Concurrency < 0:
		return fmt.Errorf("worker: concurrency %d is negative", c.Concurrency)
	case c.LeaseWait < 0 || c.LeaseWait > core.MaxLeaseWait*time.Millisecond:
		return fmt.Errorf("worker: lease wait %s is outside 0..%s", c.LeaseWait, core.MaxLeaseWait*time.Millisecond)
	case c.ShutdownTimeout < 0:
		return fmt.Errorf("worker: shutdown timeout %s is negative", c.ShutdownTimeout)
	case len(c.ID) > core.MaxWorkerLen:
		return fmt.Errorf("worker: id is %d bytes, longer than %d", len(c.ID), core.MaxWorkerLen)
	}
	return nil
}

// Worker runs handlers for jobs it leases from core over NATS. While a
// handler runs, its lease is extended each time half the job's ttl has
// passed since the lease was last set. Register
// handlers with Handle or Process, then call Run.
type Worker struct {
	cfg    Config
	client *core.Client
	log    *slog.Logger

	mu      sync.Mutex // guards pools and started
	pools   []*pool
	shared  *pool // the pool of Handle'd types
	started bool

	jobs *registry
	acks *acker
	// handlers run on goroutines kept for the next job (set by Run): a
	// goroutine made per job grew its stack again every time, 7% of a
	// busy worker's CPU.
	handlers *runner.Pool
}

// New returns a worker. It does not lease anything until Run.
func New(cfg Config) (*Worker, error) {
	if cfg.Conn == nil {
		panic("worker: New needs a NATS connection")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	client, err := core.NewClient(cfg.Conn, &core.ClientOptions{Prefix: cfg.Prefix})
	if err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	w := &Worker{cfg: cfg, client: client, log: cfg.Logger.With("component", "worker", "worker", cfg.ID)}
	w.jobs = newRegistry()
	w.acks = newAcker(w)
	return w, nil
}

// Handle registers h for jobType. Every type registered this way shares
// Config.Concurrency. It panics after Run has started or when the type was
// registered before: both are programming errors.
func (w *Worker) Handle(jobType string, h Handler) {
	w.handleShared(jobType, h, nil)
}

// Process registers fn for jobType with a concurrency of its own: Kue's
// queue.process(type, concurrency, fn), and opts (nil: none), its timeout
// and retry delay. A bad concurrency or timeout panics, as in Handle.
func (w *Worker) Process(jobType string, concurrency int, fn HandlerFunc, opts *HandlerOpts) {
	w.process(jobType, concurrency, fn, opts)
}

// handleShared registers h for jobType in the shared pool with opts.
func (w *Worker) handleShared(jobType string, h Handler, opts *HandlerOpts) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkRegister(jobType)
	opts.validate(jobType)
	if w.shared == nil {
		w.shared = &pool{w: w, concurrency: w.cfg.Concurrency, handlers: map[string]Handler{}}
		w.pools = append(w.pools, w.shared)
	}
	w.shared.add(jobType, h, w.wrap(h), opts)
}

func (w *Worker) process(jobType string, concurrency int, h Handler, opts *HandlerOpts) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkRegister(jobType)
	if concurrency <= 0 {
		panic(fmt.Sprintf("worker: Process(%q): concurrency %d is not positive", jobType, concurrency))
	}
	opts.validate(jobType)
	p := &pool{w: w, concurrency: concurrency, handlers: map[string]Handler{}}
	p.add(jobType, h, w.wrap(h), opts)
	w.pools = append(w.pools, p)
}

// wrap puts h inside the configured middleware, the first outermost.
func (w *Worker) wrap(h Handler) Handler {
	for i := len(w.cfg.Middleware) - 1; i >= 0; i-- {
		h = w.cfg.Middleware[i](h)
	}
	return h
}

func (w *Worker) checkRegister(jobType string) {
	if w.started {
		panic("worker: handlers must be registered before Run")
	}
	if err := bus.ValidToken(jobType); err != nil {
		panic(fmt.Sprintf("worker: %q is not a job type: %v", jobType, err))
	}
	for _, p := range w.pools {
		if _, ok := p.handlers[jobType]; ok {
			panic(fmt.Sprintf("worker: a handler for %q is registered already", jobType))
		}
	}
}

// ErrNoHandlers is returned by Run when no handler was registered.
var ErrNoHandlers = errors.New("kuebus: worker has no handlers")

// Run leases and runs jobs until ctx ends, then stops in order: (1) stop
// leasing (a lease call in flight is let finish, and what it brings is
// released); (2) wait up to ShutdownTimeout for running handlers;
// (3) cancel those still running with ErrShutdown and release their jobs,
// which uses no attempt; (4) send the acknowledgements and releases still
// pending, retrying those core does not answer for up to ShutdownTimeout,
// then give them up (a call in flight included) with one warning line
// saying how many; their jobs run again when their leases run out. So a
// stop takes at most a lease call, plus twice ShutdownTimeout, even with
// no core answering. It returns nil after a clean drain.
func (w *Worker) Run(ctx context.Context) error {
	w.mu.Lock()
	if w.started {
		w.mu.Unlock()
		return errors.New("worker: Run called twice")
	}
	w.started = true
	pools := w.pools
	w.mu.Unlock()
	if len(pools) == 0 {
		return ErrNoHandlers
	}

	// job.cancel is heard before the first lease, so no job of ours can be
	// cancelled unheard; it is heard until the last handler has returned.
	cancels, err := w.listenCancels(handledTypes(pools))
	if err != nil {
		return err
	}
	defer func() { _ = cancels.Unsubscribe() }()

	// Handlers run under jobsCtx, which outlives ctx by the grace period.
	jobsCtx, cancelJobs := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelJobs(ErrShutdown)
	w.acks.start()
	var keeper sync.WaitGroup
	keeperCtx, stopKeeper := context.WithCancel(context.WithoutCancel(ctx))
	keeper.Go(func() { w.keepLeases(keeperCtx) })

	beats := w.startHeartbeats(pools)
	defer beats.end()

	slots := 0
	for _, p := range pools {
		slots += p.concurrency
	}
	w.handlers = runner.NewPool(int32(min(slots, math.MaxInt32)))
	var fetchers sync.WaitGroup
	for _, p := range pools {
		p.fillSlots()
		for range min(leaseCallers, p.concurrency) {
			fetchers.Go(func() { p.fetch(ctx, jobsCtx) })
		}
	}
	fetchers.Wait() // (1) returns once ctx has ended and no lease call is in flight

	var clean bool
	if w.jobs.waitIdle(w.cfg.ShutdownTimeout) { // (2)
		clean = true
	} else { // (3)
		left := w.jobs.releaseAll()
		cancelJobs(ErrShutdown)
		w.giveBack(left)
		w.log.Warn("grace period over: released the jobs of handlers still running",
			"jobs", len(left), "grace", w.cfg.ShutdownTimeout)
	}
	if clean {
		w.handlers.Close()
	} else {
		w.handlers.Stop() // a handler past the grace may never return
	}
	stopKeeper()
	keeper.Wait()
	w.acks.stop(w.cfg.ShutdownTimeout) // (4)
	if !clean {
		return fmt.Errorf("worker: %w after %s: unfinished jobs were released", ErrShutdown, w.cfg.ShutdownTimeout)
	}
	return nil
}

// giveBackLate releases the jobs of a lease reply that came after its
// call gave up (bus.WithLateReply): nobody runs them here.
func (w *Worker) giveBackLate(body []byte) {
	var reply core.JobsReply
	if err := bus.DecodeReply(body, &reply); err != nil || len(reply.Jobs) == 0 {
		return
	}
	w.log.Warn("a lease reply came after its call gave up; giving its jobs back", "jobs", len(reply.Jobs))
	now := time.Now()
	for i := range reply.Jobs {
		j := &reply.Jobs[i]
		w.acks.offer(ack{
			op:       core.LeaseOp{Op: core.OpRelease, ID: j.ID, Lease: j.Lease, Type: j.Type},
			job:      j,
			leaseEnd: now.Add(time.Duration(j.TTL) * time.Millisecond),
		})
	}
}

// giveBack releases jobs (at a shutdown, or leased after the stop began)
// through the acker, as acknowledgements: batched, sent again while core
// does not answer, and given up with the others when the stop's grace for
// them ends, so that a core that does not answer cannot hold the stop.
// Those given up come back when their lease runs out.
func (w *Worker) giveBack(jobs []*core.Job) {
	now := time.Now()
	for _, j := range jobs {
		w.acks.push(ack{
			op:  core.LeaseOp{Op: core.OpRelease, ID: j.ID, Lease: j.Lease, Type: j.Type},
			job: j,
			// At most this: a lease extended earlier ends sooner. It only
			// bounds the retries, which the stop's grace ends first.
			leaseEnd: now.Add(time.Duration(j.TTL) * time.Millisecond),
		})
	}
}
