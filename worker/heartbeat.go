package worker

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/kuebus/kuebus/core"
)

// heartbeats tell core, every core.HeartbeatEvery while the worker runs,
// that it is alive and what it does, so that core's workers method (the
// dashboard's Workers page, `kuebus workers`) lists it; the last one says
// it is gone. A heartbeat core does not answer is only logged: it changes
// nothing about the jobs.
type heartbeats struct {
	w     *Worker
	base  core.Heartbeat
	stop  context.CancelFunc
	ended sync.WaitGroup
}

func (w *Worker) startHeartbeats(pools []*pool) *heartbeats {
	host, _ := os.Hostname()
	hb := &heartbeats{w: w, base: core.Heartbeat{Worker: w.cfg.ID, Types: handledTypes(pools), Host: host, PID: os.Getpid(),
		StartedAt: time.Now().UnixMilli()}}
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
	if err := hb.w.client.Heartbeat(callCtx, beat); err != nil && ctx.Err() == nil {
		hb.w.log.Debug("heartbeat not delivered", "err", err)
	}
}
