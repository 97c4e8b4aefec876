package promoter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// Loop defaults.
const (
	LimitDefault      = core.MoveLimitDefault
	MaxSleepDefault   = time.Second
	RetryDelayDefault = 250 * time.Millisecond
	// CallTimeoutDefault bounds one promote or rescue call (see
	// LoopConfig.CallTimeout). A second is safe because neither method ever
	// waits at core: it moves at most Limit jobs in one script per type and
	// answers, in milliseconds. A call that has not answered in a second was
	// lost (the core that took it died, or a stale member of core's queue
	// group took it), not slow; without this bound it would wait for the
	// client's 10s default (bus.CallTimeoutDefault) and every due job with it.
	// Calling again is safe even when the first call did run: the scripts
	// move a job only while it is still due, as with two leaders racing, so
	// each job moves once.
	CallTimeoutDefault = time.Second
)

// The range a call timeout must lie in. Below minCallTimeout a healthy core
// cannot answer (a round trip over NATS plus a script is a few ms), so every
// call would fail; above maxCallTimeout a lost call would hold due jobs back
// longer than anyone waits for a delayed job to start.
const (
	minCallTimeout = 10 * time.Millisecond
	maxCallTimeout = time.Minute
)

// minSleep is the shortest sleep between two calls that moved fewer than
// Limit jobs: a next_due already in the past (clock skew between this
// process and core, or a job that fell due during the call) must not make
// the loop spin.
const minSleep = time.Millisecond

// Core is what the loop needs of core; *core.Client satisfies it.
type Core interface {
	Promote(ctx context.Context, limit int) (*core.MoveReply, error)
	Subscribe(subject string, fn func(*core.Event)) (*nats.Subscription, error)
	Subjects() bus.Subjects
}

var _ Core = (*core.Client)(nil)

// LoopConfig configures RunLoop.
type LoopConfig struct {
	// Core is the queue the loop promotes in. Required.
	Core Core
	// Limit is how many jobs one promote call may move, at most
	// core.MaxMoveLimit. Default LimitDefault (1000).
	Limit int
	// MaxSleep is the longest the loop sleeps between two calls, whatever
	// next_due says; it also bounds how late a job is when a queue.due
	// announcement is lost. Default MaxSleepDefault (1s).
	MaxSleep time.Duration
	// RetryDelay is how long the loop waits after a failed call (core or
	// Redis unavailable) before it tries again. Default RetryDelayDefault
	// (250ms). A call that timed out is retried at once instead: it has
	// waited CallTimeout already.
	RetryDelay time.Duration
	// CallTimeout bounds each promote call: one that has not answered by
	// then counts as failed and is made again at once. Between 10ms and 1m.
	// Default CallTimeoutDefault (1s), whose comment says why it is safe;
	// a Limit far above the default on a slow Redis may need more, else
	// calls that would have succeeded are made twice (harmless, but logged).
	CallTimeout time.Duration
	// Logger gets failed calls (Warn) and promotions (Debug). Default: discard.
	Logger *slog.Logger
	// Now is the clock next_due and queue.due times are read against.
	// Default time.Now.
	Now func() time.Time
	// OnPromote, when set, is called on the loop's goroutine after every
	// successful promote call with its reply; failed calls are logged, not
	// reported here. A test hook: nil in production. It must not block.
	OnPromote func(*core.MoveReply)
}

