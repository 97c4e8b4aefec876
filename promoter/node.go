package promoter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// Node defaults.
const (
	BindDefault         = "127.0.0.1:7946"
	JoinRetryDefault    = time.Second
	RejoinDefault       = 30 * time.Second
	LeaveTimeoutDefault = time.Second
)

// LeaderCore is what a leader's loops need of core; *core.Client satisfies it.
type LeaderCore interface {
	Core
	Rescuer
	Scheduler
	Cleaner
}

var _ LeaderCore = (*core.Client)(nil)

// NodeConfig configures a Node, one member of the promoter ring.
type NodeConfig struct {
	// Name is the node's name in the ring, unique among its members: the
	// alive member with the lowest name leads. One subject token
	// ([A-Za-z0-9_-]{1,128}). Required.
	Name string
	// Bind is the HOST:PORT memberlist listens on, UDP and TCP; HOST is an
	// IP. Port 0 picks a free one. Default BindDefault ("127.0.0.1:7946"):
	// other machines reach a wider address, which wants SecretKey.
	Bind string
	// Advertise is the IP:PORT the other members reach this node at.
	// Default: Bind's, except that a Bind host of 0.0.0.0 lets memberlist
	// pick this machine's first private IP (and fail when there is none).
	Advertise string
	// Seeds are HOST:PORT addresses of members to join. The node retries
	// every JoinRetry until one answers (or another member joins it), then
	// joins them again every Rejoin so that a ring split by a long
	// partition heals. Default: none, a ring of one until others join it.
	Seeds []string
	// Memberlist is the base memberlist configuration, which fixes how fast
	// a dead member is noticed (ProbeInterval, ProbeTimeout, SuspicionMult).
	// It is copied; the copy's name, addresses, events and logger come from
	// this config. Default memberlist.DefaultLANConfig().
	Memberlist *memberlist.Config
	// SecretKey encrypts and authenticates the ring's gossip (AES-GCM): 16,
	// 24 or 32 bytes, the same on every member. A member without it cannot
	// join, so cannot lead. Default: none, plain gossip, which anyone who
	// reaches Bind can join.
	SecretKey []byte
	// Conn is the NATS connection the node serves cluster.status and
	// publishes queue.leader on, and, unless Core is set, calls core on.
	// Required.
	Conn *nats.Conn
	// Subjects carries the deployment's subject prefix. Default: none.
	Subjects bus.Subjects
	// Core is what the leader's loops call. Default: a core.Client on Conn
	// with Subjects' prefix.
	Core LeaderCore
	// Loop configures the leader's promote loop, Rescue its rescue loop and
	// Clean its cleaner; their Core and (when nil) Logger are the node's.
	// Defaults: theirs.
	Loop   LoopConfig
	Rescue RescueConfig
	// Schedule configures the leader's schedule loop; its Core and (when
	// nil) Logger are the node's. Defaults: its own.
	Schedule ScheduleConfig
	Clean    CleanConfig
	// JoinRetry is the wait between two attempts to join the seeds while
	// none answered. Default JoinRetryDefault (1s).
	JoinRetry time.Duration
	// Rejoin is how often the seeds are joined again once joined. Default
	// RejoinDefault (30s).
	Rejoin time.Duration
	// LeaveTimeout bounds Run's wait for the leave message to go out on
	// a graceful stop. Default LeaveTimeoutDefault (1s).
	LeaveTimeout time.Duration
	// Logger gets leadership changes (Info), memberlist's own lines at
	// their level, and failures. Default: discard.
	Logger *slog.Logger
	// LogInterval bounds memberlist's lines, which a flood of garbage on
	// the gossip port would otherwise multiply: of each kind of line, the
	// first of an interval is written and the rest are counted, in one line
	// when the interval ends. Default LogIntervalDefault (10s).
	LogInterval time.Duration
	// Tasks run on the leader beside its loops, one goroutine each, for
	// each term, under the term's context: they must return once it ends.
	// An error from one ends the term as a loop's would. The node's outbox
	// role is one. Default: none.
	Tasks []func(ctx context.Context) error
	// OnTerm, when set, is called on the leader loop's goroutine right
	// after a term started (true) and after a term's loops have returned
	// (false). A test hook: nil in production. It must not block.
	OnTerm func(leading bool)
}

func (c NodeConfig) withDefaults() NodeConfig {
	c.Bind = cmp.Or(c.Bind, BindDefault)
	c.JoinRetry = cmp.Or(c.JoinRetry, JoinRetryDefault)
	c.Rejoin = cmp.Or(c.Rejoin, RejoinDefault)
	c.LeaveTimeout = cmp.Or(c.LeaveTimeout, LeaveTimeoutDefault)
	c.LogInterval = cmp.Or(c.LogInterval, LogIntervalDefault)
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	c.Loop.Logger = cmp.Or(c.Loop.Logger, c.Logger)
	c.Rescue.Logger = cmp.Or(c.Rescue.Logger, c.Logger)
	c.Schedule.Logger = cmp.Or(c.Schedule.Logger, c.Logger)
	c.Clean.Logger = cmp.Or(c.Clean.Logger, c.Logger)
	c.Seeds = slices.Clone(c.Seeds)
	c.Tasks = slices.Clone(c.Tasks)
	return c
}

