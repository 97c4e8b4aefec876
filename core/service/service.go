package service

import (
	"cmp"
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

// Config configures a Service.
type Config struct {
	// Store is where jobs live. Required.
	Store Store
	// Conn is the NATS connection the service serves and publishes on. Required.
	Conn *nats.Conn
	// Subjects carries the subject prefix. Default: no prefix.
	Subjects bus.Subjects
	// Logger gets failures. Default: discard.
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// MaxDataBytes limits a job's data. Default MaxDataBytesDefault (512 KiB).
	MaxDataBytes int
	// MaxBulk limits the jobs of one create_bulk. Default 1000.
	MaxBulk int
	// MaxLogLineBytes limits one log line. Default 64 KiB.
	MaxLogLineBytes int
	// StallLimit is how often a job may lose its lease (its worker died or
	// hung past the ttl) and go back to inactive without using an attempt;
	// each later stall is a failed attempt. New jobs take it unless their
	// spec sets stall_limit; rescue uses it for jobs stored without one.
	// Default (and 0): 1.
	StallLimit int
	// MaxWaitingLeases bounds the lease requests that wait for work on this
	// core at once (each holds memory and a goroutine while it waits). A
	// lease that would wait beyond it and finds nothing ready answers at
	// once with unavailable. Leases in flight beyond it plus
	// leaseHeadroom are answered unavailable on arrival, before they
	// cost a goroutine or a read of Redis. Default MaxWaitingLeasesDefault
	// (10,000).
	MaxWaitingLeases int
	// OnLeaseWait, when set, is called each time a lease request finds
	// nothing and starts to wait. A test hook: nil in production.
	OnLeaseWait func(types []string)
	// Retention holds the default retention of job types, per finished
	// state, for the jobs that bring none of their own (a job's own always
	// wins); the key AnyType ("*") holds for every type without an entry.
	// Each default is zero (kept) or {age, count}. Default: none, every
	// finished job is kept unless it says otherwise.
	Retention map[string]core.TypeRetention
	// ShutdownTimeout bounds how long Run waits for requests in flight after
	// its context ends. Default 10s.
	ShutdownTimeout time.Duration
	// Listening, when set, says whether an event published on a subject
	// now would reach anyone; core then neither encodes nor publishes the
	// events nobody would receive (every job's start and complete in a
	// deployment where nothing listens to them). A node whose core runs
	// beside the embedded NATS server asks that server (embedded.Server.
	// Interest, bus/embedded). Events are at most once: skipping one that nobody
	// listens to is what publishing it would have done. Default nil:
	// every event is published.
	Listening func(subject string) bool
}

// MaxWaitingLeasesDefault is Config.MaxWaitingLeases' default: far more
// workers than one core serves in practice. A waiting lease costs about
// 18 KB of the resident memory of a process with core and its embedded
// NATS (BenchmarkWaitingLeaseMemory, 10,000 of them: 17.6-18.8 KB, with
// GOGC 100 or 400): about 10.5 KB live, its goroutine's 8 KB stack and
// 2.3 KB of heap (request, timer, wait-room entry), and the rest garbage
// and allocator room left from handling it. So the default bounds that
// memory near 180 MB.
const MaxWaitingLeasesDefault = 10_000

// leaseHeadroom is how many lease requests may be in flight beyond those
// that wait (MaxWaitingLeases): the ones on their way to a lease that
// finds work, or that ask with no wait. A flood beyond it is refused by
// the RPC server (bus.ServerConfig.MaxWaiting) without a read of Redis.
const leaseHeadroom = 1024

func (c Config) withDefaults() Config {
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	if c.Now == nil {
		c.Now = time.Now
	}
	c.MaxDataBytes = cmp.Or(c.MaxDataBytes, core.MaxDataBytesDefault)
	c.MaxBulk = cmp.Or(c.MaxBulk, 1000)
	c.MaxLogLineBytes = cmp.Or(c.MaxLogLineBytes, 64<<10)
	c.ShutdownTimeout = cmp.Or(c.ShutdownTimeout, 10*time.Second)
	c.StallLimit = cmp.Or(c.StallLimit, 1)
	c.MaxWaitingLeases = cmp.Or(c.MaxWaitingLeases, MaxWaitingLeasesDefault)
	return c
}

// Service is core: it serves the RPC methods of docs/protocol.md §3 as the micro
// service kuebus-core, stores through its Store, and publishes an event after
// every committed change. Any number of Services may serve one Redis: they
// share the queue group, so each request reaches one.
type Service struct {
	cfg    Config
	store  Store
	nc     *nats.Conn
	subj   bus.Subjects
	log    *slog.Logger
	server *bus.Server

	creates  *batch.Joiner[core.Spec, stored]
	policies *policyCache // the types' policies, for their defaults (policy.go)
	waits    *waitRoom
	errs     *errorReporter       // queue.error
	history  *history             // per-minute counts not yet in Redis
	wakes    *wakeSubs            // wake events of the types leases wait on (wakesubs.go)
	wakeSub  []*nats.Subscription // queue.resume
	closing  chan struct{}        // closed by Stop: waiting leases answer at once
	// sweepAt is when promote next reads the waiting broadcasts although
	// it completed none (broadcast.go), unix ms.
	sweepAt  atomic.Int64
	stopOnce sync.Once
	stopErr  error
}

// New registers the service's endpoints on the bus. It serves until
// Stop (or the end of Run's context).
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Conn == nil {
		panic("service: New needs a Store and a NATS connection")
	}
	cfg = cfg.withDefaults()
	if cfg.MaxWaitingLeases < 0 {
		return nil, fmt.Errorf("core: MaxWaitingLeases: %d is negative", cfg.MaxWaitingLeases)
	}
	if err := checkRetention(cfg.Retention); err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, store: cfg.Store, nc: cfg.Conn, subj: cfg.Subjects, log: cfg.Logger.With("component", "core"),
		waits: newWaitRoom(), closing: make(chan struct{}), policies: newPolicyCache(time.Now)}
	s.errs = newErrorReporter(s)
	s.history = newHistory()
	s.wakes = newWakeSubs(cfg.Conn, cfg.Subjects, s.waits.onEvent, s.log, time.Now)
	sub, err := cfg.Conn.Subscribe(cfg.Subjects.Queue(bus.QueueResume), s.waits.onResume)
	if err != nil {
		s.unsubscribe()
		return nil, fmt.Errorf("core: subscribe to %s: %w", bus.QueueResume, err)
	}
	s.wakeSub = append(s.wakeSub, sub)
	srv, err := bus.NewServer(cfg.Conn, bus.ServerConfig{
		Name:        bus.CoreServiceName,
		QueueGroup:  bus.CoreQueueGroup,
		Description: "kuebus core: the job queue's RPC methods",
		Metadata:    map[string]string{bus.MetadataPrefix: cfg.Subjects.Prefix(), bus.MetadataSchema: bus.SchemaURL},
		MaxWaiting:  cfg.MaxWaitingLeases + leaseHeadroom,
		Logger:      s.log,
	})
	if err != nil {
		s.unsubscribe()
		return nil, fmt.Errorf("core: %w", err)
	}
	s.server = srv
	s.creates = newCreateBatcher(s)
	cfg.Store.OnSettled(s.announceSettled)
	if err := errors.Join(s.register(), s.registerWorker(), s.registerSchedules(), s.registerTypes(), s.registerExplain(), srv.Ready()); err != nil {
		s.unsubscribe()
		_ = srv.Stop(context.Background())
		s.creates.Stop()
		return nil, fmt.Errorf("core: %w", err)
	}
	go s.runHistory(HistoryFlushDefault)
	return s, nil
}