func (c LoopConfig) withDefaults() LoopConfig {
	c.Limit = cmp.Or(c.Limit, LimitDefault)
	c.MaxSleep = cmp.Or(c.MaxSleep, MaxSleepDefault)
	c.RetryDelay = cmp.Or(c.RetryDelay, RetryDelayDefault)
	c.CallTimeout = cmp.Or(c.CallTimeout, CallTimeoutDefault)
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

func (c LoopConfig) validate() error {
	switch {
	case c.Limit < 0 || c.Limit > core.MaxMoveLimit:
		return fmt.Errorf("promoter: loop limit %d is not in 1..%d", c.Limit, core.MaxMoveLimit)
	case c.MaxSleep < 0:
		return fmt.Errorf("promoter: loop max sleep %v is negative", c.MaxSleep)
	case c.RetryDelay < 0:
		return fmt.Errorf("promoter: loop retry delay %v is negative", c.RetryDelay)
	}
	return checkCallTimeout("loop", c.CallTimeout)
}

// checkCallTimeout refuses a call timeout outside minCallTimeout ..
// maxCallTimeout; 0 (the default) passes. what names the loop.
func checkCallTimeout(what string, d time.Duration) error {
	switch {
	case d < 0:
		return fmt.Errorf("promoter: %s call timeout %v is negative", what, d)
	case d > 0 && d < minCallTimeout:
		return fmt.Errorf("promoter: %s call timeout %v is under %v: core cannot answer that fast, so every call would fail", what, d, minCallTimeout)
	case d > maxCallTimeout:
		return fmt.Errorf("promoter: %s call timeout %v is over %v: a lost call would hold due jobs back that long", what, d, maxCallTimeout)
	}
	return nil
}

// timedOut reports whether err is a call's own deadline running out, while
// the loop's ctx is still live: the call was lost, and the caller already
// waited for it.
func timedOut(ctx context.Context, err error) bool {
	return ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout))
}

// retryDelay is the wait before calling again after err: none after a call
// that timed out, since it waited CallTimeout already and calls stay one per
// CallTimeout at most; RetryDelay after a quick refusal (no core answers,
// Redis down), so that the loop does not spin.
func retryDelay(ctx context.Context, err error, delay time.Duration) time.Duration {
	if timedOut(ctx, err) {
		return 0
	}
	return delay
}

