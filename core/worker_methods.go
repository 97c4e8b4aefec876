package core

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"time"

	"github.com/kuebus/kuebus/bus"
)

// The RPC methods of workers and of the promoter's rescue: lease, the
// operations of a lease holder (complete, fail, touch, release, rejoin,
// progress, and batch for many at once), and rescue.

func (s *Service) registerWorker() error {
	return errors.Join(
		bus.HandleWaiting(s.server, bus.MethodLease, s.subj.Core(bus.MethodLease), s.lease),
		handle(s, bus.MethodComplete, s.single(OpComplete, func(*Applied) any { return &Empty{} })),
		handle(s, bus.MethodFail, s.single(OpFail, func(a *Applied) any { return a.Job })),
		handle(s, bus.MethodTouch, s.single(OpTouch, func(a *Applied) any { return &TouchReply{LeaseUntil: a.Job.LeaseUntil} })),
		handle(s, bus.MethodRelease, s.single(OpRelease, func(*Applied) any { return &Empty{} })),
		handle(s, bus.MethodRejoin, s.single(OpRejoin, func(*Applied) any { return &Empty{} })),
		handle(s, bus.MethodProgress, s.single(OpProgress, func(*Applied) any { return &Empty{} })),
		handle(s, bus.MethodBatch, s.batch),
		handle(s, bus.MethodRescue, s.rescue),
	)
}

// wakeEvents are the events after which a job may be ready: a waiting lease
// of that type tries again.
var wakeEvents = []string{bus.EventEnqueue, bus.EventPromotion, bus.EventFailedAttempt, bus.EventStalled}

func (s *Service) checkLease(req *LeaseRequest) error {
	switch {
	case len(req.Types) == 0:
		return invalid("types", "no job types given")
	case len(req.Types) > MaxLeaseTypes:
		return invalid("types", "%d types is over the limit of %d", len(req.Types), MaxLeaseTypes)
	case req.Max < 0 || req.Max > MaxLeaseBatch:
		return invalid("max", "%d is outside 0..%d (0 means 1)", req.Max, MaxLeaseBatch)
	case req.Wait < 0 || req.Wait > MaxLeaseWait:
		return invalid("wait", "%d ms is outside 0..%d", req.Wait, MaxLeaseWait)
	case req.TTL < 0 || req.TTL > MaxDelay:
		return invalid("ttl", "%d ms is outside 0..%d (0: each job's own ttl)", req.TTL, int64(MaxDelay))
	case len(req.Worker) > MaxWorkerLen:
		return invalid("worker", "%d bytes is longer than %d", len(req.Worker), MaxWorkerLen)
	}
	for i, t := range req.Types {
		if err := bus.ValidToken(t); err != nil {
			return invalid("types", "[%d] %q is not a job type: %v", i, t, err)
		}
	}
	return nil
}

