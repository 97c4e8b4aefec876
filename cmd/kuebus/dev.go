package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisproc"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/promoter"
)

// Defaults of `kuebus dev`.
const (
	devNATSListenDefault      = "127.0.0.1:4222"
	devHTTPListenDefault      = "127.0.0.1:8080"
	devDataDirDefault         = "./.kuebus"
	devRedisPrefixDefault     = "kuebus"
	devShutdownTimeoutDefault = 10 * time.Second
	// redisPingTimeout bounds the check that Redis answers at start.
	redisPingTimeout = 5 * time.Second
)

// devConfig is `kuebus dev`'s command line, checked.
type devConfig struct {
	natsListen      string
	httpListen      string
	redisURL        string // "": start a redis-server child
	redisPrefix     string
	dataDir         string // absolute
	subjects        bus.Subjects
	logLevel        slog.Level
	shutdownTimeout time.Duration
	http            httpFlags // dev_http.go
}

func parseDevFlags(e *env, args []string) (devConfig, error) {
	var cfg devConfig
	fs := e.flags()
	fs.StringVar(&cfg.natsListen, "nats-listen", devNATSListenDefault, "`HOST:PORT` the embedded NATS server listens on for clients (port 0: any free one)")
	fs.StringVar(&cfg.httpListen, "http-listen", devHTTPListenDefault, "`HOST:PORT` of the HTTP API, dashboard and /metrics (\"\": none)")
	cfg.http.register(fs)
	fs.StringVar(&cfg.redisURL, "redis-url", "", "use the Redis at this `URL` (redis://host:6379/0) instead of starting redis-server")
	fs.StringVar(&cfg.redisPrefix, "redis-prefix", devRedisPrefixDefault, "`PREFIX` of every Redis key")
	fs.StringVar(&cfg.dataDir, "data-dir", devDataDirDefault, "`DIR` for the data of the redis-server child (in DIR/redis)")
	prefix := fs.String("prefix", "", "NATS subject `PREFIX` of the deployment, e.g. acme")
	level := fs.String("log-level", "info", "log `LEVEL`: debug, info, warn or error")
	fs.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", devShutdownTimeoutDefault, "how long requests in flight may run on after a stop signal, a `DURATION`")
	if _, err := e.parse(fs, args, 0, 0); err != nil {
		return cfg, err
	}

	if err := checkListen("nats-listen", cfg.natsListen); err != nil {
		return cfg, err
	}
	if cfg.httpListen != "" {
		if err := checkListen("http-listen", cfg.httpListen); err != nil {
			return cfg, err
		}
	}
	if err := cfg.http.check(cfg.httpListen); err != nil {
		return cfg, err
	}
	if cfg.redisURL != "" {
		if _, err := redis.ParseURL(cfg.redisURL); err != nil {
			return cfg, usagef("--redis-url: %v", err)
		}
	}
	var err error
	if cfg.subjects, err = bus.NewSubjects(*prefix); err != nil {
		return cfg, usagef("--prefix: %v", err)
	}
	if err := cfg.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return cfg, usagef("--log-level: %q is not debug, info, warn or error", *level)
	}
	if cfg.shutdownTimeout <= 0 {
		return cfg, usagef("--shutdown-timeout: %s is not positive", cfg.shutdownTimeout)
	}
	if cfg.dataDir, err = filepath.Abs(cfg.dataDir); err != nil {
		return cfg, usagef("--data-dir: %v", err)
	}
	return cfg, nil
}

// devInfo is what the ready line reports.
type devInfo struct {
	NATSURL  string // the embedded server's client URL
	RedisURL string // not redacted
	DataDir  string
	HTTPURL  string // the dashboard; "" when --http-listen is empty
}

type readyHookKey struct{}

// withReadyHook returns a context in which `kuebus dev` calls fn once it is
// ready, with what it logs then. A test hook: unset in production, where the
// ready log line is the signal.
func withReadyHook(ctx context.Context, fn func(devInfo)) context.Context {
	return context.WithValue(ctx, readyHookKey{}, fn)
}

