package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// config is the run's flags.
type config struct {
	kuebus, redisServer, self, dir string
	appendfsync                    string
	scenarios                      []string

	producers, rate, concurrency int
	work, ttl, delay             time.Duration

	warmup, after, stall, restartAfter, drain time.Duration

	kills     int           // kill-workers: how many kills
	killEvery time.Duration // kill-workers: the wait after each
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// runMain runs the suite, or a worker process, and returns the exit code.
func runMain(ctx context.Context, args []string) int {
	if len(args) > 0 && args[0] == "worker" {
		if err := runWorker(ctx, args[1:]); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "kuebus-chaos:", err)
			return 1
		}
		return 0
	}
	cfg, err := parseFlags(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kuebus-chaos:", err)
		return 2
	}
	if err := notePid(cfg.dir); err != nil {
		fmt.Fprintln(os.Stderr, "kuebus-chaos:", err)
		return 2
	}
	start := time.Now()
	fmt.Printf("kuebus-chaos: %d producers at %d creates/s, %d workers × %d handlers of %s, ttl %s, delayed jobs %s, appendfsync %s\n",
		cfg.producers, cfg.rate, 3, cfg.concurrency, cfg.work, cfg.ttl, cfg.delay, cfg.appendfsync)
	var results []result
	for _, sc := range scenarios {
		if !slices.Contains(cfg.scenarios, sc.name) {
			continue
		}
		r := runScenario(ctx, cfg, sc)
		r.print(os.Stdout)
		results = append(results, r)
		if ctx.Err() != nil {
			break
		}
	}
	summary(os.Stdout, results)
	fmt.Printf("\nkuebus-chaos: %d scenarios in %s\n", len(results), time.Since(start).Round(time.Second))
	code := 0
	for _, r := range results {
		switch {
		case r.err != nil || ctx.Err() != nil:
			code = max(code, 2)
		case r.bad():
			code = max(code, 1)
		}
	}
	return code
}

func parseFlags(args []string) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("kuebus-chaos", flag.ContinueOnError)
	fs.StringVar(&cfg.kuebus, "kuebus", "", "the kuebus `BINARY` to run nodes from (required)")
	fs.StringVar(&cfg.dir, "dir", "", "`DIR` for configs, logs, records and Redis's data (required)")
	fs.StringVar(&cfg.redisServer, "redis-server", "redis-server", "the redis-server `BINARY`")
	fs.StringVar(&cfg.appendfsync, "appendfsync", "always", "Redis appendfsync: always or everysec")
	names := fs.String("scenario", "", "comma-separated scenarios to run (default all: "+scenarioNames(false)+")")
	short := fs.Bool("short", false, "the short form for CI: shorter load and faults, and without "+longNames())
	fs.IntVar(&cfg.producers, "producers", 4, "producer goroutines")
	fs.IntVar(&cfg.rate, "rate", 300, "creates a second, all producers together")
	fs.IntVar(&cfg.concurrency, "concurrency", 8, "handlers at once in each of the 3 worker processes")
	fs.DurationVar(&cfg.work, "work", 50*time.Millisecond, "how long each job's handler works")
	fs.DurationVar(&cfg.ttl, "ttl", 2*time.Second, "each job's ttl: how soon a dead worker's job comes back")
	fs.DurationVar(&cfg.delay, "delay", time.Second, "the delay of one job in four")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.warmup, cfg.after, cfg.stall, cfg.restartAfter, cfg.drain = 5*time.Second, 10*time.Second, 8*time.Second, 2*time.Second, 40*time.Second
	cfg.kills, cfg.killEvery = 20, 4*time.Second
	if *short {
		// The stall still outlasts go-redis's 3 s read timeout.
		cfg.warmup, cfg.after, cfg.stall, cfg.restartAfter, cfg.drain = 3*time.Second, 4*time.Second, 5*time.Second, time.Second, 30*time.Second
		cfg.kills = 6
	}
	cfg.scenarios = strings.Split(cmp.Or(*names, scenarioNames(*short)), ",")
	return cfg, cfg.check()
}

func (cfg *config) check() error {
	switch {
	case cfg.kuebus == "":
		return errors.New("--kuebus: required: the kuebus binary")
	case cfg.dir == "":
		return errors.New("--dir: required: a folder for the run")
	case cfg.appendfsync != "always" && cfg.appendfsync != "everysec":
		return fmt.Errorf("--appendfsync %q: use always or everysec", cfg.appendfsync)
	case cfg.producers < 1 || cfg.rate < 1 || cfg.concurrency < 1:
		return fmt.Errorf("--producers %d, --rate %d, --concurrency %d: each must be at least 1", cfg.producers, cfg.rate, cfg.concurrency)
	case cfg.ttl < time.Second:
		return fmt.Errorf("--ttl %s: at least 1s", cfg.ttl)
	}
	for _, name := range cfg.scenarios {
		if !slices.ContainsFunc(scenarios, func(sc scenario) bool { return sc.name == name }) {
			return fmt.Errorf("--scenario %q: no such scenario (use %s)", name, scenarioNames(false))
		}
	}
	var err error
	if cfg.self, err = os.Executable(); err != nil {
		return fmt.Errorf("this binary's path: %w", err)
	}
	if cfg.redisServer, err = exec.LookPath(cfg.redisServer); err != nil {
		return fmt.Errorf("--redis-server: %w", err)
	}
	return nil
}

// scenarioNames lists the scenarios, without the long ones when short.
func scenarioNames(short bool) string {
	var names []string
	for _, sc := range scenarios {
		if !short || !sc.long {
			names = append(names, sc.name)
		}
	}
	return strings.Join(names, ",")
}

// longNames lists the scenarios --short leaves out.
func longNames() string {
	var names []string
	for _, sc := range scenarios {
		if sc.long {
			names = append(names, sc.name)
		}
	}
	return strings.Join(names, ",")
}

// notePid writes the driver's own pid to dir/pids, as procs does for each
// child: scripts/chaos.sh kills what that file lists, so a driver whose
// parent was killed does not run on alone.
func notePid(dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, "pids"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pid file: %w", err)
	}
	_, err = fmt.Fprintf(f, "%d driver\n", os.Getpid())
	return errors.Join(err, f.Close())
}
