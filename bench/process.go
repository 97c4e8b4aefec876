package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/worker"
)

// The phases that run jobs: one worker (worker.Process with Concurrency)
// on a NATS connection of its own, and jobs created with remove_on_complete.

const (
	// drainTimeout bounds the wait for the last jobs of the latency and
	// delayed phases once every job has been created.
	drainTimeout = 15 * time.Second
	// warmUpTimeout bounds the wait for the warm-up job: the worker runs.
	warmUpTimeout = 10 * time.Second
	// gonePoll is how often process asks core whether the jobs are all gone,
	// in case complete events were lost (events are at most once).
	gonePoll = 250 * time.Millisecond
)

var removeOnComplete = &core.CreateOpts{RemoveOnComplete: core.RemoveAtOnce}

// runWorker starts a worker that runs fn for jobs of typ. It returns when
// the worker has been told to run; stop ends it gracefully and waits.
func (b *bench) runWorker(ctx context.Context, typ string, fn worker.HandlerFunc) (started time.Time, stop func() error, err error) {
	nc, err := b.st.connect("kuebus-bench-worker")
	if err != nil {
		return started, nil, err
	}
	w, err := worker.New(worker.Config{Conn: nc, Prefix: b.cfg.Prefix, Logger: b.st.log, ShutdownTimeout: stopTimeout})
	if err != nil {
		nc.Close()
		return started, nil, fmt.Errorf("bench: %w", err)
	}
	w.Process(typ, b.cfg.Concurrency, fn)
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var runErr error
	started = time.Now()
	wg.Go(func() { runErr = w.Run(wctx) })
	return started, func() error {
		cancel()
		wg.Wait()
		nc.Close()
		if runErr != nil {
			return fmt.Errorf("bench: worker: %w", runErr)
		}
		return nil
	}, nil
}

// process: N jobs pre-enqueued, then one worker with a no-op handler, timed
// from its start to the last complete event.
func (b *bench) process(ctx context.Context) (err error) {
	typ := b.st.keys.jobType("noop")
	n := b.cfg.N
	name := fmt.Sprintf("process_c%d", b.cfg.Concurrency)
	pctx, cancel := context.WithTimeout(ctx, b.cfg.PhaseTimeout)
	defer cancel()
	if err := b.createBulk(pctx, typ, n, removeOnComplete, nil); err != nil {
		return fmt.Errorf("pre-enqueue: %w", err)
	}

	// The complete events of the type, counted without being decoded.
	var completed atomic.Int64
	var last time.Time // written before allDone is closed
	allDone := make(chan struct{})
	sub, err := b.st.listen.Subscribe(b.st.subj.JobEventsOf(bus.EventComplete, typ), func(*nats.Msg) {
		if completed.Add(1) == int64(n) {
			last = time.Now()
			close(allDone)
		}
	})
	if err != nil {
		return fmt.Errorf("subscribe to complete events: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	// No limit: an event dropped here would be a job never counted.
	if err := errors.Join(sub.SetPendingLimits(-1, -1), b.st.listen.Flush()); err != nil {
		return fmt.Errorf("subscribe to complete events: %w", err)
	}

	calls0, err := b.st.keys.commandCalls(pctx)
	if err != nil {
		return err
	}
	cpu0, err := b.st.keys.redisCPU(pctx)
	if err != nil {
		return err
	}
	start, stop, err := b.runWorker(ctx, typ, func(context.Context, *worker.Job) error { return nil })
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stop()) }()

	end, byEvents, err := b.waitGone(pctx, typ, allDone, &last)
	done := n
	switch {
	case phaseTimedOut(ctx, pctx):
		end, done = time.Now(), int(completed.Load())
	case err != nil:
		return err
	case !byEvents:
		b.r.comment("warning: %s saw %d of %d complete events; the end is when core had no job left", name, completed.Load(), n)
	}
	calls1, err := b.st.keys.commandCalls(context.WithoutCancel(ctx))
	if err != nil {
		return err
	}
	cpu1, err := b.st.keys.redisCPU(context.WithoutCancel(ctx))
	if err != nil {
		return err
	}
	b.throughput(name, done, end.Sub(start))
	if done > 0 {
		b.r.value(name+"_redis_cmds_per_job", float64(calls1-calls0)/float64(done), 2, "cmds/job")
	}
	b.r.value(name+"_elapsed", end.Sub(start).Seconds(), 3, "s")
	// As the peers print it: Redis's CPU seconds per second of the phase.
	b.r.value(name+"_redis_cpu_util", (cpu1-cpu0)/end.Sub(start).Seconds(), 2, "cores")
	return nil
}

