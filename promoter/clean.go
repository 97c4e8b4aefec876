package promoter

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/kuebus/kuebus/core"
)

// CleanIntervalDefault is how long the cleaner waits after a round that
// left nothing to remove. Retention is coarse (ages in minutes or days,
// counts in the thousands), so a few seconds late costs a few more kept
// jobs, while a short interval costs a scan of every type each time.
const CleanIntervalDefault = 5 * time.Second

// Cleaner is what the clean loop needs of core; *core.Client satisfies it.
type Cleaner interface {
	Clean(ctx context.Context, limit int) (*core.CleanReply, error)
}

var _ Cleaner = (*core.Client)(nil)

// CleanConfig configures RunCleanLoop.
type CleanConfig struct {
	// Core is the queue. Required.
	Core Cleaner
	// Limit is how many finished jobs of one type and state one call reads
	// at most (so removes at most). Default core.CleanLimitDefault (1000);
	// at most core.MaxMoveLimit.
	Limit int
	// Interval is the wait after a call that left nothing to remove at
	// once. Default CleanIntervalDefault (5s).
	Interval time.Duration
	// RetryDelay is the wait after a failed call. Default
	// RetryDelayDefault; a call that timed out is retried at once.
	RetryDelay time.Duration
	// CallTimeout bounds each call. Between 10ms and 1m. Default
	// CallTimeoutDefault (1s).
	CallTimeout time.Duration
	// Logger gets failures (Warn) and removals (Debug). Default: discard.
	Logger *slog.Logger
	// OnClean, when set, is called after every call that answered, with
	// its reply. A test hook: nil in production. It must not block.
	OnClean func(*core.CleanReply)
}

func (c CleanConfig) withDefaults() CleanConfig {
	c.Limit = cmp.Or(c.Limit, core.CleanLimitDefault)
	c.Interval = cmp.Or(c.Interval, CleanIntervalDefault)
	c.RetryDelay = cmp.Or(c.RetryDelay, RetryDelayDefault)
	c.CallTimeout = cmp.Or(c.CallTimeout, CallTimeoutDefault)
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	return c
}

func (c CleanConfig) validate() error {
	return checkRepeat("clean", c.Limit, c.Interval, c.RetryDelay, c.CallTimeout)
}

// RunCleanLoop asks core to remove finished jobs past their retention
// (core.clean) until ctx ends; it returns nil then. While a call says more
// (it removed jobs and stopped short of a type's newest), it calls again at
// once; otherwise it waits Interval. A failed call is retried after
// RetryDelay, one that timed out at once.
func RunCleanLoop(ctx context.Context, cfg CleanConfig) error {
	if cfg.Core == nil {
		panic("promoter: RunCleanLoop needs a Core")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	log := cfg.Logger.With("component", "cleaner")
	var shards shardWatch
	repeat(ctx, log, "clean", cfg.RetryDelay, func(ctx context.Context) (time.Duration, error) {
		reply, err := clean(ctx, cfg)
		if err != nil {
			return 0, err
		}
		shards.note(ctx, log, "clean", reply.TypeErrors)
		if cfg.OnClean != nil {
			cfg.OnClean(reply)
		}
		if reply.Removed > 0 {
			log.DebugContext(ctx, "removed finished jobs past their retention", "removed", reply.Removed)
		}
		if reply.More {
			return 0, nil
		}
		return cfg.Interval, nil
	})
	return nil
}

// clean makes one clean call, bounded by cfg.CallTimeout.
func clean(ctx context.Context, cfg CleanConfig) (*core.CleanReply, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.CallTimeout)
	defer cancel()
	return cfg.Core.Clean(ctx, cfg.Limit)
}
