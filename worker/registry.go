package worker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// registry knows the jobs whose handlers run: to extend their leases, to
// cancel one when core says it was cancelled, and to release them when the
// grace period of a shutdown runs out.
type registry struct {
	mu      sync.Mutex
	running map[*running]struct{}
	byID    map[int64]*running // the same jobs by id, for job.cancel
	idle    chan struct{}      // closed when running empties; replaced when it fills
	added   chan struct{}      // 1-buffered: pokes the lease keeper
}

// count is how many handlers run now.
func (r *registry) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.running)
}

type running struct {
	job      *core.Job
	deadline time.Time
	cancel   context.CancelCauseFunc // ends the handler's context with a cause
	touched  time.Time               // when the lease was last set (leased or touched)
	released bool                    // given back by a shutdown: the outcome is dropped
	// cancelled is set when job.cancel reached the worker: core holds the
	// job as cancelled, so the acknowledgement's conflict is expected.
	cancelled atomic.Bool
}

func newRegistry() *registry {
	idle := make(chan struct{})
	close(idle)
	return &registry{running: map[*running]struct{}{}, byID: map[int64]*running{}, idle: idle,
		added: make(chan struct{}, 1)}
}

func (g *registry) add(job *core.Job, deadline time.Time, cancel context.CancelCauseFunc) *running {
	r := &running{job: job, deadline: deadline, cancel: cancel, touched: time.Now()}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.running) == 0 {
		g.idle = make(chan struct{})
	}
	g.running[r] = struct{}{}
	g.byID[job.ID] = r
	select {
	case g.added <- struct{}{}:
	default:
	}
	return r
}

// touchAllNow makes every running job's lease due for extension at once
// and pokes the lease keeper: after the worker was silent long enough for
// core to end its leases (core.WorkerSilentAfter), the touch finds out
// which are spent (conflict) and cancels those handlers.
func (g *registry) touchAllNow() {
	g.mu.Lock()
	for r := range g.running {
		r.touched = time.Time{}
	}
	g.mu.Unlock()
	select {
	case g.added <- struct{}{}:
	default:
	}
}

// done removes a finished job and, unless a shutdown released it, runs ack
// under the lock, so that no acknowledgement slips in after releaseAll.
func (g *registry) done(r *running, ack func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r.released {
		return
	}
	ack()
	g.forget(r)
	if len(g.running) == 0 {
		close(g.idle)
	}
}

// forget drops r from both indexes; called under the lock.
func (g *registry) forget(r *running) {
	delete(g.running, r)
	if g.byID[r.job.ID] == r {
		delete(g.byID, r.job.ID)
	}
}

// cancelRun ends the handler's context of job id with cause ErrCancelled, if
// it runs here (a job.cancel for a job another worker runs, or that
// finished here already, is no one's business): whether it did.
func (g *registry) cancelRun(id int64) bool {
	g.mu.Lock()
	r := g.byID[id]
	g.mu.Unlock()
	if r == nil {
		return false
	}
	r.cancelled.Store(true)
	r.cancel(ErrCancelled)
	return true
}

// waitIdle waits until no handler runs, or d passes; true when idle.
func (g *registry) waitIdle(d time.Duration) bool {
	g.mu.Lock()
	idle := g.idle
	g.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
		return true
	case <-t.C:
		return false
	}
}

// releaseAll marks every running job released and returns them.
func (g *registry) releaseAll() []*core.Job {
	g.mu.Lock()
	defer g.mu.Unlock()
	jobs := make([]*core.Job, 0, len(g.running))
	for r := range g.running {
		r.released = true
		jobs = append(jobs, r.job)
		g.forget(r)
	}
	if len(jobs) > 0 {
		close(g.idle)
	}
	return jobs
}

// touchAt is when a job's lease is next extended: half its ttl after it
// was last set, so it never runs out while the handler is within its ttl.
func (r *running) touchAt() time.Time {
	return r.touched.Add(time.Duration(r.job.TTL) * time.Millisecond / 2)
}

// leaseEnd is when the job's lease runs out unless extended: a ttl after it
// was last set. Called under the registry's lock.
func (r *running) leaseEnd() time.Time {
	return r.touched.Add(time.Duration(r.job.TTL) * time.Millisecond)
}

// nextTouch is the earliest touchAt of the running jobs, or zero for none.
func (g *registry) nextTouch() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	var next time.Time
	for r := range g.running {
		if at := r.touchAt(); next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next
}

// dueForTouch lists the jobs whose lease should be extended now: half their
// ttl has passed since the lease was last set, and their handler is still
// within its time-to-run (a handler that ignores its context past the
// deadline stops being covered, so the promoter's rescue takes the job back).
func (g *registry) dueForTouch(now time.Time) []*running {
	g.mu.Lock()
	defer g.mu.Unlock()
	var due []*running
	for r := range g.running {
		if now.Before(r.deadline) && !now.Before(r.touchAt()) {
			r.touched = now
			due = append(due, r)
		}
	}
	return due
}

// keepLeases extends the leases of running jobs until ctx ends. It sleeps
// until the earliest extension is due, and is poked when a job starts (its
// extension may be due before the one the keeper sleeps for).
func (w *Worker) keepLeases(ctx context.Context) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		wait := time.Hour // nothing runs: sleep until a job starts
		if next := w.jobs.nextTouch(); !next.IsZero() {
			wait = max(time.Until(next), time.Millisecond)
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-w.jobs.added:
			continue
		case now := <-t.C:
			if due := w.jobs.dueForTouch(now); len(due) > 0 {
				w.touch(ctx, due)
			}
		}
	}
}

func (w *Worker) touch(ctx context.Context, due []*running) {
	ops := make([]core.LeaseOp, len(due))
	for i, r := range due {
		ops[i] = core.LeaseOp{Op: core.OpTouch, ID: r.job.ID, Lease: r.job.Lease, Type: r.job.Type}
	}
	callCtx, cancel := context.WithTimeout(ctx, touchCallTimeout(due))
	defer cancel()
	results, err := w.client.Batch(callCtx, ops)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			w.log.Warn("lease extension failed; trying again next tick", "jobs", len(ops), "err", err)
		}
		// Try again a tenth of the ttl from now (at most a second): soon
		// enough to keep the lease, never a busy loop while core is down.
		now := time.Now()
		w.jobs.mu.Lock()
		for _, r := range due {
			ttl := time.Duration(r.job.TTL) * time.Millisecond
			r.touched = now.Add(min(ttl/10, time.Second) - ttl/2)
		}
		w.jobs.mu.Unlock()
		return
	}
	for i, res := range results {
		if res.Error != nil && res.Error.Code == string(bus.CodeConflict) && !due[i].cancelled.Load() {
			// The job went back and may run elsewhere: stop this run.
			w.log.Warn("lease lost; cancelling the handler", "job_id", ops[i].ID)
			due[i].cancel(nil) // cause context.Canceled, as before causes existed
		}
	}
}

// touchCallTimeout bounds one extension call. Core answers a touch in
// milliseconds, so a call that is still out after a quarter of the shortest
// ttl went to a core that died or stalls: giving up then leaves time for
// the retry (a tenth of the ttl later, see touch) to reach another core
// before the lease runs out. Without a bound of its own the call would
// wait the client's 10 s default, and every running job's extension with
// it, since one goroutine extends them all.
func touchCallTimeout(due []*running) time.Duration {
	shortest := time.Duration(due[0].job.TTL) * time.Millisecond
	for _, r := range due[1:] {
		shortest = min(shortest, time.Duration(r.job.TTL)*time.Millisecond)
	}
	return min(max(shortest/4, ackCallMin), ackCallTimeout)
}