// waitGone waits until the last complete event (allDone, then *last is its
// time), or until core has no job of typ left, which only a lost event
// makes come first. It returns when that was, and whether the events told.
func (b *bench) waitGone(ctx context.Context, typ string, allDone <-chan struct{}, last *time.Time) (time.Time, bool, error) {
	tick := time.NewTicker(gonePoll)
	defer tick.Stop()
	for {
		select {
		case <-allDone:
			return *last, true, nil
		case <-ctx.Done():
			return time.Time{}, false, ctx.Err()
		case <-tick.C:
			left, err := b.st.client.Count(ctx, "", typ)
			if err != nil {
				if ctx.Err() != nil {
					return time.Time{}, false, ctx.Err()
				}
				return time.Time{}, false, fmt.Errorf("count jobs left: %w", err)
			}
			if left == 0 {
				select {
				case <-allDone:
					return *last, true, nil
				default:
					return time.Now(), false, nil
				}
			}
		}
	}
}

// latency: one job per LatencyInterval for LatencyDuration, each carrying
// the time its create call started; the handler records how long ago that
// was when it starts.
func (b *bench) latency(ctx context.Context) (err error) {
	typ := b.st.keys.jobType("latency")
	pctx, cancel := context.WithTimeout(ctx, b.cfg.PhaseTimeout)
	defer cancel()
	c := newCollector(int(b.cfg.LatencyDuration/b.cfg.LatencyInterval) + 1)
	_, stop, err := b.runWorker(ctx, typ, c.handle)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stop()) }()
	if err := c.warmUp(pctx, b.st.client, typ); err != nil {
		return err
	}

	sent := 0
	tick := time.NewTicker(b.cfg.LatencyInterval)
	defer tick.Stop()
	start := time.Now()
	end := start.Add(b.cfg.LatencyDuration)
	for pctx.Err() == nil {
		select {
		case <-tick.C:
		case <-pctx.Done():
			continue
		}
		t0 := time.Now()
		if !t0.Before(end) {
			break
		}
		job, err := b.st.client.Create(pctx, typ, jobData(sent, t0.UnixNano()), removeOnComplete)
		if err != nil {
			if phaseTimedOut(ctx, pctx) {
				break
			}
			return err
		}
		b.st.keys.created(job.ID)
		sent++
	}
	if phaseTimedOut(ctx, pctx) {
		b.r.comment("warning: latency timed out after %s", b.cfg.PhaseTimeout)
	}
	rate := float64(sent) / time.Since(start).Seconds()
	c.wait(pctx, sent, drainTimeout)
	if err := ctx.Err(); err != nil {
		return err
	}
	ms := c.millis()
	b.r.comment("latency: %d jobs sent at %.0f/s, %d received", sent, rate, len(ms))
	if len(ms) == 0 {
		return errors.New("no job reached the handler")
	}
	b.r.value("latency_p50", percentile(ms, 0.50), 3, "ms")
	b.r.value("latency_p99", percentile(ms, 0.99), 3, "ms")
	b.r.value("latency_max", ms[len(ms)-1], 3, "ms")
	return nil
}