func (c NodeConfig) validate() error {
	var errs []error
	if err := bus.ValidToken(c.Name); err != nil {
		errs = append(errs, fmt.Errorf("promoter: node name %q: %v", c.Name, err))
	}
	if _, _, err := splitAddr("bind", c.Bind, true); err != nil {
		errs = append(errs, err)
	}
	if c.Advertise != "" {
		if _, _, err := splitAddr("advertise", c.Advertise, true); err != nil {
			errs = append(errs, err)
		}
	}
	for _, s := range c.Seeds {
		if _, port, err := splitAddr("seed", s, false); err != nil {
			errs = append(errs, err)
		} else if port == 0 {
			errs = append(errs, fmt.Errorf("promoter: seed address %q: port 0 names no member", s))
		}
	}
	if n := len(c.SecretKey); n != 0 && n != 16 && n != 24 && n != 32 {
		errs = append(errs, fmt.Errorf("promoter: secret key of %d bytes: it must be 16, 24 or 32 bytes", n))
	}
	for what, d := range map[string]time.Duration{"join retry": c.JoinRetry, "rejoin": c.Rejoin, "leave timeout": c.LeaveTimeout, "log interval": c.LogInterval} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("promoter: %s %v is negative", what, d))
		}
	}
	errs = append(errs, c.Loop.validate(), c.Rescue.validate(), c.Schedule.validate(), c.Clean.validate())
	return errors.Join(errs...)
}

// Node is one member of the promoter ring. It serves cluster.status and,
// while it leads, runs the promote and rescue loops: see the package doc.
type Node struct {
	cfg  NodeConfig
	core LeaderCore
	log  *slog.Logger
	mlog *logBridge // memberlist's lines, at a bounded rate
	ml   *memberlist.Memberlist
	// changed gets a token from memberlist's callbacks whenever the
	// membership changed; the leader loop re-reads Members() on it.
	changed chan struct{}

	running atomic.Bool // Run was called
	crashed atomic.Bool // the memberlist was shut down without Leave (tests)

	mu     sync.Mutex
	status Status // the leader loop's last view, for cluster.status

	known map[string]Member // every member seen; the leader loop's own
}

