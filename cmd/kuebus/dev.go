package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kuebus/kuebus/bus"
	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/node"
	"github.com/kuebus/kuebus/node/redisproc"
)

// `kuebus dev` is the one-node case of `kuebus node`: its flags make a
// node config (nodeConfig), which runs through package node like any
// other, with a redis-server child the node manages unless --redis-url;
// dev's own parts are its flags, the child's password and its ready line.

// Defaults of `kuebus dev`.
const (
	devNATSListenDefault      = "127.0.0.1:4222"
	devHTTPListenDefault      = "127.0.0.1:8080"
	devDataDirDefault         = "./.kuebus"
	devRedisPrefixDefault     = "kuebus"
	devShutdownTimeoutDefault = 10 * time.Second
	// devRedisPasswordFile, in the redis-server child's data folder, holds
	// its password (mode 0600).
	devRedisPasswordFile = "password"
)

// devConfig is `kuebus dev`'s command line, checked.
type devConfig struct {
	natsListen      string
	httpListen      string
	redisURL        string // "": start a redis-server child
	redisPrefix     string
	dataDir         string // absolute
	prefix          string // NATS subject prefix, checked
	logLevel        slog.Level
	log             *slog.Logger // from --log-level and --log-format, on stderr
	shutdownTimeout time.Duration
	stallLimit      int
	retention       clusterconfig.Retention
	http            httpFlags // dev_http.go
	natsToken       string    // "": NATS takes anonymous clients (loopback only)
	natsInsecure    bool
	eventsDurable   bool // keep the events in a JetStream stream under DATA_DIR/nats
}