func (s *Service) lease(ctx context.Context, req *LeaseRequest) (*JobsReply, error) {
	if err := s.checkLease(req); err != nil {
		return nil, err
	}
	replyBy := s.replyBy(req.Wait)
	max := max(req.Max, 1)
	var w *waiter
	full := false
	if req.Wait > 0 {
		// Enter before the first try, so a job that becomes ready between
		// the try and the wait still wakes us.
		if w = s.waits.enter(req.Types, s.cfg.MaxWaitingLeases); w != nil {
			defer s.waits.leave(w, req.Types)
		} else {
			full = true // still try once: a ready job needs no waiting
		}
	}
	var timeout <-chan time.Time
	for {
		jobs, err := s.leaseNow(ctx, req.Types, max, req.Worker, req.TTL, replyBy)
		if err == nil && len(jobs) == 0 && full {
			return nil, bus.Errorf(bus.CodeUnavailable, "wait: %d leases already wait on this core, its limit; "+
				"try again later, or ask with no wait", s.cfg.MaxWaitingLeases)
		}
		if err != nil || len(jobs) > 0 || w == nil {
			return &JobsReply{Jobs: jobs}, err
		}
		if s.cfg.OnLeaseWait != nil {
			s.cfg.OnLeaseWait(req.Types)
		}
		if timeout == nil {
			t := time.NewTimer(time.Duration(req.Wait) * time.Millisecond)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-w.ch:
		case <-timeout:
			return &JobsReply{Jobs: []Job{}}, nil
		case <-s.closing:
			return &JobsReply{Jobs: []Job{}}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// leaseNow leases what is ready. One lease at a time per core: two at once
// would read the same head of the queue and one would come back short.
func (s *Service) leaseNow(ctx context.Context, types []string, max int, worker string, ttl int64, replyBy time.Time) ([]Job, error) {
	if s.past(replyBy) {
		return []Job{}, nil // the asker has given up: lease nothing for it
	}
	token := newToken()
	s.leaseMu.Lock()
	jobs, err := s.store.Lease(ctx, s.now(), types, max, worker, token, ttl)
	s.leaseMu.Unlock()
	if len(jobs) > 0 && s.past(replyBy) {
		// Leased too late for the asker to read the reply: back they go at
		// once, rather than sit leased to no one until their ttl.
		s.giveBack(ctx, jobs)
		return []Job{}, err
	}
	if err != nil && len(jobs) > 0 {
		// Redis failed after some jobs were leased: hand those out rather
		// than strand them leased to no one until their ttl.
		s.log.Warn("lease cut short", "leased", len(jobs), "err", err)
		err = nil
	}
	jobs = s.fitReply(ctx, jobs)
	for i := range jobs {
		s.publish(bus.EventStart, &jobs[i], nil)
	}
	if jobs == nil {
		jobs = []Job{}
	}
	return jobs, err
}

// jobOverhead is a generous bound on a job's fields other than data in a
// lease reply.
const jobOverhead = 1 << 10

// fitReply keeps the jobs whose reply fits in one NATS message and releases
// the rest at once (no attempt used), so a reply is never built that cannot
// be sent, leaving its jobs leased to no one. The first job always fits: its
// data is within MaxDataBytes, well below the message limit.
func (s *Service) fitReply(ctx context.Context, jobs []Job) []Job {
	limit := int(s.nc.MaxPayload()) - 8<<10
	size := 0
	for i := range jobs {
		size += len(jobs[i].Data) + jobOverhead
		if size > limit && i > 0 {
			s.giveBack(ctx, jobs[i:])
			return jobs[:i]
		}
	}
	return jobs
}

// giveBack releases jobs leased for a reply that will not carry them (no
// attempt used, no stall counted). If Redis fails, they return when their
// lease runs out.
func (s *Service) giveBack(ctx context.Context, jobs []Job) {
	ops := make([]LeaseOp, len(jobs))
	for n, j := range jobs {
		ops[n] = LeaseOp{ID: j.ID, Lease: j.Lease, Type: j.Type}
	}
	res, err := s.store.Apply(ctx, s.now(), OpRelease, ops)
	if err != nil {
		s.log.Warn("leased jobs no reply carries not released; they return when their lease runs out", "jobs", len(ops), "err", err)
	}
	for n := range res {
		if res[n].Err == nil {
			s.announceApplied(OpRelease, &ops[n], &res[n])
		}
	}
}

// replyBy is until when a waiting lease's asker reads the reply: the wait
// plus half of LeaseReplyMargin, measured from now, when the request
// arrived (the other half is for the way there and back). Zero for a lease
// that does not wait: its asker's own timeout is far off.
func (s *Service) replyBy(wait int64) time.Time {
	if wait <= 0 {
		return time.Time{}
	}
	return s.cfg.Now().Add(time.Duration(wait)*time.Millisecond + LeaseReplyMargin/2)
}

// past reports whether replyBy (from replyBy) has passed: the lease's asker
// has most likely given up.
func (s *Service) past(replyBy time.Time) bool {
	return !replyBy.IsZero() && s.cfg.Now().After(replyBy)
}

// newToken makes a lease token: 96 random bits, so a stale worker can never
// guess the current one.
func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// checkOp validates one lease holder's operation.
func (s *Service) checkOp(op Op, o *LeaseOp) error {
	if err := checkID(o.ID); err != nil {
		return err
	}
	if o.Lease == "" {
		return invalid("lease", "missing: the token the job was leased with")
	}
	if err := checkType(o.Type); err != nil {
		return err
	}
	if o.Result != nil && op != OpComplete {
		return invalid("result", "only complete takes a result")
	}
	if (o.Error != "" || o.Final) && op != OpFail {
		return invalid("error", "only fail takes an error and final")
	}
	if o.Delay != 0 && op != OpRejoin {
		return invalid("delay", "only rejoin takes a delay")
	}
	if (o.Complete != nil || o.Total != nil) && op != OpProgress {
		return invalid("complete", "only progress takes complete and total")
	}
	switch op {
	case OpComplete:
		if len(o.Result) > s.cfg.MaxDataBytes {
			return invalid("result", "%d bytes is over the limit of %d", len(o.Result), s.cfg.MaxDataBytes)
		}
		if err := checkJSON("result", o.Result); err != nil {
			return err
		}
	case OpFail:
		if len(o.Error) > s.cfg.MaxLogLineBytes {
			return invalid("error", "%d bytes is over the limit of %d", len(o.Error), s.cfg.MaxLogLineBytes)
		}
	case OpRejoin:
		if o.Delay < 0 || o.Delay > MaxDelay {
			return invalid("delay", "%d ms is outside 0..%d", o.Delay, int64(MaxDelay))
		}
	case OpProgress:
		switch {
		case o.Complete == nil || o.Total == nil:
			return invalid("total", "progress needs complete and total")
		case *o.Complete < 0:
			return invalid("complete", "%d is negative", *o.Complete)
		case *o.Total <= 0:
			return invalid("total", "%d is not positive", *o.Total)
		}
	case OpTouch, OpRelease:
	default:
		return invalid("op", "%q is not complete, fail, touch, release, rejoin or progress", op)
	}
	return nil
}

// single serves one of complete, fail, touch, release, rejoin, progress.
func (s *Service) single(op Op, reply func(*Applied) any) func(context.Context, *LeaseOp) (*any, error) {
	return func(ctx context.Context, o *LeaseOp) (*any, error) {
		if o.Op != "" && o.Op != op {
			return nil, invalid("op", "%q does not belong in core.%s", o.Op, op)
		}
		if err := s.checkOp(op, o); err != nil {
			return nil, err
		}
		res, err := s.store.Apply(ctx, s.now(), op, []LeaseOp{*o})
		if err != nil {
			return nil, err
		}
		if res[0].Err != nil {
			return nil, res[0].Err
		}
		s.announceApplied(op, o, &res[0])
		r := reply(&res[0])
		return &r, nil
	}
}

// checkBatch checks a batch as a whole; each operation is checked on its
// own (checkOp) and fails on its own.
func checkBatch(req *BatchRequest) error {
	if len(req.Ops) == 0 {
		return invalid("ops", "no operations given")
	}
	if len(req.Ops) > MaxBatch {
		return invalid("ops", "%d operations is over the limit of %d per call", len(req.Ops), MaxBatch)
	}
	return nil
}

// batch applies many operations: one store call per kind of operation.
func (s *Service) batch(ctx context.Context, req *BatchRequest) (*BatchReply, error) {
	if err := checkBatch(req); err != nil {
		return nil, err
	}
	results := make([]OpResult, len(req.Ops))
	byOp := map[Op][]int{}
	var kinds []Op
	for i := range req.Ops {
		o := &req.Ops[i]
		results[i].ID = o.ID
		if err := s.checkOp(o.Op, o); err != nil {
			results[i].Error = opError(err)
			continue
		}
		if _, seen := byOp[o.Op]; !seen {
			kinds = append(kinds, o.Op)
		}
		byOp[o.Op] = append(byOp[o.Op], i)
	}
	for _, op := range kinds {
		idx := byOp[op]
		ops := make([]LeaseOp, len(idx))
		for n, i := range idx {
			ops[n] = req.Ops[i]
		}
		res, err := s.store.Apply(ctx, s.now(), op, ops)
		if err != nil {
			return nil, err
		}
		for n, i := range idx {
			if res[n].Err != nil {
				results[i].Error = opError(res[n].Err)
				continue
			}
			s.announceApplied(op, &ops[n], &res[n])
			results[i].State, results[i].LeaseUntil = res[n].Job.State, res[n].Job.LeaseUntil
		}
	}
	return &BatchReply{Results: results}, nil
}

func opError(err error) *OpError {
	return &OpError{Code: string(bus.CodeOf(err)), Message: bus.MessageOf(err)}
}

// announceApplied publishes what a lease holder's operation changed. A
// repeated operation publishes its event again, marked repeated (see
// Applied.Repeated), with the job as it is now.
func (s *Service) announceApplied(op Op, o *LeaseOp, a *Applied) {
	job := a.Job
	mark := func(ev *Event) { ev.Repeated = a.Repeated }
	switch op {
	case OpComplete:
		s.publish(bus.EventComplete, job, func(ev *Event) { mark(ev); ev.Result = o.Result })
	case OpFail:
		event := bus.EventFailedAttempt
		if job.State == StateFailed {
			event = bus.EventFailed
		}
		s.publish(event, job, func(ev *Event) { mark(ev); ev.Error, ev.Attempts = o.Error, job.Attempts })
		if job.State == StateDelayed {
			s.announceDue(job.PromoteAt)
		}
	case OpRelease:
		// Back in the queue: to a listener that is an enqueue, and it wakes
		// waiting leases like one.
		s.publish(bus.EventEnqueue, job, mark)
	case OpRejoin:
		s.publish(bus.EventRejoin, job, mark)
		s.announceDue(job.PromoteAt)
	case OpProgress:
		p := job.Progress
		s.publish(bus.EventProgress, job, func(ev *Event) { ev.Progress = &p })
	}
}

func checkRescue(req *RescueRequest) (limit int, err error) {
	if req.StallLimit < 0 {
		return 0, invalid("stall_limit", "%d is negative", req.StallLimit)
	}
	return checkLimit(req.Limit)
}

func (s *Service) rescue(ctx context.Context, req *RescueRequest) (*MoveReply, error) {
	limit, err := checkRescue(req)
	if err != nil {
		return nil, err
	}
	stallLimit := req.StallLimit
	if stallLimit == 0 {
		stallLimit = s.cfg.StallLimit
	}
	moved, next, err := s.store.Rescue(ctx, s.dueNow(), limit, stallLimit)
	for i := range moved {
		s.announceRescued(&moved[i])
	}
	if err != nil {
		return nil, err
	}
	return &MoveReply{Moved: len(moved), NextDue: next}, nil
}

// announceRescued publishes what rescue did to a job: stalled (back to
// inactive, no attempt used), or, past its stall limit, a failed attempt
// (failed_attempt, or failed when no attempt remains).
func (s *Service) announceRescued(job *Job) {
	switch {
	case job.State == StateFailed:
		s.publish(bus.EventFailed, job, func(ev *Event) { ev.Error, ev.Attempts = job.Error, job.Attempts })
	case job.Stalls > job.StallLimit:
		s.publish(bus.EventFailedAttempt, job, func(ev *Event) { ev.Error, ev.Attempts = job.Error, job.Attempts })
		if job.State == StateDelayed {
			s.announceDue(job.PromoteAt)
		}
	default:
		s.publish(bus.EventStalled, job, nil)
	}
}