// runDev runs the queue in one process until ctx ends.
func runDev(ctx context.Context, e *env, args []string) error {
	cfg, err := parseDevFlags(e, args)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	// go-redis prints its own retries to stderr with the standard logger;
	// they are details of errors that reach us anyway. The setting is
	// process-wide, which this process is.
	redis.SetLogger(redisLogger{log.With("component", "go-redis")})

	// runCtx ends on a signal (ctx) or when the promote loop fails, as an
	// errgroup's context would.
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	d := &dev{cfg: cfg, log: log}
	startErr := d.start(runCtx, cancelRun)
	if startErr == nil {
		<-runCtx.Done()
		log.Info("kuebus dev stopping")
	}
	stopErr := d.shutdown()
	switch {
	case startErr != nil && ctx.Err() != nil:
		// Interrupted while starting: what was started is stopped again.
		return stopErr
	case startErr != nil:
		return errors.Join(startErr, stopErr)
	case d.loopErr != nil:
		return errors.Join(fmt.Errorf("dev: promote loop: %w", d.loopErr), stopErr)
	case stopErr != nil:
		return stopErr
	}
	log.Info("kuebus dev stopped")
	return nil
}

// dev is one run of `kuebus dev`: what start started, for shutdown to stop.
// A nil field was not started.
type dev struct {
	cfg devConfig
	log *slog.Logger

	nats     *bus.Embedded
	redis    *redisproc.Server // only when we started it
	rdb      *redis.Client
	coreConn *nats.Conn
	svc      *core.Service
	loopConn *nats.Conn
	httpConn *nats.Conn
	web      devHTTP // dev_http.go

	stopLoop context.CancelFunc
	loop     sync.WaitGroup // owns the promote loop's goroutine
	loopErr  error          // set by that goroutine before it ends
}

