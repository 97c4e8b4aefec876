package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/batch"
	"github.com/kuebus/kuebus/core"
)

// acker sends the outcomes of handlers to core in batches: whatever piled
// up while the previous batch was on the wire goes in the next one, so a
// busy worker pays one round trip (and core one script per type) for many
// jobs, and an idle one sends each at once.
//
// A batch that gets no answer (core unavailable, or the call timed out: the
// core that had it may have died, or may have applied it) is sent again,
// with backoff, until the last of its leases would have run out; after that
// rescue takes the jobs back anyway. A stop ends the retries when its grace
// is over, cutting short a call in flight (which may otherwise wait
// ackCallTimeout per batch still queued), and counts what it gave up for
// one line in the log. Sending again is safe because core
// makes complete, fail, release and rejoin idempotent by lease token: an
// operation already applied answers success and changes nothing. A batch
// that got an answer is never sent again; a conflict in it stays a conflict.
type acker struct {
	w    *Worker
	in   chan ack
	quit chan struct{} // closed by stop: send what is queued, then return
	// giveUp cancels the senders' context when a stop's time is up: no
	// more tries, and the call in flight ends.
	giveUp      context.CancelFunc
	undelivered atomic.Int64 // acknowledgements a stop gave up
	wg          sync.WaitGroup
	first       sync.Once
}

// ack is one handler's outcome on its way to core.
type ack struct {
	op       core.LeaseOp
	job      *core.Job
	err      error     // the handler's error, for OnFailed
	leaseEnd time.Time // when the lease runs out, as far as the worker knows
	// cancelled is the running job's flag (nil for a release): set when
	// job.cancel reached the worker, so that core's conflict is the
	// expected answer, not a lost lease.
	cancelled *atomic.Bool
}

const (
	// ackSenders is how many batches may be on the wire at once.
	ackSenders = 2
	// ackBatchMax bounds one batch (core takes up to core.MaxBatch).
	ackBatchMax = 256
	// ackCallTimeout bounds one send of a batch. Core applies a batch in
	// milliseconds; a call this late went to a core that died or stalls,
	// and the batch is better sent again (to another core) than waited for.
	ackCallTimeout = 3 * time.Second
	// ackCallMin is the shortest a try may be given: below it a healthy
	// core on a busy machine would miss it too.
	ackCallMin = 100 * time.Millisecond
)

// errGivenUp ends the delivery of a batch when a stop's grace is over.
var errGivenUp = errors.New("worker: ack: given up by the stop")

func newAcker(w *Worker) *acker {
	return &acker{w: w, in: make(chan ack, 4096), quit: make(chan struct{})}
}

func (a *acker) start() {
	ctx, cancel := context.WithCancel(context.Background())
	a.giveUp = cancel
	for range ackSenders {
		a.wg.Go(func() { a.loop(ctx) })
	}
}

func (a *acker) push(x ack) { a.in <- x }

// offer pushes x unless the queue is full or the acker stops: for a
// release nobody waits for (a late lease reply's), whose job rescue takes
// back anyway, and which must never block the goroutine that offers it.
func (a *acker) offer(x ack) bool {
	select {
	case <-a.quit:
		return false
	default:
	}
	select {
	case a.in <- x:
		return true
	default:
		return false
	}
}

// stop sends what is still queued, then returns. Batches that core does
// not answer are retried for at most grace; then they are given up (their
// jobs come back through rescue), and one warning line says how many.
func (a *acker) stop(grace time.Duration) {
	a.first.Do(func() { close(a.quit) })
	defer a.giveUp() // releases the context when all was sent in time
	sent := make(chan struct{})
	go func() { a.wg.Wait(); close(sent) }() // waited for below, in both cases
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-sent:
	case <-t.C:
		a.giveUp()
		<-sent
	}
	if n := a.undelivered.Load(); n > 0 {
		a.w.log.Warn("stopped with acknowledgements undelivered: core did not answer within the grace period; their jobs run again when their lease runs out",
			"jobs", n, "grace", grace)
	}
}

func (a *acker) loop(ctx context.Context) {
	for {
		var x ack
		select {
		case x = <-a.in:
		case <-a.quit:
			// Drain: the registry guarantees nothing is pushed any more.
			for {
				select {
				case x = <-a.in:
					a.send(ctx, a.collect(x))
				default:
					return
				}
			}
		}
		a.send(ctx, a.collect(x))
	}
}

