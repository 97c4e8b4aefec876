package service

import (
	"context"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// A broadcast job (DESIGN §10.4) is completed by the promote that finds it
// due (the store's promote script), then published here, by the core that
// served that promote, in three steps: take the waiting broadcasts (a
// claim of broadcastClaim), publish each with its data and flush, then
// tell the store they were sent. Delivery is at least once, never at most
// once: a core that dies after the promote, or after the take, leaves the
// broadcast waiting, and a later promote (of any core) publishes it again
// once its claim ran out: within broadcastSweep, or at the claim's end
// when that promote saw the claim (the promoter wakes for it: promote's
// next_due counts it), so at most about 10 s late. The only duplicate is a
// core that died, or stalled past the claim, between its publish and its
// "sent". Publishing first and completing after would need the same
// record (a crash between the two) and could duplicate as well;
// completing first and publishing without the record would lose the
// broadcast of a core that died in between (at most once).

// broadcastClaim is how long a take holds a broadcast for the core that
// took it. A take, a publish and a flush take milliseconds; the claim only
// bounds how late a broadcast whose core died goes out.
const broadcastClaim = 5 * time.Second

// broadcastFlush bounds the wait for the NATS server to have the
// broadcasts just published.
const broadcastFlush = 2 * time.Second

// broadcastSweep is how often promote reads the waiting broadcasts when
// it completed none itself: what another core left (it died) is found
// within this of its claim's end. Reading them at every promote would
// double the reads of a promote (one per type), for what is a crash's
// leftover.
const broadcastSweep = 5 * time.Second

// broadcast publishes up to limit waiting broadcasts and returns the
// earliest time another waits (0: none known). It reads them when this
// promote completed some (promoted), and otherwise at most every
// broadcastSweep, or when a claim it saw runs out. Failures are reported
// on queue.error and logged; what was not said to be sent goes out again
// after its claim.
func (s *Service) broadcast(ctx context.Context, now int64, limit int, promoted bool) int64 {
	if !promoted && now < s.sweepAt.Load() {
		return 0
	}
	jobs, next, err := s.store.TakeBroadcasts(ctx, now, now+broadcastClaim.Milliseconds(), limit)
	sweepAt := now + broadcastSweep.Milliseconds()
	if next > 0 && next < sweepAt {
		sweepAt = next
	}
	s.sweepAt.Store(sweepAt)
	if err != nil {
		s.errs.report(bus.MethodPromote, err)
		s.log.Warn("broadcasts not taken", "err", err, "taken", len(jobs))
	}
	if len(jobs) == 0 {
		return next
	}
	for i := range jobs {
		s.publishBroadcast(&jobs[i])
	}
	// Sent means the NATS server has them (with durable events, it stores
	// them in its stream from there, as every event): until the flush
	// answers they could still be in our buffer.
	fctx, cancel := context.WithTimeout(ctx, broadcastFlush)
	defer cancel()
	if err := s.nc.FlushWithContext(fctx); err != nil {
		s.log.Warn("broadcasts published but not flushed: they go out again after their claim", "err", err, "jobs", len(jobs))
		return next
	}
	if err := s.store.BroadcastsSent(ctx, jobs); err != nil {
		s.errs.report(bus.MethodPromote, err)
		s.log.Warn("broadcasts published but not ended: they go out again after their claim", "err", err, "jobs", len(jobs))
		return next
	}
	for i := range jobs {
		s.publish(bus.EventComplete, &jobs[i], nil)
	}
	return next
}

// publishBroadcast sends a broadcast job's event: the job with its data.
func (s *Service) publishBroadcast(job *core.Job) {
	subject := s.subj.Job(bus.EventBroadcast, job.ID, job.Type)
	if !s.listening(subject) {
		return
	}
	j := *job
	j.Lease = "" // never leased; kept out all the same, as ForEvent does
	s.send(subject, &core.Event{Event: bus.EventBroadcast, ID: job.ID, Type: job.Type, At: s.now(), Job: &j})
}