// Run serves until ctx ends, then stops as Stop does.
func (s *Service) Run(ctx context.Context) error {
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	return s.Stop(stopCtx)
}

// Stop stops taking requests and waits for those in flight until ctx ends.
func (s *Service) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		close(s.closing) // waiting leases answer now
		s.unsubscribe()
		s.stopErr = s.server.Stop(ctx)
		s.creates.Stop() // after the requests that feed it have returned
		close(s.history.stop)
		<-s.history.done
		s.FlushHistory(ctx) // what the last requests counted
	})
	return s.stopErr
}

func (s *Service) unsubscribe() {
	for _, sub := range s.wakeSub {
		_ = sub.Unsubscribe()
	}
	s.wakes.close()
}

// withNodeDefaults fills what a spec leaves to the node: its stall limit,
// so that the stored job shows the limit it runs under.
func (s *Service) withNodeDefaults(sp *core.Spec) {
	if sp.StallLimit == nil {
		limit := s.cfg.StallLimit
		sp.StallLimit = &limit
	}
}

// now is the time, in unix ms, that a change is stamped with and that
// schedules from (promote_at = now + delay, lease_until = now + ttl). It is
// rounded up, so that a time scheduled from it is never before the true
// instant plus the delay: a job is never due before its delay has passed.
func (s *Service) now() int64 {
	us := s.cfg.Now().UnixMicro()
	return (us + 999) / 1000
}

