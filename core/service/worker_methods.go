package service

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"math/bits"
	"slices"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// The RPC methods of workers and of the promoter's rescue: lease, the
// operations of a lease holder (complete, fail, touch, release, rejoin,
// progress, and batch for many at once), and rescue.

func (s *Service) registerWorker() error {
	return errors.Join(
		bus.HandleWaiting(s.server, bus.MethodLease, s.subj.Core(bus.MethodLease), func(ctx context.Context, req *core.LeaseRequest) (*core.JobsReply, error) {
			reply, err := s.lease(ctx, req)
			if err != nil {
				s.errs.report(bus.MethodLease, err)
			}
			return reply, err
		}),
		handle(s, bus.MethodComplete, s.single(core.OpComplete, func(*Applied) any { return &core.Empty{} })),
		handle(s, bus.MethodFail, s.single(core.OpFail, func(a *Applied) any { return a.Job })),
		handle(s, bus.MethodTouch, s.single(core.OpTouch, func(a *Applied) any { return &core.TouchReply{LeaseUntil: a.Job.LeaseUntil} })),
		handle(s, bus.MethodRelease, s.single(core.OpRelease, func(*Applied) any { return &core.Empty{} })),
		handle(s, bus.MethodRejoin, s.single(core.OpRejoin, func(*Applied) any { return &core.Empty{} })),
		handle(s, bus.MethodProgress, s.single(core.OpProgress, func(*Applied) any { return &core.Empty{} })),
		handle(s, bus.MethodBatch, s.batch),
		handle(s, bus.MethodRescue, s.rescue),
	)
}

// wakeEvents are the events after which a job may be ready: a waiting lease
// of that type tries again.
var wakeEvents = []string{bus.EventEnqueue, bus.EventPromotion, bus.EventFailedAttempt, bus.EventStalled}

func (s *Service) checkLease(req *core.LeaseRequest) error {
	switch {
	case len(req.Types) == 0:
		return core.Invalidf("types", "no job types given")
	case len(req.Types) > core.MaxLeaseTypes:
		return core.Invalidf("types", "%d types is over the limit of %d", len(req.Types), core.MaxLeaseTypes)
	case req.Max < 0 || req.Max > core.MaxLeaseBatch:
		return core.Invalidf("max", "%d is outside 0..%d (0 means 1)", req.Max, core.MaxLeaseBatch)
	case req.Wait < 0 || req.Wait > core.MaxLeaseWait:
		return core.Invalidf("wait", "%d ms is outside 0..%d", req.Wait, core.MaxLeaseWait)
	case req.TTL < 0 || req.TTL > core.MaxDelay:
		return core.Invalidf("ttl", "%d ms is outside 0..%d (0: each job's own ttl)", req.TTL, int64(core.MaxDelay))
	case len(req.Worker) > core.MaxWorkerLen:
		return core.Invalidf("worker", "%d bytes is longer than %d", len(req.Worker), core.MaxWorkerLen)
	}
	for i, t := range req.Types {
		if err := bus.ValidToken(t); err != nil {
			return core.Invalidf("types", "[%d] %q is not a job type: %v", i, t, err)
		}
	}
	return nil
}

