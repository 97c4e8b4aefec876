package promoter

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/kuebus/kuebus/core"
)

// RescueIntervalDefault is how often the rescue loop looks for expired
// leases when none is due sooner.
const RescueIntervalDefault = time.Second

// Rescuer is what the rescue loop needs of core; *core.Client satisfies it.
type Rescuer interface {
	Rescue(ctx context.Context, req *core.RescueRequest) (*core.MoveReply, error)
}

var _ Rescuer = (*core.Client)(nil)

// RescueConfig configures RunRescueLoop.
type RescueConfig struct {
	// Core is the queue. Required.
	Core Rescuer
	// Limit is how many jobs one call may move. Default LimitDefault (1000).
	Limit int
	// Interval is the longest wait between two calls. Default
	// RescueIntervalDefault (1s).
	Interval time.Duration
	// RetryDelay is the wait after a failed call. Default RetryDelayDefault.
	// A call that timed out is retried at once instead: it has waited
	// CallTimeout already.
	RetryDelay time.Duration
	// CallTimeout bounds each rescue call, as LoopConfig.CallTimeout does
	// each promote call, so that a call lost with a dying core delays the
	// rescue of expired leases by about CallTimeout. Between 10ms and 1m.
	// Default CallTimeoutDefault (1s).
	CallTimeout time.Duration
	// Logger gets failures (Warn) and rescues (Info). Default: discard.
	Logger *slog.Logger
	// Now is the clock next_due is read against. Default time.Now.
	Now func() time.Time
}

func (c RescueConfig) withDefaults() RescueConfig {
	c.Limit = cmp.Or(c.Limit, LimitDefault)
	c.Interval = cmp.Or(c.Interval, RescueIntervalDefault)
	c.RetryDelay = cmp.Or(c.RetryDelay, RetryDelayDefault)
	c.CallTimeout = cmp.Or(c.CallTimeout, CallTimeoutDefault)
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

func (c RescueConfig) validate() error {
	return checkRepeat("rescue", c.Limit, c.Interval, c.RetryDelay, c.CallTimeout)
}

// RunRescueLoop asks core to rescue jobs whose lease ran out (their worker
// died or hung past the ttl) until ctx ends; it returns nil then. After each
// call it waits until the earliest lease still running expires (core's
// next_due), at least 1ms and at most Interval: leases that workers extend
// move later, so waking at the old expiry costs one empty call at most. A
// failed call is retried after RetryDelay, one that timed out (after
// CallTimeout) at once.
func RunRescueLoop(ctx context.Context, cfg RescueConfig) error {
	if cfg.Core == nil {
		panic("promoter: RunRescueLoop needs a Core")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	log := cfg.Logger.With("component", "rescuer")
	var shards shardWatch
	repeat(ctx, log, "rescue", cfg.RetryDelay, func(ctx context.Context) (time.Duration, error) {
		reply, err := rescue(ctx, cfg)
		if err != nil {
			return 0, err
		}
		shards.note(ctx, log, "rescue", reply.TypeErrors)
		switch {
		case reply.Moved >= cfg.Limit:
			return 0, nil // a full batch: more may be expired already
		}
		if reply.Moved > 0 {
			log.InfoContext(ctx, "rescued jobs whose lease ran out", "moved", reply.Moved)
		}
		if reply.NextDue > 0 {
			until := time.Duration(reply.NextDue-cfg.Now().UnixMilli()) * time.Millisecond
			return max(min(until, cfg.Interval), minSleep), nil
		}
		return cfg.Interval, nil
	})
	return nil
}

// rescue makes one rescue call, bounded by cfg.CallTimeout.
func rescue(ctx context.Context, cfg RescueConfig) (*core.MoveReply, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.CallTimeout)
	defer cancel()
	return cfg.Core.Rescue(ctx, &core.RescueRequest{Limit: cfg.Limit})
}
