package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

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
	// ackPoll is how often process asks core, once every handler has run,
	// whether the last acknowledgements have landed.
	ackPoll = time.Millisecond
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
	w.Process(typ, b.cfg.Concurrency, fn, nil)
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

// process: N jobs pre-enqueued, then one worker with a no-op handler that
// counts its runs, as the peers' processors do; timed from the worker's
// start until, every handler having run, core holds no job of the type:
// the last acknowledgement has landed (the peers stop at the last run).
//
// Nothing listens to the jobs' events, as in an application's workers: a
// listener of every complete event would make core read back, encode and
// send each job once more, a cost of the bench's own that the peers'
// figures do not carry (BullMQ writes its events whoever reads them, and
// that is in its figure). Until 2026-11-25 the end was the last complete
// event; docs/benchmarks-log.md (issue 12 step 5) gives both from
// interleaved runs.
func (b *bench) process(ctx context.Context) error {
	return b.processJobs(ctx, b.st.keys.jobType("noop"), fmt.Sprintf("process_c%d", b.cfg.Concurrency), nil)
}

// processPolicy: process, on a type with a policy that never binds (a
// concurrency 4 times the worker's, at least 1000) and its jobs spread
// over PolicyGroups groups in turn: what the limits' checks and the
// groups' turns cost processing (docs/policy.md), printed as
// process_c<K>_policy_*.
func (b *bench) processPolicy(ctx context.Context) error {
	typ := b.st.keys.jobType("policy")
	limit := int64(max(1000, 4*b.cfg.Concurrency))
	if _, err := b.st.client.SetType(ctx, &core.TypePolicy{Type: typ, Concurrency: limit}); err != nil {
		return fmt.Errorf("type_set: %w", err)
	}
	groups := b.cfg.PolicyGroups
	b.r.comment("%s: concurrency %d on the type, jobs in %d groups", PhaseProcessPolicy, limit, groups)
	groupOf := func(i int) string { return "g" + strconv.Itoa(i%groups) }
	return b.processJobs(ctx, typ, fmt.Sprintf("process_c%d_policy", b.cfg.Concurrency), groupOf)
}

// processJobs pre-enqueues N jobs of typ (of groupOf(i)'s group, when
// given), runs one worker on them and prints name's figures.
func (b *bench) processJobs(ctx context.Context, typ, name string, groupOf func(int) string) (err error) {
	n := b.cfg.N
	pctx, cancel := context.WithTimeout(ctx, b.cfg.PhaseTimeout)
	defer cancel()
	if err := b.createBulk(pctx, typ, n, removeOnComplete, groupOf, nil); err != nil {
		return fmt.Errorf("pre-enqueue: %w", err)
	}

	calls0, err := b.st.keys.commandCalls(pctx)
	if err != nil {
		return err
	}
	cpu0, err := b.st.keys.redisCPU(pctx)
	if err != nil {
		return err
	}
	var ran atomic.Int64
	allRan := make(chan struct{})
	start, stop, err := b.runWorker(ctx, typ, func(context.Context, *worker.Job) error {
		if ran.Add(1) == int64(n) {
			close(allRan)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stop()) }()

	end, err := b.waitAcknowledged(pctx, typ, allRan)
	done := n
	switch {
	case phaseTimedOut(ctx, pctx):
		end, done = time.Now(), int(min(ran.Load(), int64(n)))
	case err != nil:
		return err
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

// waitAcknowledged waits until every handler has run (allRan), then until
// core holds no job of typ, and returns when it found none. It asks every
// ackPoll, and only once the handlers are done: the runs themselves are
// not disturbed, and the end it reports is late by at most a poll and a
// round trip.
func (b *bench) waitAcknowledged(ctx context.Context, typ string, allRan <-chan struct{}) (time.Time, error) {
	select {
	case <-allRan:
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
	tick := time.NewTicker(ackPoll)
	defer tick.Stop()
	for {
		left, err := b.st.client.Count(ctx, "", typ)
		switch {
		case err != nil && ctx.Err() != nil:
			return time.Time{}, ctx.Err()
		case err != nil:
			return time.Time{}, fmt.Errorf("count jobs left: %w", err)
		case left == 0:
			return time.Now(), nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
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
		_, err := b.st.client.Create(pctx, typ, jobData(sent, t0.UnixNano()), removeOnComplete)
		if err != nil {
			if phaseTimedOut(ctx, pctx) {
				break
			}
			return err
		}
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
		_, err := b.st.client.Create(pctx, typ, jobData(i, t0.Add(d).UnixNano()),
			&core.CreateOpts{Delay: d, RemoveOnComplete: core.RemoveAtOnce})
		if err != nil {
			if phaseTimedOut(ctx, pctx) {
				break
			}
			return err
		}
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