func parseDevFlags(e *env, args []string) (devConfig, error) {
	var cfg devConfig
	fs := e.flags()
	fs.StringVar(&cfg.natsListen, "nats-listen", devNATSListenDefault, "`HOST:PORT` the embedded NATS server listens on for clients (port 0: any free one)")
	fs.StringVar(&cfg.httpListen, "http-listen", devHTTPListenDefault, "`HOST:PORT` of the HTTP API, dashboard and /metrics (\"\": none)")
	cfg.http.register(fs)
	// The variable is read after registering: --help must not show it.
	fs.StringVar(&cfg.natsToken, "nats-token", "", "lock the embedded NATS with this `TOKEN`: every client, and every part of dev, must present it (default $"+envNATSToken+", which the other commands read too)")
	cfg.natsToken = strings.TrimSpace(os.Getenv(envNATSToken))
	fs.BoolVar(&cfg.natsInsecure, "nats-insecure", false, "allow a --nats-listen address other machines reach without --nats-token")
	fs.StringVar(&cfg.redisURL, "redis-url", "", "use the Redis at this `URL` (redis://host:6379/0) instead of starting redis-server")
	fs.StringVar(&cfg.redisPrefix, "redis-prefix", devRedisPrefixDefault, "`PREFIX` of every Redis key")
	fs.StringVar(&cfg.dataDir, "data-dir", devDataDirDefault, "`DIR` for the data of the redis-server child (in DIR/redis, with its password in DIR/redis/password)")
	fs.BoolVar(&cfg.eventsDurable, "events-durable", false, "keep every event in a JetStream stream (in DIR/nats, 24h or 1 GiB at most) that 'kuebus events --since' and the dashboard replay")
	fs.StringVar(&cfg.prefix, "prefix", "", "NATS subject `PREFIX` of the deployment, e.g. acme")
	var lf logFlags
	lf.register(fs, "text")
	fs.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", devShutdownTimeoutDefault, "how long requests in flight may run on after a stop signal, a `DURATION`")
	fs.IntVar(&cfg.stallLimit, "stall-limit", clusterconfig.StallLimitDefault, "how many times a job's lease may run out and the job go back without using an attempt (`N`, for jobs that set no stall_limit); each later stall is a failed attempt")
	retention := fs.String("retention", "", "default retention of finished jobs by type, `SPEC`: TYPE.STATE.KEY=VALUE items, comma-separated, e.g. '*.complete.age=24h,email.failed.count=100' (TYPE * for every type; STATE complete, failed or cancelled; KEY age or count); default: kept")
	if _, err := e.parse(fs, args, 0, 0); err != nil {
		return cfg, err
	}

	if err := checkListen("nats-listen", cfg.natsListen); err != nil {
		return cfg, err
	}
	// An empty token given on purpose would run dev unlocked without a word.
	if flagGiven(fs, "nats-token") && strings.TrimSpace(cfg.natsToken) == "" {
		return cfg, usagef("--nats-token: empty; leave the flag out to run without a token (loopback only)")
	}
	if host, _, _ := net.SplitHostPort(cfg.natsListen); !bus.LoopbackHost(host) && cfg.natsToken == "" && !cfg.natsInsecure {
		return cfg, usagef("--nats-listen: %q reaches other machines, and NATS would take any client: give --nats-token (or $%s), or --nats-insecure", cfg.natsListen, envNATSToken)
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
		if err := redisstore.CheckURL(cfg.redisURL); err != nil {
			return cfg, usagef("--redis-url: %v", err)
		}
	}
	var err error
	if _, err = bus.NewSubjects(cfg.prefix); err != nil {
		return cfg, usagef("--prefix: %v", err)
	}
	if cfg.log, cfg.logLevel, err = lf.logger(e.stderr); err != nil {
		return cfg, err
	}
	if cfg.shutdownTimeout <= 0 {
		return cfg, usagef("--shutdown-timeout: %s is not positive", cfg.shutdownTimeout)
	}
	if cfg.stallLimit < 1 || cfg.stallLimit > core.MaxStallLimit {
		return cfg, usagef("--stall-limit: %d is outside 1..%d (a job's own stall_limit may be 0)", cfg.stallLimit, core.MaxStallLimit)
	}
	if cfg.retention, err = clusterconfig.ParseRetention(*retention); err != nil {
		return cfg, usagef("--retention: %v", err)
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

// runDev runs the queue in one process until ctx ends: a node of one,
// with NATS embedded and, unless --redis-url, a redis-server child the node
// manages.
func runDev(ctx context.Context, e *env, args []string) error {
	cfg, err := parseDevFlags(e, args)
	if err != nil {
		return err
	}
	log := cfg.log
	// go-redis prints its own retries to stderr with the standard logger;
	// they are details of errors that reach us anyway. The setting is
	// process-wide, which this process is.
	redisstore.SetLogger(log.With("component", "go-redis"))

	nc := node.Config{Node: cfg.nodeConfig(cfg.redisURL), Logger: log, Alone: true}
	if cfg.redisURL == "" {
		// The child has a password of its own, kept beside its data, so
		// that nobody else on this machine can use it: it listens on a
		// loopback port that every local user reaches.
		dir := filepath.Join(cfg.dataDir, "redis")
		password, err := redisproc.LoadOrCreatePassword(filepath.Join(dir, devRedisPasswordFile))
		if err != nil {
			return fmt.Errorf("dev: %w", err)
		}
		nc.ManagedRedis = &redisproc.Options{Dir: dir, AppendOnly: true, Password: password, Logger: log}
	}
	err = runUntilStopped(ctx, "dev", nc, func(i node.Info) {
		info := devInfo{NATSURL: i.NATSURL, RedisURL: cmp.Or(i.RedisURL, cfg.redisURL), DataDir: cfg.dataDir, HTTPURL: i.HTTPURL}
		log.Info("kuebus dev ready", "nats_url", info.NATSURL, "redis", redactURL(info.RedisURL), "data_dir", info.DataDir, "http_url", info.HTTPURL)
		if hook, ok := ctx.Value(readyHookKey{}).(func(devInfo)); ok {
			hook(info)
		}
	})
	switch {
	case errors.Is(err, redisproc.ErrNotInstalled):
		return errors.New("dev: redis-server is not installed: install it (apt-get install -y redis-server, or brew install redis on macOS), or give --redis-url")
	case err != nil:
		return err
	}
	log.Info("kuebus dev stopped")
	return nil
}

// devNodeName is the name of dev's node: in the ring, which it leads
// alone, and of its NATS server.
const devNodeName = "dev"

// nodeConfig is the config of the node dev runs: every role (http unless
// --http-listen is ""), NATS embedded without routes, and a memberlist
// ring of one on a free loopback port, without seeds, which it leads at
// once.
func (c devConfig) nodeConfig(redisURL string) *clusterconfig.Config {
	roles := []string{clusterconfig.RoleNATS, clusterconfig.RoleCore, clusterconfig.RolePromoter}
	if c.httpListen != "" {
		roles = append(roles, clusterconfig.RoleHTTP)
	}
	return &clusterconfig.Config{
		Name:            devNodeName,
		Roles:           roles,
		Prefix:          c.prefix,
		RedisPrefix:     c.redisPrefix,
		ShutdownTimeout: c.shutdownTimeout,
		StallLimit:      c.stallLimit,
		Retention:       c.retention,
		NATS: clusterconfig.NATS{Embedded: &clusterconfig.EmbeddedNATS{
			Listen:      c.natsListen,
			ClusterName: clusterconfig.NATSClusterNameDefault,
			Token:       c.natsToken,
			Insecure:    c.natsInsecure,
		}},
		Memberlist: clusterconfig.Memberlist{Bind: "127.0.0.1:0", Preset: clusterconfig.PresetLocal},
		Redis:      clusterconfig.Redis{URL: redisURL},
		Events:     c.events(),
		HTTP:       c.http.section(c.httpListen),
		// dev logs with its own logger, which keeps --log-level exactly;
		// the config names the nearest level at or below it.
		Log: clusterconfig.Log{Level: levelName(c.logLevel), Format: "text"},
	}
}

// events is the events section of dev's node: durable with
// --events-durable, on file beside the Redis data, with the default
// limits.
func (c devConfig) events() clusterconfig.Events {
	if !c.eventsDurable {
		return clusterconfig.Events{}
	}
	return clusterconfig.Events{Durable: true, StoreDir: filepath.Join(c.dataDir, devNATSDir)}
}

// devNATSDir, in the data folder, holds JetStream's files with
// --events-durable.
const devNATSDir = "nats"

// levelName is the name of the highest of debug, info, warn and error at
// or below l ("info" for slog's info+2).
func levelName(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "error"
	case l >= slog.LevelWarn:
		return "warn"
	case l >= slog.LevelInfo:
		return "info"
	}
	return "debug"
}
