package bench

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
)

// Defaults of Config.
const (
	NDefault               = 100_000
	ProducersDefault       = 16
	ConcurrencyDefault     = 64
	BulkSizeDefault        = 1000
	LatencyDurationDefault = 5 * time.Second
	LatencyIntervalDefault = time.Millisecond
	DelayedJobsDefault     = 1000
	PolicyGroupsDefault    = 1000
	DelayedStepDefault     = 2 * time.Millisecond
	PhaseTimeoutDefault    = 2 * time.Minute
	// MaxBulkSize is core's default limit of jobs per create_bulk.
	MaxBulkSize = 1000
	// KeyPrefixBase starts the default key prefix: kbench-<12 hex digits>.
	KeyPrefixBase = "kbench"
)

// The phases, in the order they run.
const (
	PhaseEnqueueSeq  = "enqueue_seq"
	PhaseEnqueueConc = "enqueue_conc"
	PhaseEnqueueBulk = "enqueue_bulk"
	PhaseProcess     = "process"
	// PhaseProcessPolicy is process with a type policy that never binds
	// and the jobs spread over PolicyGroups groups (docs/policy.md).
	PhaseProcessPolicy = "process_policy"
	PhaseLatency       = "latency"
	PhaseDelayed       = "delayed"
	// PhaseEnqueue in Config.Only stands for the three enqueue phases.
	PhaseEnqueue = "enqueue"
)

// Phases lists the phase names Config.Only accepts, in running order.
var Phases = []string{PhaseEnqueueSeq, PhaseEnqueueConc, PhaseEnqueueBulk, PhaseProcess, PhaseProcessPolicy, PhaseLatency, PhaseDelayed}

// Config configures Run. The zero value runs every phase with the peers'
// sizes against a Redis and a queue of the bench's own.
type Config struct {
	// RedisURL is the Redis to use (redis://host:port/db). Default "": start
	// a throwaway redis-server and stop it at the end. Required with NATSURL:
	// the Redis of the core that serves there.
	RedisURL string
	// NATSURL is the NATS of a running deployment whose core (and promoter)
	// the bench drives. Default "": embedded NATS, core, promote and rescue
	// loops in this process.
	NATSURL string
	// NATSOptions are added to every connection to NATSURL: credentials
	// and TLS (bus.Auth.Options). Default: none.
	NATSOptions []nats.Option
	// Prefix is the NATS subject prefix of the deployment. Default: none.
	Prefix string
	// KeyPrefix is the Redis key prefix of the bench's own core, and starts
	// its job types against a running deployment. Letters, digits, '-' and
	// '_'. Default "kbench-<12 random hex digits>".
	KeyPrefix string
	// N is the number of jobs of each enqueue phase and of process. Default
	// 100000.
	N int
	// Producers is how many producers enqueue at once in enqueue_conc.
	// Default 16.
	Producers int
	// Concurrency is the worker's concurrency in process, latency and
	// delayed. Default 64.
	Concurrency int
	// BulkSize is how many jobs one create_bulk carries. Default 1000.
	BulkSize int
	// Only selects phases by name (see Phases; "enqueue" is all three
	// enqueue phases). Default: all.
	Only []string
	// LatencyDuration is how long the latency phase creates jobs. Default 5s.
	LatencyDuration time.Duration
	// LatencyInterval is the time between two creates of the latency phase.
	// Default 1ms.
	LatencyInterval time.Duration
	// PolicyGroups is how many groups the process_policy phase spreads its
	// jobs over. Default 1000.
	PolicyGroups int
	// DelayedJobs is how many jobs the delayed phase creates. Default 1000.
	DelayedJobs int
	// DelayedStep is the delay of the first delayed job; job i gets (i+1)
	// steps. Default 2ms.
	DelayedStep time.Duration
	// PhaseTimeout bounds each phase; a phase that runs out reports what it
	// measured so far with a warning. Default 2m.
	PhaseTimeout time.Duration
	// Logger gets the warnings of the core, promoter and worker the bench
	// runs. Default: discard.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	c.N = cmp.Or(c.N, NDefault)
	c.Producers = cmp.Or(c.Producers, ProducersDefault)
	c.Concurrency = cmp.Or(c.Concurrency, ConcurrencyDefault)
	c.BulkSize = cmp.Or(c.BulkSize, BulkSizeDefault)
	c.LatencyDuration = cmp.Or(c.LatencyDuration, LatencyDurationDefault)
	c.LatencyInterval = cmp.Or(c.LatencyInterval, LatencyIntervalDefault)
	c.DelayedJobs = cmp.Or(c.DelayedJobs, DelayedJobsDefault)
	c.PolicyGroups = cmp.Or(c.PolicyGroups, PolicyGroupsDefault)
	c.DelayedStep = cmp.Or(c.DelayedStep, DelayedStepDefault)
	c.PhaseTimeout = cmp.Or(c.PhaseTimeout, PhaseTimeoutDefault)
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	if c.KeyPrefix == "" {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		c.KeyPrefix = KeyPrefixBase + "-" + hex.EncodeToString(b)
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.N < 1:
		return fmt.Errorf("bench: n %d is not positive", c.N)
	case c.Producers < 1:
		return fmt.Errorf("bench: producers %d is not positive", c.Producers)
	case c.Concurrency < 1:
		return fmt.Errorf("bench: concurrency %d is not positive", c.Concurrency)
	case c.BulkSize < 1 || c.BulkSize > MaxBulkSize:
		return fmt.Errorf("bench: bulk size %d is outside 1..%d", c.BulkSize, MaxBulkSize)
	case c.LatencyDuration < 0 || c.LatencyInterval < 0 || c.DelayedStep < time.Millisecond || c.DelayedJobs < 1 || c.PhaseTimeout < 0:
		return errors.New("bench: latency duration and interval, delayed step and count, phase timeout: out of range")
	case c.NATSURL != "" && c.RedisURL == "":
		return errors.New("bench: a NATS URL needs the Redis URL of the core that serves there, to count its commands and delete the bench's keys")
	}
	if err := CheckKeyPrefix(c.KeyPrefix); err != nil {
		return err
	}
	if _, err := bus.NewSubjects(c.Prefix); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	_, err := selected(c.Only)
	return err
}

