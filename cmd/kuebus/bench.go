package main

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"

	"github.com/kuebus/kuebus/bench"
	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core/redisstore"
)

// runBench runs package bench: the figures that stand beside the peer
// harness's asynq and BullMQ figures (docs/benchmarks.md).
func runBench(ctx context.Context, e *env, args []string) error {
	var cfg bench.Config
	fs := e.flags()
	fs.StringVar(&cfg.RedisURL, "redis-url", "", "use the Redis at this `URL` (default: start a throwaway redis-server); its keys outside the bench's prefix are never touched")
	fs.StringVar(&cfg.NATSURL, "nats-url", "", "drive the core and promoter serving at this NATS `URL`; needs --redis-url, that core's Redis (default: embedded NATS, core and promote loop in this process)")
	fs.StringVar(&cfg.Prefix, "prefix", "", "NATS subject `PREFIX` of the deployment, e.g. acme")
	fs.StringVar(&cfg.KeyPrefix, "key-prefix", "", "Redis key `PREFIX` of the bench's own core, and start of its job types (default kbench-<random>)")
	fs.IntVar(&cfg.N, "n", bench.NDefault, "jobs (`N`) of each enqueue phase and of the process phase")
	fs.IntVar(&cfg.Producers, "c", bench.ProducersDefault, "concurrent producers (`C`) of the enqueue_conc phase")
	fs.IntVar(&cfg.Concurrency, "concurrency", bench.ConcurrencyDefault, "the worker's concurrency (`K`) in process, latency and delayed")
	var af authFlags // for --nats-url; the bench's own NATS needs none
	af.register(fs)
	only := fs.String("only", "", "run only these phases, a comma-separated `LIST` of "+strings.Join(bench.Phases, ", ")+" (enqueue: the first three)")
	if _, err := e.parse(fs, args, 0, 0); err != nil {
		return err
	}

	switch {
	case cfg.N < 1:
		return usagef("--n: %d is not positive", cfg.N)
	case cfg.Producers < 1:
		return usagef("--c: %d is not positive", cfg.Producers)
	case cfg.Concurrency < 1:
		return usagef("--concurrency: %d is not positive", cfg.Concurrency)
	case cfg.NATSURL != "" && cfg.RedisURL == "":
		return usagef("--nats-url needs --redis-url: the Redis of the core serving there, to count its commands and delete the bench's keys")
	}
	if cfg.NATSURL != "" {
		if err := bus.CheckURL(cfg.NATSURL); err != nil {
			return usagef("--nats-url: %v", err)
		}
	}
	if cfg.RedisURL != "" {
		if err := redisstore.CheckURL(cfg.RedisURL); err != nil {
			return usagef("--redis-url: %v", err)
		}
	}
	subj, err := bus.NewSubjects(cfg.Prefix)
	if err != nil {
		return usagef("--prefix: %v", err)
	}
	if cfg.NATSURL != "" {
		if cfg.NATSOptions, err = af.options(subj); err != nil {
			return err
		}
	}
	if cfg.KeyPrefix != "" {
		if err := bench.CheckKeyPrefix(cfg.KeyPrefix); err != nil {
			return usagef("--key-prefix: %v", err)
		}
	}
	if *only != "" {
		for name := range strings.SplitSeq(*only, ",") {
			name = strings.TrimSpace(name)
			if name != bench.PhaseEnqueue && !slices.Contains(bench.Phases, name) {
				return usagef("--only: %q is not a phase (%s, or enqueue)", name, strings.Join(bench.Phases, ", "))
			}
			cfg.Only = append(cfg.Only, name)
		}
	}
	// The core, promoter and worker the bench runs log their troubles only.
	cfg.Logger = newRedactLogger(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	err = bench.Run(ctx, cfg, e.stdout)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return errors.New("bench: interrupted; the figures above are all there is")
	}
	return err
}
