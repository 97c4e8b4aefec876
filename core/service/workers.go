package service

import (
	"context"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// heartbeat and workers: the list of live workers. A worker beats every
// core.HeartbeatEvery; workers lists those heard from within
// core.WorkerSeenWithin, as core's clock says.

func checkHeartbeat(hb *core.Heartbeat, now int64) error {
	switch {
	case hb.Worker == "":
		return core.Invalidf("worker", "missing")
	case len(hb.Worker) > core.MaxWorkerLen:
		return core.Invalidf("worker", "%d bytes is longer than %d", len(hb.Worker), core.MaxWorkerLen)
	case hb.Concurrency < 0 || hb.Concurrency > core.MaxWorkerConcurrency:
		return core.Invalidf("concurrency", "%d is outside 0..%d", hb.Concurrency, core.MaxWorkerConcurrency)
	case hb.PID < 0 || hb.PID > core.MaxWorkerPID:
		return core.Invalidf("pid", "%d is outside 0..%d", hb.PID, core.MaxWorkerPID)
	case hb.StartedAt < 0 || hb.StartedAt > now+24*3600_000:
		return core.Invalidf("started_at", "%d is not a time (unix ms) between 1970 and a day from now", hb.StartedAt)
	case len(hb.Instance) > core.MaxInstanceLen:
		return core.Invalidf("instance", "%d bytes is longer than %d", len(hb.Instance), core.MaxInstanceLen)
	case hb.Running < 0 || hb.Concurrency > 0 && hb.Running > hb.Concurrency:
		return core.Invalidf("running", "%d running of a concurrency of %d", hb.Running, hb.Concurrency)
	case len(hb.Types) > core.MaxLeaseTypes:
		return core.Invalidf("types", "%d types is over the limit of %d", len(hb.Types), core.MaxLeaseTypes)
	case len(hb.Host) > core.MaxWorkerLen:
		return core.Invalidf("host", "%d bytes is longer than %d", len(hb.Host), core.MaxWorkerLen)
	}
	for _, t := range hb.Types {
		if err := bus.ValidToken(t); err != nil {
			return core.Invalidf("types", "%q is not a job type: %v", t, err)
		}
	}
	return nil
}

func (s *Service) heartbeat(ctx context.Context, hb *core.Heartbeat) (*core.Empty, error) {
	if err := checkHeartbeat(hb, s.now()); err != nil {
		return nil, err
	}
	if err := s.store.Heartbeat(ctx, s.now(), hb); err != nil {
		return nil, err
	}
	return &core.Empty{}, nil
}

func (s *Service) workers(ctx context.Context, _ *core.Empty) (*core.WorkersReply, error) {
	list, err := s.store.Workers(ctx, s.now()-core.WorkerSeenWithin)
	if err != nil {
		return nil, err
	}
	if list == nil {
		list = []core.WorkerInfo{}
	}
	return &core.WorkersReply{Workers: list}, nil
}