func (s *Service) lease(ctx context.Context, req *core.LeaseRequest) (*core.JobsReply, error) {
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
			// Other cores' events of these types reach us from now on.
			s.wakes.watch(req.Types)
			defer s.wakes.unwatch(req.Types)
		} else {
			full = true // still try once: a ready job needs no waiting
		}
	}
	var timeout <-chan time.Time
	// slotAt is when a rate that held this lease back allows the next
	// start (unix ms; 0: none did): the wait wakes then, by a timer.
	var slotAt int64
	var slotTimer *time.Timer
	var limited []string // the types their policy held back, new to this lease
	held := func(jobType string, until int64) {
		s.waits.noteLimited(jobType)
		if w != nil && !slices.Contains(limited, jobType) {
			limited = append(limited, jobType)
		}
		if until > 0 && (slotAt == 0 || until < slotAt) {
			slotAt = until
		}
	}
	watchedLeaves := 0
	for {
		slotAt = 0
		jobs, err := s.leaseNow(ctx, req.Types, max, req.Worker, req.TTL, replyBy, held)
		if err == nil && len(jobs) == 0 && len(limited) > watchedLeaves {
			// Held back by a limit: from now on a job of the type leaving
			// active on another core wakes this lease too; lease once more
			// first, for one that left before the subscription.
			s.wakes.watchLeaves(limited[watchedLeaves:])
			watchedLeaves = len(limited)
			continue
		}
		if err == nil && len(jobs) == 0 && full {
			return nil, bus.Errorf(bus.CodeUnavailable, "wait: %d leases already wait on this core, its limit; "+
				"try again later, or ask with no wait", s.cfg.MaxWaitingLeases)
		}
		if err != nil || len(jobs) > 0 || w == nil {
			reply := &core.JobsReply{Jobs: jobs}
			if len(jobs) == 0 {
				reply.Until = slotAt // a rate held it back: when to ask again
			}
			return reply, err
		}
		if s.cfg.OnLeaseWait != nil {
			s.cfg.OnLeaseWait(req.Types)
		}
		if timeout == nil {
			t := time.NewTimer(time.Duration(req.Wait) * time.Millisecond)
			defer t.Stop()
			timeout = t.C
		}
		var slot <-chan time.Time
		if slotAt > 0 {
			d := time.Duration(slotAt-s.dueNow()) * time.Millisecond
			if slotTimer == nil {
				slotTimer = time.NewTimer(d)
				defer slotTimer.Stop()
			} else {
				slotTimer.Reset(d) // Go ≥ 1.23: no stale tick survives a Reset
			}
			slot = slotTimer.C
		}
		select {
		case <-w.ch:
		case <-slot:
		case <-timeout:
			return &core.JobsReply{Jobs: []core.Job{}, Until: slotAt}, nil
		case <-s.closing:
			return &core.JobsReply{Jobs: []core.Job{}}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// leaseNow leases what is ready. Leases run at once: the store leases one
// type in one script, and orders its own reads of several types
// (LeaseStore.Lease).
//
// held, when not nil, hears of each type whose policy held the lease back
// (LeaseParams.OnLimited).
func (s *Service) leaseNow(ctx context.Context, types []string, max int, worker string, ttl int64, replyBy time.Time, held func(string, int64)) ([]core.Job, error) {
	if s.past(replyBy) {
		return []core.Job{}, nil // the asker has given up: lease nothing for it
	}
	token := newToken()
	since := s.waits.resumes()
	jobs, paused, err := s.store.Lease(ctx, &LeaseParams{Now: s.now(), Types: types, Max: max, Worker: worker, Token: token, TTL: ttl, OnLimited: held})
	var te *TypesError
	if errors.As(err, &te) {
		// Some types' Redis failed (a Cluster master down), the others
		// were served: report the failed ones, and go on with the others
		// as if all were well, waiting for them too. The asker gets an
		// error only when none of its types could be served.
		s.errs.report(bus.MethodLease, err)
		s.log.Warn("lease skipped job types whose Redis failed", "types", te.Types(), "err", err)
		err = nil
	}
	if err == nil {
		s.waits.notePaused(types, paused, since)
	}
	if len(jobs) > 0 && s.past(replyBy) {
		// Leased too late for the asker to read the reply: back they go at
		// once, rather than sit leased to no one until their ttl.
		s.giveBack(ctx, jobs)
		return []core.Job{}, err
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
		jobs = []core.Job{}
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
func (s *Service) fitReply(ctx context.Context, jobs []core.Job) []core.Job {
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
func (s *Service) giveBack(ctx context.Context, jobs []core.Job) {
	ops := make([]StoreOp, len(jobs))
	for n, j := range jobs {
		ops[n] = StoreOp{ID: j.ID, Lease: j.Lease, Type: j.Type}
	}
	res, err := s.store.Apply(ctx, s.now(), core.OpRelease, ops)
	if err != nil {
		s.log.Warn("leased jobs no reply carries not released; they return when their lease runs out", "jobs", len(ops), "err", err)
	}
	for n := range res {
		if res[n].Err == nil {
			s.announceApplied(ctx, core.OpRelease, &ops[n], &res[n])
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
	return s.cfg.Now().Add(time.Duration(wait)*time.Millisecond + core.LeaseReplyMargin/2)
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
func (s *Service) checkOp(op core.Op, o *core.LeaseOp) error {
	if err := checkID(o.ID); err != nil {
		return err
	}
	if o.Lease == "" {
		return core.Invalidf("lease", "missing: the token the job was leased with")
	}
	if err := checkType(o.Type); err != nil {
		return err
	}
	if o.Result != nil && op != core.OpComplete {
		return core.Invalidf("result", "only complete takes a result")
	}
	if (o.Error != "" || o.Final || o.Stack != "") && op != core.OpFail {
		return core.Invalidf("error", "only fail takes an error, final and a stack")
	}
	if o.Delay != nil && op != core.OpRejoin && op != core.OpFail {
		return core.Invalidf("delay", "only rejoin and fail take a delay")
	}
	if o.Delay != nil && (*o.Delay < 0 || *o.Delay > core.MaxDelay) {
		return core.Invalidf("delay", "%d ms is outside 0..%d", *o.Delay, int64(core.MaxDelay))
	}
	if (o.Complete != nil || o.Total != nil) && op != core.OpProgress {
		return core.Invalidf("complete", "only progress takes complete and total")
	}
	switch op {
	case core.OpComplete:
		if len(o.Result) > s.cfg.MaxDataBytes {
			return core.Invalidf("result", "%d bytes is over the limit of %d", len(o.Result), s.cfg.MaxDataBytes)
		}
		if err := core.CheckJSON("result", o.Result); err != nil {
			return err
		}
	case core.OpFail:
		if len(o.Error) > s.cfg.MaxLogLineBytes {
			return core.Invalidf("error", "%d bytes is over the limit of %d", len(o.Error), s.cfg.MaxLogLineBytes)
		}
		if len(o.Stack) > core.MaxStackBytes {
			return core.Invalidf("stack", "%d bytes is over the limit of %d", len(o.Stack), core.MaxStackBytes)
		}
	case core.OpProgress:
		switch {
		case o.Complete == nil || o.Total == nil:
			return core.Invalidf("total", "progress needs complete and total")
		case *o.Complete < 0:
			return core.Invalidf("complete", "%d is negative", *o.Complete)
		case *o.Total <= 0:
			return core.Invalidf("total", "%d is not positive", *o.Total)
		}
	case core.OpTouch, core.OpRelease, core.OpRejoin:
	default:
		return core.Invalidf("op", "%q is not complete, fail, touch, release, rejoin or progress", op)
	}
	return nil
}

// storeOp is a checked operation as the Store runs it: the arguments of its
// kind by name, a progress as its percent.
func storeOp(op core.Op, o *core.LeaseOp) StoreOp {
	so := StoreOp{ID: o.ID, Lease: o.Lease, Type: o.Type}
	switch op {
	case core.OpComplete:
		so.Result = o.Result
	case core.OpFail:
		so.Error, so.Final, so.Stack, so.Delay = o.Error, o.Final, o.Stack, o.Delay
	case core.OpRejoin:
		so.Delay = o.Delay
	case core.OpProgress:
		so.Percent = percent(*o.Complete, *o.Total)
	}
	return so
}

// percent turns progress "complete of total" into 0..100, rounded down and
// clamped: more done than the total counts as 100. complete × 100 is
// computed in 128 bits, so that no int64 complete can overflow it (in 64
// bits, 93e15 of 1e17 came out as -91).
func percent(complete, total int64) int64 {
	if total <= 0 || complete <= 0 {
		return 0
	}
	if complete >= total {
		return 100
	}
	hi, lo := bits.Mul64(uint64(complete), 100)
	// hi < total, since complete < total: the quotient fits, Div64 cannot panic.
	q, _ := bits.Div64(hi, lo, uint64(total))
	return int64(q)
}

// single serves one of complete, fail, touch, release, rejoin, progress.
func (s *Service) single(op core.Op, reply func(*Applied) any) func(context.Context, *core.LeaseOp) (*any, error) {
	return func(ctx context.Context, o *core.LeaseOp) (*any, error) {
		if o.Op != "" && o.Op != op {
			return nil, core.Invalidf("op", "%q does not belong in core.%s", o.Op, op)
		}
		if err := s.checkOp(op, o); err != nil {
			return nil, err
		}
		ops := []StoreOp{storeOp(op, o)}
		res, err := s.store.Apply(ctx, s.now(), op, ops)
		if err != nil {
			return nil, err
		}
		if res[0].Err != nil {
			return nil, res[0].Err
		}
		s.announceApplied(ctx, op, &ops[0], &res[0])
		r := reply(&res[0])
		return &r, nil
	}
}

// checkBatch checks a batch as a whole, its lease part included; each
// operation is checked on its own (checkOp) and fails on its own.
func (s *Service) checkBatch(req *core.BatchRequest) error {
	if len(req.Ops) == 0 {
		return core.Invalidf("ops", "no operations given")
	}
	if len(req.Ops) > core.MaxBatch {
		return core.Invalidf("ops", "%d operations is over the limit of %d per call", len(req.Ops), core.MaxBatch)
	}
	if l := req.Lease; l != nil {
		if err := s.checkLease(&core.LeaseRequest{Types: l.Types, Max: l.Max, Worker: l.Worker}); err != nil {
			return core.Invalidf("lease", "%s", bus.MessageOf(err))
		}
	}
	return nil
}

// batch applies many operations: one store call per kind of operation;
// then its lease part, if any, leases as a lease that does not wait.
func (s *Service) batch(ctx context.Context, req *core.BatchRequest) (*core.BatchReply, error) {
	if err := s.checkBatch(req); err != nil {
		return nil, err
	}
	results := make([]core.OpResult, len(req.Ops))
	byOp := map[core.Op][]int{}
	var kinds []core.Op
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
		ops := make([]StoreOp, len(idx))
		for n, i := range idx {
			ops[n] = storeOp(op, &req.Ops[i])
			if op == core.OpComplete {
				ops[n].Bare = s.bareComplete(&ops[n])
			}
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
			s.announceApplied(ctx, op, &ops[n], &res[n])
			results[i].State, results[i].LeaseUntil = res[n].Job.State, res[n].Job.LeaseUntil
		}
	}
	reply := &core.BatchReply{Results: results}
	if l := req.Lease; l != nil {
		jobs, err := s.leaseNow(ctx, l.Types, max(l.Max, 1), l.Worker, 0, time.Time{}, nil)
		if err != nil {
			s.errs.report(bus.MethodLease, err)
			return nil, err
		}
		reply.Jobs = jobs
	}
	return reply, nil
}

func opError(err error) *core.OpError {
	return &core.OpError{Code: string(bus.CodeOf(err)), Message: bus.MessageOf(err)}
}

// announceApplied publishes what a lease holder's operation changed. A
// repeated operation publishes its event again, marked repeated (see
// Applied.Repeated), with the job as it is now.
func (s *Service) announceApplied(ctx context.Context, op core.Op, o *StoreOp, a *Applied) {
	job := a.Job
	mark := func(ev *core.Event) { ev.Repeated = a.Repeated }
	switch op {
	case core.OpComplete:
		s.announceComplete(ctx, o, a)
	case core.OpFail:
		event := bus.EventFailedAttempt
		if job.State == core.StateFailed {
			event = bus.EventFailed
		}
		s.publish(event, job, func(ev *core.Event) { mark(ev); ev.Error, ev.Attempts = o.Error, job.Attempts })
		if job.State == core.StateDelayed {
			s.announceDue(job.PromoteAt)
		}
	case core.OpRelease:
		// Back in the queue: to a listener that is an enqueue, and it wakes
		// waiting leases like one.
		s.publish(bus.EventEnqueue, job, mark)
	case core.OpRejoin:
		s.publish(bus.EventRejoin, job, mark)
		s.announceDue(job.PromoteAt)
	case core.OpProgress:
		p := job.Progress
		s.publish(bus.EventProgress, job, func(ev *core.Event) { ev.Progress = &p })
	}
	s.announceSettled(a.Settled) // after the event of what caused it
}

// A bare complete (StoreOp.Bare) is decided and published here, and only
// here: bareComplete decides it before the store runs it, announceComplete
// publishes what it made.

// bareComplete says whether a complete may go bare: its type is known and
// nobody would receive its event now.
func (s *Service) bareComplete(o *StoreOp) bool {
	return o.Type != "" && !s.listening(s.subj.Job(bus.EventComplete, o.ID, o.Type))
}

// announceComplete publishes a complete's event. A bare one's job is only
// what the complete made of it; when someone subscribed while it ran (a
// client's Await subscribes, then reads the job), the event goes with the
// job read back, or, removed as it completed, as much as is known.
func (s *Service) announceComplete(ctx context.Context, o *StoreOp, a *Applied) {
	job := a.Job
	fill := func(ev *core.Event) { ev.Repeated = a.Repeated; ev.Result = o.Result }
	if !o.Bare {
		s.publish(bus.EventComplete, job, fill)
		return
	}
	subject := s.subj.Job(bus.EventComplete, job.ID, job.Type)
	heard := s.listening(subject)
	if heard {
		if stored, err := s.store.Get(ctx, job.ID); err == nil && stored != nil && stored.State == core.StateComplete {
			job = stored
		}
	}
	s.publishOn(subject, heard, bus.EventComplete, job, fill)
}

func checkRescue(req *core.RescueRequest) (limit int, err error) {
	// The bound a job's own stall_limit has, so that the schema can state
	// one for each number of a request.
	if req.StallLimit < 0 || req.StallLimit > core.MaxStallLimit {
		return 0, core.Invalidf("stall_limit", "%d is outside 0..%d (0 means the core's)", req.StallLimit, core.MaxStallLimit)
	}
	return checkLimit(req.Limit)
}

func (s *Service) rescue(ctx context.Context, req *core.RescueRequest) (*core.MoveReply, error) {
	limit, err := checkRescue(req)
	if err != nil {
		return nil, err
	}
	stallLimit := req.StallLimit
	if stallLimit == 0 {
		stallLimit = s.cfg.StallLimit
	}
	now := s.dueNow()
	// A silent worker's leases end first, so that this very call takes its
	// jobs back. Failing that is logged, not fatal: the leases still run
	// out at their ttl.
	ended, nextSilent, serr := s.store.ExpireSilent(ctx, now)
	if serr != nil {
		s.log.Warn("the leases of silent workers not all ended; tried again next rescue", "err", serr)
	}
	if ended > 0 {
		s.log.Info("silent workers' leases ended", "jobs", ended)
	}
	moved, next, err := s.store.Rescue(ctx, now, limit, stallLimit)
	for i := range moved {
		s.announceRescued(&moved[i])
	}
	if nextSilent > 0 && (next == 0 || nextSilent < next) {
		next = nextSilent // the loop comes back when a worker may turn silent
	}
	return s.moveReply(bus.MethodRescue, moved, next, err)
}

// announceRescued publishes what rescue did to a job: stalled (back to
// inactive, no attempt used), or, past its stall limit, a failed attempt
// (failed_attempt, or failed when no attempt remains).
func (s *Service) announceRescued(job *core.Job) {
	switch {
	case job.State == core.StateFailed:
		s.publish(bus.EventFailed, job, func(ev *core.Event) { ev.Error, ev.Attempts = job.Error, job.Attempts })
	case job.Stalls > job.StallLimit:
		s.publish(bus.EventFailedAttempt, job, func(ev *core.Event) { ev.Error, ev.Attempts = job.Error, job.Attempts })
		if job.State == core.StateDelayed {
			s.announceDue(job.PromoteAt)
		}
	default:
		s.publish(bus.EventStalled, job, nil)
	}
}