// delayed: DelayedJobs jobs, job i delayed (i+1)·DelayedStep, each carrying
// its due time (create call start + delay); the handler records how late it
// starts (negative: early). The promote loop moves them.
func (b *bench) delayed(ctx context.Context) (err error) {
	typ := b.st.keys.jobType("delayed")
	n := b.cfg.DelayedJobs
	pctx, cancel := context.WithTimeout(ctx, b.cfg.PhaseTimeout)
	defer cancel()
	c := newCollector(n)
	_, stop, err := b.runWorker(ctx, typ, c.handle)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stop()) }()
	if err := c.warmUp(pctx, b.st.client, typ); err != nil {
		return err
	}

	sent := 0
	for i := range n {
		d := time.Duration(i+1) * b.cfg.DelayedStep
		t0 := time.Now()
		job, err := b.st.client.Create(pctx, typ, jobData(i, t0.Add(d).UnixNano()),
			&core.CreateOpts{Delay: d, RemoveOnComplete: core.RemoveAtOnce})
		if err != nil {
			if phaseTimedOut(ctx, pctx) {
				break
			}
			return err
		}
		b.st.keys.created(job.ID)
		sent++
	}
	c.wait(pctx, sent, time.Duration(n)*b.cfg.DelayedStep+drainTimeout)
	if err := ctx.Err(); err != nil {
		return err
	}
	ms := c.millis()
	if len(ms) < n {
		b.r.comment("warning: delayed: %d of %d jobs ran", len(ms), n)
	}
	if len(ms) == 0 {
		return errors.New("no delayed job reached the handler")
	}
	early := 0
	for _, v := range ms {
		if v < 0 {
			early++
		}
	}
	b.r.comment("delayed: %d jobs, %d started before their due time", len(ms), early)
	b.r.value("delayed_error_min", ms[0], 3, "ms")
	b.r.value("delayed_error_p50", percentile(ms, 0.50), 3, "ms")
	b.r.value("delayed_error_p99", percentile(ms, 0.99), 3, "ms")
	b.r.value("delayed_error_max", ms[len(ms)-1], 3, "ms")
	return nil
}

// collector is the handler of the latency and delayed phases: it records,
// for each job, handler start − the time in its data. A job with a negative
// sequence number is the warm-up.
type collector struct {
	mu   sync.Mutex
	ns   []int64
	got  chan struct{} // poked on every sample
	warm chan struct{} // poked by the warm-up job
}

func newCollector(capacity int) *collector {
	return &collector{ns: make([]int64, 0, capacity), got: make(chan struct{}, 1), warm: make(chan struct{}, 1)}
}

func (c *collector) handle(_ context.Context, job *worker.Job) error {
	now := time.Now().UnixNano()
	var p payload
	if err := job.Decode(&p); err != nil {
		return err
	}
	ch := c.got
	if p.I < 0 {
		ch = c.warm
	} else {
		c.mu.Lock()
		c.ns = append(c.ns, now-p.T)
		c.mu.Unlock()
	}
	select {
	case ch <- struct{}{}:
	default:
	}
	return nil
}

// warmUp creates one job outside the measured set and waits until it ran:
// the worker is leasing and core's scripts are loaded.
func (c *collector) warmUp(ctx context.Context, client *core.Client, typ string) error {
	if _, err := client.Create(ctx, typ, jobData(-1, time.Now().UnixNano()), removeOnComplete); err != nil {
		return fmt.Errorf("warm-up job: %w", err)
	}
	timer := time.NewTimer(warmUpTimeout)
	defer timer.Stop()
	select {
	case <-c.warm:
		return nil
	case <-timer.C:
		return fmt.Errorf("the warm-up job did not run within %s", warmUpTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ns)
}

// wait waits until n samples are in, at most timeout.
func (c *collector) wait(ctx context.Context, n int, timeout time.Duration) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for c.count() < n {
		select {
		case <-c.got:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// millis returns the samples in milliseconds, sorted.
func (c *collector) millis() []float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	ms := make([]float64, len(c.ns))
	for i, v := range c.ns {
		ms[i] = float64(v) / 1e6
	}
	slices.Sort(ms)
	return ms
}

// percentile is the nearest-rank percentile of sorted samples, as the
// peers compute it.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
