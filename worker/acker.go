package worker

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// acker sends the outcomes of handlers to core in batches: whatever piled
// up while the previous batch was on the wire goes in the next one, so a
// busy worker pays one round trip (and core one script per type) for many
// jobs, and an idle one sends each at once.
type acker struct {
	w     *Worker
	in    chan ack
	quit  chan struct{}
	wg    sync.WaitGroup
	first sync.Once
}

// ack is one handler's outcome on its way to core.
type ack struct {
	op  core.LeaseOp
	job *core.Job
	err error // the handler's error, for OnFailed
}

const (
	// ackSenders is how many batches may be on the wire at once.
	ackSenders = 2
	// ackBatchMax bounds one batch (core takes up to core.MaxBatch).
	ackBatchMax = 256
	// ackAttempts is how often a batch is sent while core is unavailable;
	// after that its jobs come back through rescue when their lease runs out.
	ackAttempts = 5
)

func newAcker(w *Worker) *acker {
	return &acker{w: w, in: make(chan ack, 4096), quit: make(chan struct{})}
}

func (a *acker) start() {
	for range ackSenders {
		a.wg.Go(a.loop)
	}
}

func (a *acker) push(x ack) { a.in <- x }

// stop sends what is still queued, then returns.
func (a *acker) stop() {
	a.first.Do(func() { close(a.quit) })
	a.wg.Wait()
}

func (a *acker) loop() {
	for {
		var x ack
		select {
		case x = <-a.in:
		case <-a.quit:
			// Drain: the registry guarantees nothing is pushed any more.
			for {
				select {
				case x = <-a.in:
					a.send(a.collect(x))
				default:
					return
				}
			}
		}
		a.send(a.collect(x))
	}
}

// collect takes x and whatever else is queued, up to a batch.
func (a *acker) collect(x ack) []ack {
	batch := []ack{x}
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

func (a *acker) send(batch []ack) {
	ops := make([]core.LeaseOp, len(batch))
	for i, x := range batch {
		ops[i] = x.op
	}
	var reply core.BatchReply
	var err error
	for attempt := 1; attempt <= ackAttempts; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = a.w.client.Call(ctx, bus.MethodBatch, core.BatchRequest{Ops: ops}, &reply)
		cancel()
		if err == nil || !errors.Is(err, bus.ErrUnavailable) {
			break
		}
		time.Sleep(backoff(attempt)) // core is down: a short wait, bounded by ackAttempts
	}
	if err != nil {
		a.w.log.Error("acknowledgements lost; their jobs run again when their lease runs out",
			"jobs", len(ops), "err", err)
		return
	}
	for i, r := range reply.Results {
		x := batch[i]
		switch {
		case r.Error != nil:
			a.w.log.Warn("acknowledgement refused", "job_id", x.op.ID, "op", x.op.Op,
				"code", r.Error.Code, "err", r.Error.Message)
		case x.op.Op == core.OpFail && r.State == core.StateFailed && a.w.cfg.OnFailed != nil:
			job := *x.job
			job.State, job.Attempts, job.Error, job.Lease = r.State, job.Attempts+1, x.op.Error, ""
			a.w.cfg.OnFailed(&job, x.err)
		}
	}
}