// CheckKeyPrefix checks a key prefix: it becomes part of Redis key patterns
// and job types, so only letters, digits, '-' and '_' are allowed.
func CheckKeyPrefix(p string) error {
	if p == "" || len(p) > 64 {
		return fmt.Errorf("bench: key prefix %q must have 1 to 64 characters", p)
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("bench: key prefix %q: only letters, digits, '-' and '_' are allowed", p)
		}
	}
	return nil
}

// selected turns Config.Only into the set of phases to run.
func selected(only []string) (map[string]bool, error) {
	run := map[string]bool{}
	if len(only) == 0 {
		for _, p := range Phases {
			run[p] = true
		}
		return run, nil
	}
	for _, name := range only {
		name = strings.TrimSpace(name)
		switch {
		case name == PhaseEnqueue:
			run[PhaseEnqueueSeq], run[PhaseEnqueueConc], run[PhaseEnqueueBulk] = true, true, true
		case slices.Contains(Phases, name):
			run[name] = true
		default:
			return nil, fmt.Errorf("bench: %q is not a phase (%s, or enqueue for the first three)", name, strings.Join(Phases, ", "))
		}
	}
	return run, nil
}

// bench is one run: the config, what it runs against, and the report.
type bench struct {
	cfg Config
	st  *stack
	r   *report
}

// Run runs the selected phases and writes their figures to out. It sets up
// what it runs against first (see the package doc) and takes it down at the
// end, deleting the bench's keys, also when a phase fails or ctx ends.
func Run(ctx context.Context, cfg Config, out io.Writer) (err error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	run, _ := selected(cfg.Only)
	st, err := start(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.stop()) }()

	b := &bench{cfg: cfg, st: st, r: &report{w: out}}
	b.header(ctx)
	phases := []struct {
		name string
		fn   func(context.Context) error
	}{
		{PhaseEnqueueSeq, b.enqueueSeq},
		{PhaseEnqueueConc, b.enqueueConc},
		{PhaseEnqueueBulk, b.enqueueBulk},
		{PhaseProcess, b.process},
		{PhaseProcessPolicy, b.processPolicy},
		{PhaseLatency, b.latency},
		{PhaseDelayed, b.delayed},
	}
	for _, p := range phases {
		if !run[p.name] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		err := p.fn(ctx)
		// Each phase starts from no keys of the bench's, whatever the last
		// one left behind.
		err = errors.Join(err, st.keys.clean(context.WithoutCancel(ctx), false))
		if err != nil {
			return fmt.Errorf("bench: %s: %w", p.name, err)
		}
		if b.r.err != nil {
			return fmt.Errorf("bench: write output: %w", b.r.err)
		}
	}
	return nil
}

// header prints what the figures were taken on.
func (b *bench) header(ctx context.Context) {
	c := b.cfg
	b.r.comment("kuebus bench: n=%d c=%d concurrency=%d bulk=%d latency=%s/%s delayed=%dx%s",
		c.N, c.Producers, c.Concurrency, c.BulkSize, c.LatencyInterval, c.LatencyDuration, c.DelayedJobs, c.DelayedStep)
	b.r.comment("machine: nproc=%d gomaxprocs=%d %s %s/%s%s", runtime.NumCPU(), runtime.GOMAXPROCS(0),
		runtime.Version(), runtime.GOOS, runtime.GOARCH, cpuModel())
	if rev := revision(); rev != "" {
		b.r.comment("kuebus revision %s", rev)
	}
	if v := b.st.keys.redisVersion(ctx); v != "" {
		b.r.comment("redis_version %s at %s (%s)", v, b.st.redisAddr, b.st.redisOrigin)
	}
	if b.st.own {
		b.r.comment("core: in this process (embedded NATS, core, promote and rescue loops), key prefix %s", c.KeyPrefix)
	} else {
		b.r.comment("core: the deployment at %s, job types %s-*", b.st.natsAddr, c.KeyPrefix)
	}
}

// cpuModel is " <model name>" from /proc/cpuinfo, or "" where there is none.
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return " " + strings.TrimSpace(v)
		}
	}
	return ""
}

// revision is the VCS revision the binary was built from, "" when unknown
// (go test, go run outside a checkout).
func revision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = " (modified)"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return rev + modified
}

// report writes the bench's lines and keeps the first write error.
type report struct {
	w   io.Writer
	err error
}

// value prints "name value unit" with prec decimals.
func (r *report) value(name string, v float64, prec int, unit string) {
	r.printf("%s %s %s\n", name, strconv.FormatFloat(v, 'f', prec, 64), unit)
}

// comment prints a "# ..." line.
func (r *report) comment(format string, args ...any) {
	r.printf("# "+format+"\n", args...)
}

func (r *report) printf(format string, args ...any) {
	if r.err == nil {
		_, r.err = fmt.Fprintf(r.w, format, args...)
	}
}