// collect takes x and whatever else is queued, up to a batch, once the
// handlers that are finishing at the same moment have queued theirs
// (batch.Gather).
func (a *acker) collect(x ack) []ack {
	batch.Gather(func() int { return len(a.in) })
	// room for what is queued now, so the batch is not grown and copied
	// (an ack is ~100 bytes) as it fills
	batch := append(make([]ack, 0, min(1+len(a.in), ackBatchMax)), x)
	for len(batch) < ackBatchMax {
		select {
		case y := <-a.in:
			batch = append(batch, y)
		default:
			return batch
		}
	}
	return batch
}

func (a *acker) send(ctx context.Context, batch []ack) {
	ops := make([]core.LeaseOp, len(batch))
	var first, until time.Time // the first and the last lease of the batch to run out
	for i, x := range batch {
		ops[i] = x.op
		if first.IsZero() || x.leaseEnd.Before(first) {
			first = x.leaseEnd
		}
		if x.leaseEnd.After(until) {
			until = x.leaseEnd
		}
	}
	results, err := a.deliver(ctx, ops, first, until)
	if errors.Is(err, errGivenUp) {
		a.undelivered.Add(int64(len(ops))) // stop logs them, in one line
		return
	}
	if err != nil {
		a.w.log.Error("acknowledgements not delivered; their jobs run again when their lease runs out",
			"jobs", len(ops), "err", err)
		return
	}
	for i, r := range results {
		x := batch[i]
		switch {
		case r.Error != nil && r.Error.Code == string(bus.CodeConflict) && x.cancelled != nil && x.cancelled.Load():
			// The job was cancelled while its handler ran: core holds it as
			// cancelled and changed nothing. Expected, final: not retried.
			a.w.log.Debug("acknowledgement of a cancelled job: conflict, as expected", "job_id", x.op.ID, "op", x.op.Op)
		case r.Error != nil:
			a.w.log.Warn("acknowledgement refused", "job_id", x.op.ID, "op", x.op.Op,
				"code", r.Error.Code, "err", r.Error.Message)
		case x.op.Op == core.OpFail && r.State == core.StateFailed && a.w.cfg.OnFailed != nil:
			job := *x.job
			// x.job is the handler's: its Attempts counts the attempt that
			// failed, which is core's count now.
			job.State, job.Error, job.Lease = r.State, x.op.Error, ""
			a.w.cfg.OnFailed(&job, x.err)
		}
	}
}

// deliver sends a batch until core answers, the lease of every job in it
// has run out, or a stop gives up (ctx ends: errGivenUp), and returns
// core's results. first is when the first of its leases runs out: each try
// gives up early enough that the next one, to another core, can still land
// before it.
func (a *acker) deliver(ctx context.Context, ops []core.LeaseOp, first, until time.Time) ([]core.OpResult, error) {
	for try := 1; ; try++ {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w before try %d", errGivenUp, try)
		}
		callCtx, cancel := context.WithTimeout(ctx, ackTryTimeout(time.Until(first)))
		results, err := a.w.client.Batch(callCtx, ops)
		cancel()
		switch {
		case err == nil:
			return results, nil
		case ctx.Err() != nil:
			return nil, fmt.Errorf("%w during try %d: %w", errGivenUp, try, err)
		case !unanswered(err):
			return nil, err
		}
		wait := backoff(try)
		if time.Now().Add(wait).After(until) {
			return nil, fmt.Errorf("after %d tries, the leases ran out: %w", try, err)
		}
		// One warning per batch, not per try: an outage of a minute would
		// otherwise log a line every few seconds for every batch.
		level := slog.LevelDebug
		if try == 1 {
			level = slog.LevelWarn
		}
		a.w.log.Log(ctx, level, "acknowledgements not delivered; sending them again", "jobs", len(ops),
			"try", try, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w after %d tries: %w", errGivenUp, try, err)
		}
	}
}

// unanswered reports whether a call got no answer from core (nobody
// serves, the connection is down, or no answer came in time), so that it
// may or may not have been applied; an answer, even an error, is final.
func unanswered(err error) bool {
	return errors.Is(err, bus.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrTimeout)
}

// ackTryTimeout bounds one try of a call whose first lease runs out in
// left: half of that, so that a try lost with a dying core leaves time for
// another before the lease ends (with a 2 s ttl, a 3 s timeout let the
// rescue hand the finished job to another worker first), within
// ackCallMin and ackCallTimeout.
func ackTryTimeout(left time.Duration) time.Duration {
	return min(max(left/2, ackCallMin), ackCallTimeout)
}