// RunLoop promotes due delayed jobs until ctx ends; returns nil on ctx end.
//
// It subscribes to queue.due before its first call, so every announcement
// made after that call reaches it. Each call moves up to Limit jobs; when a
// call moves Limit, more may be due and the loop calls again at once.
// Otherwise it sleeps until the reply's next_due (unix ms by Now), at least
// 1ms and at most MaxSleep, or until an announced job is due earlier. A
// failed call is logged and retried after RetryDelay: the loop outlives core
// restarts. Each call is bounded by CallTimeout, and one that timed out is
// retried at once, so a call lost with a dying core delays due jobs by about
// CallTimeout, not the client's 10s. It returns an error only for an invalid
// config or when it cannot subscribe. It starts no goroutine; the
// subscription is removed on return.
func RunLoop(ctx context.Context, cfg LoopConfig) error {
	if cfg.Core == nil {
		panic("promoter: RunLoop needs a Core")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	promote := func(ctx context.Context, limit int) (*core.MoveReply, error) { return cfg.Core.Promote(ctx, limit) }
	return runDueLoop(ctx, cfg, cfg.Core, "promote", promote)
}

// subscriber is how a loop hears queue.due.
type subscriber interface {
	Subscribe(subject string, fn func(*core.Event)) (*nats.Subscription, error)
	Subjects() bus.Subjects
}

// runDueLoop runs call, the promote or the schedule_fire call, as RunLoop
// describes, with cfg already checked: it is the one copy of how a leader
// loop calls, sleeps until next_due and wakes on queue.due.
func runDueLoop(ctx context.Context, cfg LoopConfig, sub subscriber, what string,
	call func(context.Context, int) (*core.MoveReply, error)) error {
	l := &loop{cfg: cfg, log: cfg.Logger.With("component", "promoter", "loop", what), wake: make(chan struct{}, 1),
		what: what, call: call}
	subject := sub.Subjects().Queue(bus.QueueDue)
	s, err := sub.Subscribe(subject, l.announced)
	if err != nil {
		return fmt.Errorf("promoter: %s loop: %w", what, err)
	}
	defer func() { _ = s.Unsubscribe() }()
	l.run(ctx)
	return nil
}

// loop is the state of one RunLoop.
type loop struct {
	cfg LoopConfig
	log *slog.Logger
	// until is when the loop next calls promote, in unix ms by cfg.Now. It is
	// math.MaxInt64 while a call is in flight, so that an announcement made
	// during the call still counts. The queue.due callback only lowers it.
	until atomic.Int64
	// wake gets a token whenever the callback lowered until.
	wake chan struct{}
	// what names the call ("promote"), and call makes it.
	what string
	call func(context.Context, int) (*core.MoveReply, error)
	// shards tracks the types core reported it could not sweep.
	shards shardWatch
}

// shardWatch logs the job types a promote or rescue reply lists in
// type_errors (core skipped them: the Redis Cluster master that holds them
// failed; the other types were swept) when that list changes: a master
// down for minutes is one warning, not one per call, and its return is
// noted. The loop goes on as after any successful call, so the healthy
// types are promoted on time; the failed ones are tried again on every
// call. Only its loop's goroutine uses it.
type shardWatch struct {
	failing string // the failing types of the last reply, joined
}

func (w *shardWatch) note(ctx context.Context, log *slog.Logger, what string, errs []core.TypeError) {
	types := make([]string, len(errs))
	for i, te := range errs {
		types[i] = te.Type
	}
	failing := strings.Join(types, ",")
	if failing == w.failing {
		return
	}
	if failing == "" {
		log.InfoContext(ctx, what+" reaches every job type again", "were_failing", w.failing)
	} else {
		log.WarnContext(ctx, what+" skipped job types whose Redis failed; the others go on", "types", types, "errors", errs)
	}
	w.failing = failing
}

// announced is the queue.due callback. It runs on the subscription's
// goroutine and does no I/O: it lowers until and pokes the loop.
func (l *loop) announced(ev *core.Event) {
	if ev.DueAt <= 0 || !lowerTo(&l.until, ev.DueAt) {
		return
	}
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// lowerTo sets v to at when at is earlier, and reports whether it did.
func lowerTo(v *atomic.Int64, at int64) bool {
	for {
		cur := v.Load()
		if at >= cur {
			return false
		}
		if v.CompareAndSwap(cur, at) {
			return true
		}
	}
}

func (l *loop) run(ctx context.Context) {
	failures := 0
	for ctx.Err() == nil {
		l.until.Store(math.MaxInt64)
		reply, err := l.promote(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			wait := retryDelay(ctx, err, l.cfg.RetryDelay)
			l.log.WarnContext(ctx, l.what+" failed; retrying",
				"err", err, "failures", failures, "retry_in", wait)
			if !l.pause(ctx, wait) {
				return
			}
			continue
		}
		if failures > 0 {
			l.log.InfoContext(ctx, l.what+" works again", "failures", failures)
			failures = 0
		}
		l.shards.note(ctx, l.log, l.what, reply.TypeErrors)
		if reply.Moved > 0 {
			l.log.DebugContext(ctx, l.what+" done", "moved", reply.Moved, "next_due", reply.NextDue)
		}
		if l.cfg.OnPromote != nil {
			l.cfg.OnPromote(reply)
		}
		if reply.Moved >= l.cfg.Limit {
			continue // a full batch: more may be due already
		}
		if !l.sleep(ctx, reply.NextDue) {
			return
		}
	}
}

// promote makes one call, bounded by CallTimeout.
func (l *loop) promote(ctx context.Context) (*core.MoveReply, error) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.CallTimeout)
	defer cancel()
	return l.call(ctx, l.cfg.Limit)
}

// sleep waits until nextDue (0: nothing waits), capped at MaxSleep, or
// earlier when queue.due announces an earlier job. It reports false when ctx
// ended.
func (l *loop) sleep(ctx context.Context, nextDue int64) bool {
	target := l.cfg.Now().Add(l.cfg.MaxSleep).UnixMilli()
	if nextDue > 0 {
		target = min(target, nextDue)
	}
	// An announcement during the call may already have lowered until.
	lowerTo(&l.until, target)
	timer := time.NewTimer(l.left())
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
			return true
		case <-l.wake:
			timer.Reset(l.left())
		}
	}
}

// left is how long until l.until, at most MaxSleep (also when the clock
// stepped back since until was set), and minSleep when it has passed.
//
// It counts from the clock's sub-millisecond time, not whole milliseconds:
// from 1000.7 ms until 1002 ms is 1.3 ms, and waking 0.7 ms late on every
// sleep would show in how late delayed jobs start.
func (l *loop) left() time.Duration {
	d := time.UnixMilli(l.until.Load()).Sub(l.cfg.Now())
	if d <= 0 {
		return minSleep // due already here, not yet at core: skew, do not spin
	}
	return min(d, l.cfg.MaxSleep)
}

// pause waits d, and reports false when ctx ended first.
func (l *loop) pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
