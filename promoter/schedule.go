package promoter

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// Scheduler is what the schedule loop needs of core; *core.Client
// satisfies it.
type Scheduler interface {
	FireSchedules(ctx context.Context, limit int) (*core.FireReply, error)
	Subscribe(subject string, fn func(*core.Event)) (*nats.Subscription, error)
	Subjects() bus.Subjects
}

var _ Scheduler = (*core.Client)(nil)

// ScheduleConfig configures RunScheduleLoop. Its fields mean what
// LoopConfig's do, for schedule_fire calls instead of promote calls.
type ScheduleConfig struct {
	// Core is the queue whose schedules the loop fires. Required.
	Core Scheduler
	// Limit is how many schedules one call may fire, at most
	// core.MaxMoveLimit. Default LimitDefault (1000).
	Limit int
	// MaxSleep is the longest sleep between two calls. Default
	// MaxSleepDefault (1s).
	MaxSleep time.Duration
	// RetryDelay is the wait after a failed call. Default RetryDelayDefault.
	RetryDelay time.Duration
	// CallTimeout bounds each call. Default CallTimeoutDefault (1s): a
	// call fires each due schedule with one script and never waits.
	CallTimeout time.Duration
	// Logger gets failures. Default: discard.
	Logger *slog.Logger
	// Now is the clock next_due is read against. Default time.Now.
	Now func() time.Time
	// OnFire, when set, is called on the loop's goroutine after every
	// successful call with its reply. A test hook: nil in production.
	OnFire func(*core.FireReply)
}

func (c ScheduleConfig) loopConfig() LoopConfig {
	lc := LoopConfig{Limit: c.Limit, MaxSleep: c.MaxSleep, RetryDelay: c.RetryDelay,
		CallTimeout: c.CallTimeout, Logger: c.Logger, Now: c.Now}
	if c.OnFire != nil {
		lc.OnPromote = func(r *core.MoveReply) { c.OnFire(&core.FireReply{Fired: r.Moved, NextDue: r.NextDue}) }
	}
	return lc.withDefaults()
}

func (c ScheduleConfig) validate() error { return c.loopConfig().validate() }

// RunScheduleLoop fires the schedules whose tick has come until ctx ends;
// it returns nil then. It is the promote loop (see RunLoop) with
// schedule_fire for promote: it sleeps until the earliest next tick core
// reports, at most MaxSleep, and wakes early on queue.due, which core
// publishes when a schedule is set. A tick fires once however often it
// is called (one script checks the schedule's last tick), so a call lost
// or made by two leaders at once makes no second job.
func RunScheduleLoop(ctx context.Context, cfg ScheduleConfig) error {
	if cfg.Core == nil {
		panic("promoter: RunScheduleLoop needs a Core")
	}
	lc := cfg.loopConfig()
	if err := lc.validate(); err != nil {
		return err
	}
	fire := func(ctx context.Context, limit int) (*core.MoveReply, error) {
		r, err := cfg.Core.FireSchedules(ctx, limit)
		if err != nil {
			return nil, err
		}
		return &core.MoveReply{Moved: r.Fired, NextDue: r.NextDue, TypeErrors: r.TypeErrors}, nil
	}
	return runDueLoop(ctx, lc, cfg.Core, "schedule", fire)
}