// New checks cfg and creates the node's memberlist, bound to its address
// but alone in its ring until Run joins the seeds. Run must be called once
// to release the memberlist again, if need be with a context already done.
func New(cfg NodeConfig) (*Node, error) {
	if cfg.Conn == nil {
		panic("promoter: New needs a NATS connection")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	n := &Node{
		cfg:     cfg,
		core:    cfg.Core,
		log:     cfg.Logger.With("component", "promoter"),
		changed: make(chan struct{}, 1),
		known:   make(map[string]Member),
		status:  Status{Self: cfg.Name},
	}
	n.mlog = newLogBridge(cfg.Logger.With("component", "memberlist"), cfg.LogInterval, time.Now)
	if n.core == nil {
		c, err := core.NewClient(cfg.Conn, &core.ClientOptions{Prefix: cfg.Subjects.Prefix()})
		if err != nil {
			return nil, fmt.Errorf("promoter: %w", err)
		}
		n.core = c
	}
	mc, err := n.memberlistConfig()
	if err != nil {
		return nil, err
	}
	if n.ml, err = memberlist.Create(mc); err != nil {
		return nil, fmt.Errorf("promoter: memberlist on %s: %w", cfg.Bind, err)
	}
	return n, nil
}

// Name is the node's name in the ring.
func (n *Node) Name() string { return n.cfg.Name }

// Addr is the IP:PORT the other members reach this node at: the address
// to give others as a seed.
func (n *Node) Addr() string { return n.ml.LocalNode().Address() }

// Status returns the node's current view of the ring.
func (n *Node) Status() Status {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := n.status
	st.Members = slices.Clone(st.Members)
	return st
}

// Run joins the ring, serves cluster.status and leads while this node is
// the leader, until ctx ends. Then it stops its leadership term and waits
// for its loops, leaves the ring (so that the next leader takes over at
// once), stops serving and shuts the memberlist down. It returns nil after
// that, or the error that ended it early: the status service could not be
// served, or a leader loop could not start.
func (n *Node) Run(ctx context.Context) error {
	if !n.running.CompareAndSwap(false, true) {
		return errors.New("promoter: Run called twice")
	}
	srv, err := n.serveStatus()
	if err != nil {
		n.leaveAndShutdown()
		return err
	}
	var joiner, flusher sync.WaitGroup
	joinCtx, stopJoining := context.WithCancel(ctx)
	flushCtx, stopFlushing := context.WithCancel(context.Background())
	flusher.Go(func() { n.mlog.flushEvery(flushCtx) })
	if len(n.cfg.Seeds) > 0 && ctx.Err() == nil {
		// One attempt before the first evaluation, so that a node joining
		// a running ring does not lead a ring of its own for a moment.
		failures := 0
		n.join(&failures)
		joiner.Go(func() { n.joinLoop(joinCtx, failures) })
	}

	err = n.lead(ctx)

	// Shutdown order: leadership is over (lead awaited the loops), so leave
	// first, the step that lets the next leader start at once; a join in
	// flight cannot be interrupted (memberlist's Join has no context) and
	// is awaited last.
	stopJoining()
	n.leaveAndShutdown()
	stopCtx, cancel := context.WithTimeout(context.Background(), n.cfg.LeaveTimeout)
	if serr := srv.Stop(stopCtx); serr != nil {
		n.log.Warn("stop cluster.status service", "err", serr)
	}
	cancel()
	joiner.Wait()
	// Last: memberlist has stopped writing, so the final counts are final.
	stopFlushing()
	flusher.Wait()
	return err
}

// lead is the leader loop: the one place that decides whether this node
// leads. It re-evaluates the membership on every change memberlist
// signals, starts a term when this node becomes the leader and ends it,
// awaiting its loops, when another member does. It returns nil when ctx
// ends, after the term (if any) has ended.
func (n *Node) lead(ctx context.Context) error {
	var t *term
	defer func() {
		if t != nil {
			n.endTerm(t, "stopping")
		}
	}()
	for {
		if ctx.Err() != nil {
			return nil // checked first: a Run that ends at once starts no term
		}
		leader := n.evaluate()
		switch {
		case leader == n.cfg.Name && t == nil:
			t = n.startTerm(ctx)
		case leader != n.cfg.Name && t != nil:
			n.endTerm(t, "member "+leader+" leads now")
			t = nil
		}
		var failed <-chan error
		if t != nil {
			failed = t.failed
		}
		select {
		case <-ctx.Done():
			return nil
		case <-n.changed:
		case err := <-failed:
			return fmt.Errorf("promoter: node %s: leader loop: %w", n.cfg.Name, err)
		}
	}
}

// term is one leadership term: the promote, rescue, schedule and clean
// loops, under a context of their own.
type term struct {
	cancel context.CancelFunc
	loops  sync.WaitGroup
	failed chan error // a loop that returned an error while the term ran
}

func (n *Node) startTerm(ctx context.Context) *term {
	tctx, cancel := context.WithCancel(ctx)
	t := &term{cancel: cancel, failed: make(chan error, 4+len(n.cfg.Tasks))}
	loop, rescue, schedule, clean := n.cfg.Loop, n.cfg.Rescue, n.cfg.Schedule, n.cfg.Clean
	loop.Core, rescue.Core, schedule.Core, clean.Core = n.core, n.core, n.core, n.core
	run := func(fn func() error) {
		t.loops.Go(func() {
			if err := fn(); err != nil {
				t.failed <- err // buffered for every loop: never blocks
			}
		})
	}
	run(func() error { return RunLoop(tctx, loop) })
	run(func() error { return RunRescueLoop(tctx, rescue) })
	run(func() error { return RunScheduleLoop(tctx, schedule) })
	run(func() error { return RunCleanLoop(tctx, clean) })
	for _, task := range n.cfg.Tasks {
		run(func() error { return task(tctx) })
	}
	n.log.Info("leading: promote, rescue, schedule and clean loops started")
	n.announce(ctx)
	if n.cfg.OnTerm != nil {
		n.cfg.OnTerm(true)
	}
	return t
}

// endTerm cancels the term's loops and waits until all have returned:
// nothing else happens on this node until they have.
func (n *Node) endTerm(t *term, why string) {
	t.cancel()
	t.loops.Wait()
	n.log.Info("no longer leading: promote, rescue, schedule and clean loops stopped", "reason", why)
	if n.cfg.OnTerm != nil {
		n.cfg.OnTerm(false)
	}
}

// announce publishes queue.leader with this node's name. It is an event
// like the others: at most once, so a subscriber that missed it asks
// cluster.status.
func (n *Node) announce(ctx context.Context) {
	ev := core.Event{Event: bus.QueueLeader, Leader: n.cfg.Name, At: time.Now().UnixMilli()}
	data, err := bus.Encode(&ev)
	if err == nil {
		err = n.cfg.Conn.Publish(n.cfg.Subjects.Queue(bus.QueueLeader), data)
	}
	if err != nil {
		n.log.WarnContext(ctx, "queue.leader not published", "err", err)
	}
}

// leaveAndShutdown leaves the ring, unless the node crashed, and shuts the
// memberlist down. Leave tells the others this node is gone at once,
// instead of after the failure-detection time.
func (n *Node) leaveAndShutdown() {
	if !n.crashed.Load() {
		if err := n.ml.Leave(n.cfg.LeaveTimeout); err != nil {
			n.log.Warn("leave the ring: the others notice by probing instead", "err", err)
		}
	}
	if err := n.ml.Shutdown(); err != nil {
		n.log.Warn("shut down memberlist", "err", err)
	}
}