// dueNow is the time, in unix ms, that promote and rescue compare due times
// with. It is rounded down, so that nothing is taken as due early.
func (s *Service) dueNow() int64 { return s.cfg.Now().UnixMilli() }

// publish sends one job event; a failure to publish is logged, never undoes
// the change it reports (the change is committed; events are at most once).
func (s *Service) publish(event string, job *core.Job, fill func(*core.Event)) {
	subject := s.subj.Job(event, job.ID, job.Type)
	s.publishOn(subject, s.listening(subject), event, job, fill)
}

// publishOn is publish for a caller that has built the event's subject
// and asked whether anyone listens to it (heard) already.
func (s *Service) publishOn(subject string, heard bool, event string, job *core.Job, fill func(*core.Event)) {
	if !heard && event != bus.EventEnqueue {
		// Nobody hears it, and the history needs only its kind (fill
		// matters to it for enqueue alone: new): no event is built, which
		// would cost an allocation per start and per complete.
		s.history.count(event, job, s.now(), false)
		s.wakeWaiting(job)
		return
	}
	ev := core.Event{Event: event, ID: job.ID, Type: job.Type, At: s.now()}
	if fill != nil {
		fill(&ev)
	}
	s.history.count(event, job, ev.At, ev.New)
	if heard {
		ev.Job = job.ForEvent() // a copy, made only for an event that goes
		s.send(subject, &ev)
	}
	s.wakeWaiting(job)
}

// wakeWaiting wakes our own waiting leases of job's type when it became
// ready, now rather than when its event comes back through NATS (other
// cores' leases wake on the event).
//
// A job leaving active (complete, failed, cancelled, back to delayed) makes
// room under its type's concurrency: it wakes the waiting leases of a type
// a lease found held back by its policy (waitRoom.noteLimited).
func (s *Service) wakeWaiting(job *core.Job) {
	if s.waits.waiting.Load() == 0 {
		return
	}
	switch job.State {
	case core.StateInactive:
		s.waits.wake(job.Type)
	case core.StateActive:
	default:
		s.waits.wakeLimited(job.Type)
	}
}

// listening reports whether an event on subject would reach anyone
// (Config.Listening; true when the core cannot tell).
func (s *Service) listening(subject string) bool {
	return s.cfg.Listening == nil || s.cfg.Listening(subject)
}

// emit sends an event if anyone would receive it.
func (s *Service) emit(subject string, ev *core.Event) {
	if s.listening(subject) {
		s.send(subject, ev)
	}
}

// send encodes and publishes an event.
func (s *Service) send(subject string, ev *core.Event) {
	data, err := bus.Encode(ev)
	if err == nil {
		err = s.nc.Publish(subject, data)
	}
	if err != nil {
		s.log.Warn("event not published", "subject", subject, "err", err)
	}
}

// announceDue tells a sleeping promoter that a job falls due at `at`.
func (s *Service) announceDue(at int64) {
	s.emit(s.subj.Queue(bus.QueueDue), &core.Event{Event: bus.QueueDue, At: s.now(), DueAt: at})
}