// start starts everything in dependency order; shutdown stops it in the
// reverse order, whatever start reached.
func (d *dev) start(ctx context.Context, failed context.CancelFunc) error {
	var err error
	if d.nats, err = bus.StartEmbedded(bus.EmbeddedConfig{Listen: d.cfg.natsListen}); err != nil {
		return fmt.Errorf("dev: %w", err)
	}
	natsURL := d.nats.ClientURL()

	redisURL := d.cfg.redisURL
	if redisURL == "" {
		d.redis, err = redisproc.Start(ctx, redisproc.Options{
			Dir:        filepath.Join(d.cfg.dataDir, "redis"),
			AppendOnly: true,
			Logger:     d.log,
		})
		if errors.Is(err, redisproc.ErrNotInstalled) {
			return errors.New("dev: redis-server is not installed: install it (apt-get install -y redis-server, or brew install redis on macOS), or give --redis-url")
		}
		if err != nil {
			return fmt.Errorf("dev: %w", err)
		}
		redisURL = d.redis.URL()
	}
	rdb, err := redisstore.Dial(redisURL)
	if err != nil {
		return usagef("--redis-url: %v", err)
	}
	d.rdb = rdb
	store, err := redisstore.New(redisstore.Config{Client: d.rdb, Prefix: d.cfg.redisPrefix})
	if err != nil {
		return usagef("--redis-prefix: %v", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, redisPingTimeout)
	err = store.Ping(pingCtx)
	cancel()
	if err != nil {
		if be, ok := errors.AsType[*bus.Error](err); ok {
			err = errors.New(be.Message)
		}
		return fmt.Errorf("dev: Redis at %s does not answer: %w", redactURL(redisURL), err)
	}

	// Core and the promote loop each have their own connection, as they
	// would in separate processes.
	// Core and the loops sit beside the embedded server: in-process
	// connections spare every message the loopback's system calls.
	if d.coreConn, err = d.connect(natsURL, "kuebus-dev-core", d.nats.InProcess()); err != nil {
		return err
	}
	d.svc, err = core.NewService(core.Config{
		Store:           store,
		Conn:            d.coreConn,
		Subjects:        d.cfg.subjects,
		Logger:          d.log,
		ShutdownTimeout: d.cfg.shutdownTimeout,
	})
	if err != nil {
		return fmt.Errorf("dev: %w", err)
	}
	if d.loopConn, err = d.connect(natsURL, "kuebus-dev-promoter", d.nats.InProcess()); err != nil {
		return err
	}
	client, err := core.NewClient(d.loopConn, &core.ClientOptions{Prefix: d.cfg.subjects.Prefix()})
	if err != nil {
		return fmt.Errorf("dev: %w", err)
	}
	loopCtx, stopLoop := context.WithCancel(ctx)
	d.stopLoop = stopLoop
	d.loop.Go(func() {
		if err := promoter.RunLoop(loopCtx, promoter.LoopConfig{Core: client, Logger: d.log}); err != nil {
			d.loopErr = err
			failed()
		}
	})
	// Until the cluster issue's leader runs it, dev rescues expired leases
	// itself, beside promoting.
	d.loop.Go(func() {
		_ = promoter.RunRescueLoop(loopCtx, promoter.RescueConfig{Core: client, Logger: d.log})
	})

	// --- HTTP API, dashboard and metrics (dev_http.go) ---
	httpURL, err := d.startHTTP(natsURL, failed)
	if err != nil {
		return err
	}
	// --- end HTTP ---

	info := devInfo{NATSURL: natsURL, RedisURL: redisURL, DataDir: d.cfg.dataDir, HTTPURL: httpURL}
	d.log.Info("kuebus dev ready", "nats_url", info.NATSURL, "redis", redactURL(info.RedisURL), "data_dir", info.DataDir, "http_url", info.HTTPURL)
	if hook, ok := ctx.Value(readyHookKey{}).(func(devInfo)); ok {
		hook(info)
	}
	return nil
}

func (d *dev) connect(url, name string, opts ...nats.Option) (*nats.Conn, error) {
	nc, err := bus.Connect(url, name, append([]nats.Option{nats.DrainTimeout(d.cfg.shutdownTimeout)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("dev: %w", err)
	}
	return nc, nil
}

// shutdown stops what start started, in a fixed order (STYLE §6): each step
// stops a part that nothing still running depends on.
func (d *dev) shutdown() error {
	var errs []error
	// 0. HTTP (dev_http.go): a client of core, like the loop. Event streams
	// end at once; other requests get --shutdown-timeout.
	if err := d.stopHTTP(); err != nil {
		errs = append(errs, fmt.Errorf("dev: %w", err))
	}
	// 1. The promote loop: it is a client of core. Cancel it and wait until
	// its goroutine has returned.
	if d.stopLoop != nil {
		d.stopLoop()
		d.loop.Wait()
	}
	// 2.–6. Core, the connections, the Redis client, the redis-server
	// child, embedded NATS last (stop.go).
	lower := lowerParts{svc: d.svc, conns: []*nats.Conn{d.httpConn, d.loopConn, d.coreConn},
		redis: d.redis, nats: d.nats, timeout: d.cfg.shutdownTimeout}
	if d.rdb != nil {
		lower.rdb = d.rdb
	}
	errs = append(errs, lower.stop("dev")...)
	return errors.Join(errs...)
}

// drain drains nc and waits until it is closed, which nats.go does at the
// latest after the DrainTimeout nc was connected with.
func drain(nc *nats.Conn) error {
	if nc.IsClosed() {
		return nil
	}
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	if err := nc.Drain(); err != nil {
		nc.Close()
		return fmt.Errorf("drain NATS connection: %w", err)
	}
	<-closed
	if err := nc.LastError(); errors.Is(err, nats.ErrDrainTimeout) {
		return fmt.Errorf("drain NATS connection: %w", err)
	}
	return nil
}

// redisLogger sends go-redis's log lines to slog at debug level.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, args ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, args...))
}
