package worker

import (
	"context"
	"crypto/rand"
	"os"
	"sync"
	"time"

	"github.com/kuebus/kuebus/core"
)

// heartbeats tell core, every core.HeartbeatEvery while the worker runs,
// that it is alive and what it does, so that core's workers method (the
// dashboard's Workers page, `kuebus workers`) lists it, and so that core
// does not take its jobs back as a silent worker's (docs/protocol.md §3.37); the
// last one says it is gone. A heartbeat core does not answer is only
// logged. When core last heard the worker longer ago than
// core.WorkerSilentAfter (the process was stopped, or cut off), core may
// have ended its leases: the next heartbeat that gets through makes every
// running job's lease be touched at once, and a touch answered conflict
// cancels that handler (registry.touchAllNow, Worker.touch).
type heartbeats struct {
	w     *Worker
	base  core.Heartbeat
	stop  context.CancelFunc
	ended sync.WaitGroup
	now   func() time.Time
	heard time.Time // when core last answered a heartbeat (or the start)
}

func (w *Worker) startHeartbeats(pools []*pool) *heartbeats {
	host, _ := os.Hostname()
	hb := &heartbeats{w: w, base: core.Heartbeat{Worker: w.cfg.ID, Types: handledTypes(pools), Host: host, PID: os.Getpid(),
		StartedAt: time.Now().UnixMilli(), Instance: rand.Text()}, now: time.Now}
	hb.heard = hb.now()
	for _, p := range pools {
		hb.base.Concurrency += p.concurrency
	}
	ctx, stop := context.WithCancel(context.Background())
	hb.stop = stop
	hb.ended.Go(func() {
		t := time.NewTicker(core.HeartbeatEvery * time.Millisecond)
		defer t.Stop()
		for {
			hb.send(ctx, false)
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
		}
	})
	return hb
}

// end stops the beats and says the worker is gone.
func (hb *heartbeats) end() {
	hb.stop()
	hb.ended.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	hb.send(ctx, true)
}

func (hb *heartbeats) send(ctx context.Context, gone bool) {
	beat := hb.base
	beat.Running, beat.Gone = hb.w.jobs.count(), gone
	callCtx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := hb.w.client.Heartbeat(callCtx, beat); err != nil {
		if ctx.Err() == nil {
			hb.w.log.Debug("heartbeat not delivered", "err", err)
		}
		return
	}
	hb.delivered()
}

// delivered notes that core heard a heartbeat, and touches every running
// job's lease at once when core may have found the worker silent since the
// one before.
func (hb *heartbeats) delivered() {
	now := hb.now()
	if now.Sub(hb.heard) >= core.WorkerSilentAfter*time.Millisecond-core.HeartbeatEvery*time.Millisecond {
		hb.w.log.Warn("core did not hear this worker for a while; checking its leases",
			"silent", now.Sub(hb.heard).Round(time.Millisecond))
		hb.w.jobs.touchAllNow()
	}
	hb.heard = now
}
