package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"

	"github.com/hashicorp/memberlist"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
	"go.yaml.in/yaml/v3"

	"github.com/kuebus/kuebus/bus"
	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/promoter"
)

// envConfig is the default of `kuebus node --config`.
const envConfig = "KUEBUS_CONFIG"

// nodeInfo is what the ready line reports.
type nodeInfo struct {
	Name     string
	NATSURL  string // the client URL(s) the node's connections use
	RingAddr string // the memberlist address; "" without the promoter role
	HTTPURL  string // "" without the http role
}

type nodeReadyHookKey struct{}

// withNodeReadyHook returns a context in which `kuebus node` calls fn once
// it is ready. A test hook: unset in production, where the ready log line
// is the signal.
func withNodeReadyHook(ctx context.Context, fn func(nodeInfo)) context.Context {
	return context.WithValue(ctx, nodeReadyHookKey{}, fn)
}

// runNode runs one cluster member, with the roles its config gives, until
// ctx ends.
func runNode(ctx context.Context, e *env, args []string) error {
	fs := e.flags()
	path := fs.String("config", os.Getenv(envConfig), "YAML `FILE` of the node; KUEBUS_* variables override its fields (default $"+envConfig+"; none: the variables alone)")
	check := fs.Bool("check", false, "check the config, print it with the defaults filled in and secrets hidden, and exit")
	if _, err := e.parse(fs, args, 0, 0); err != nil {
		return err
	}
	cfg, err := clusterconfig.Load(*path, os.LookupEnv)
	if err != nil {
		return usagef("node: %v", err)
	}
	if err := checkNodeHTTP(cfg); err != nil {
		return err
	}
	if x := cfg.NATS.External; x != nil && cfg.NeedsConn() {
		subj, _ := bus.NewSubjects(cfg.Prefix)                  // validated by Load
		if _, err := externalNATSOptions(x, subj); err != nil { // the files are there
			return err
		}
	}
	if *check {
		out, err := yaml.Marshal(cfg.Redacted())
		if err != nil {
			return fmt.Errorf("node: print config: %w", err)
		}
		_, err = e.stdout.Write(out)
		return err
	}

	log := nodeLogger(cfg, e)
	redis.SetLogger(redisLogger{log.With("component", "go-redis")})
	n := &node{cfg: cfg, log: log, cmd: "node"}
	if err := n.run(ctx); err != nil {
		return err
	}
	log.Info("kuebus node stopped")
	return nil
}

// run starts the node, runs it until ctx ends or a part fails on its own,
// and shuts it down. `kuebus node` and `kuebus dev` (a node of one) both
// run through here.
func (n *node) run(ctx context.Context) error {
	// runCtx ends on a signal (ctx) or when a part fails on its own.
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	startErr := n.start(runCtx, cancelRun)
	if startErr == nil {
		<-runCtx.Done()
		n.log.Info("kuebus " + n.cmd + " stopping")
	}
	stopErr := n.shutdown()
	switch {
	case startErr != nil && ctx.Err() != nil:
		return stopErr // interrupted while starting
	case startErr != nil:
		return errors.Join(startErr, stopErr)
	case n.failure != nil:
		return errors.Join(n.failure, stopErr)
	}
	return stopErr
}

func nodeLogger(cfg *clusterconfig.Config, e *env) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Log.Level)) // validated by Load
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewJSONHandler(e.stderr, opts)
	if cfg.Log.Format == "text" {
		h = slog.NewTextHandler(e.stderr, opts)
	}
	return slog.New(h).With("node", cfg.Name)
}

// node is one run of `kuebus node` (or `kuebus dev`, a node of one): what
// start started, for shutdown to stop. A nil field was not started.
type node struct {
	cfg *clusterconfig.Config
	log *slog.Logger
	cmd string // the command that runs it, "node" or "dev": in the stopping line

	// ready, when set, is called once the node is ready, instead of the
	// node's own ready line and hook: `kuebus dev` has its own.
	ready func(context.Context, nodeInfo)
	// alone says the node is its ring's only member for good (`kuebus
	// dev`): it leads from the start, so its metrics say so before its
	// queue.leader announcement reaches them.
	alone bool

	subj bus.Subjects

	nats     *bus.Embedded
	natsURL  string
	connOpts []nats.Option // credentials for external NATS; nil with nats embedded
	rdb      redis.UniversalClient
	coreConn *nats.Conn
	svc      *service.Service
	httpConn *nats.Conn
	web      nodeHTTP // node_http.go
	ringConn *nats.Conn
	ring     *promoter.Node

	stopRing context.CancelFunc
	running  sync.WaitGroup // owns the ring's goroutine

	mu      sync.Mutex
	failure error // what ended the node early, set before runCtx is cancelled
}

// fail records why a part stopped on its own and ends the run.
func (n *node) fail(err error, cancel context.CancelFunc) {
	n.mu.Lock()
	n.failure = errors.Join(n.failure, err)
	n.mu.Unlock()
	cancel()
}

// start starts the roles in dependency order (NATS, core, HTTP, promoter);
// shutdown stops them in its own order, whatever start reached.
func (n *node) start(ctx context.Context, failed context.CancelFunc) error {
	n.subj, _ = bus.NewSubjects(n.cfg.Prefix) // validated by Load
	if err := n.startNATS(); err != nil {
		return err
	}
	if n.cfg.Has(clusterconfig.RoleCore) {
		if err := n.startCore(ctx); err != nil {
			return err
		}
	}
	info := nodeInfo{Name: n.cfg.Name, NATSURL: n.natsURL}
	if n.cfg.Has(clusterconfig.RoleHTTP) {
		// Before the promoter: the metrics then see this node's own
		// queue.leader announcement.
		var err error
		if info.HTTPURL, err = n.startHTTP(func(err error) { n.fail(err, failed) }); err != nil {
			return err
		}
	}
	if n.cfg.Has(clusterconfig.RolePromoter) {
		if err := n.startRing(ctx, failed); err != nil {
			return err
		}
		info.RingAddr = n.ring.Addr()
	}
	if n.ready != nil {
		n.ready(ctx, info)
		return nil
	}
	n.log.Info("kuebus node ready", "roles", strings.Join(n.cfg.Roles, ","), "nats_url", redactURL(info.NATSURL),
		"memberlist", info.RingAddr, "http_url", info.HTTPURL)
	if hook, ok := ctx.Value(nodeReadyHookKey{}).(func(nodeInfo)); ok {
		hook(info)
	}
	return nil
}

// startNATS starts the embedded server (nats role) or prepares the options
// that reach the external one.
func (n *node) startNATS() error {
	if e := n.cfg.NATS.Embedded; e != nil {
		var err error
		n.nats, err = bus.StartEmbedded(embeddedConfig(n.cfg.Name, e, n.subj))
		if err != nil {
			return fmt.Errorf("node: nats.embedded: %w", err)
		}
		n.natsURL = n.nats.ClientURL()
		locked := e.Token != "" || len(e.Users) > 0
		n.log.Info("embedded NATS started", "nats_url", n.natsURL, "cluster_listen", e.ClusterListen, "routes", e.Routes,
			"locked", locked, "tls", e.TLS != nil)
		if host, _, _ := net.SplitHostPort(e.Listen); e.Insecure && !locked && !clusterconfig.LoopbackHost(host) {
			n.log.Warn("embedded NATS takes anonymous clients from other machines (nats.embedded.insecure)", "listen", e.Listen)
		}
		return nil
	}
	if !n.cfg.NeedsConn() {
		return nil
	}
	x := n.cfg.NATS.External
	n.natsURL = strings.Join(x.URLs, ",")
	opts, err := externalNATSOptions(x, n.subj)
	if err != nil {
		return err
	}
	n.connOpts = opts
	return nil
}

// embeddedConfig is the embedded server's config from the node's.
func embeddedConfig(name string, e *clusterconfig.EmbeddedNATS, subj bus.Subjects) bus.EmbeddedConfig {
	cfg := bus.EmbeddedConfig{
		Listen:        e.Listen,
		ServerName:    name,
		ClusterName:   e.ClusterName,
		ClusterListen: e.ClusterListen,
		Routes:        e.Routes,
		Token:         e.Token,
		Subjects:      subj,
		RouteUser:     e.RouteUser,
		RoutePassword: e.RoutePassword,
		TLS:           serverTLS(e.TLS),
		ClusterTLS:    serverTLS(e.ClusterTLS),
	}
	for _, u := range e.Users {
		cfg.Users = append(cfg.Users, bus.User{Name: u.Name, Password: u.Password, Nkey: u.Nkey, Role: bus.Role(u.Role)})
	}
	return cfg
}

func serverTLS(t *clusterconfig.ServerTLS) *bus.TLSFiles {
	if t == nil {
		return nil
	}
	return &bus.TLSFiles{Cert: t.Cert, Key: t.Key, CA: t.CA, Verify: t.Verify}
}

// externalNATSOptions turns the credentials and TLS files into connection
// options with the user's inbox prefix, checking first that each file is
// there, by field.
func externalNATSOptions(x *clusterconfig.ExternalNATS, subj bus.Subjects) ([]nats.Option, error) {
	files := map[string]string{"nats.external.nkey_seed_file": x.NkeySeedFile, "nats.external.creds_file": x.CredsFile}
	if x.TLS != nil {
		files["nats.external.tls.ca"], files["nats.external.tls.cert"], files["nats.external.tls.key"] = x.TLS.CA, x.TLS.Cert, x.TLS.Key
	}
	for field, f := range files {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return nil, usagef("node: config: %s: %v", field, err)
		}
	}
	auth := bus.Auth{User: x.User, Password: x.Password, Token: x.Token, NkeySeedFile: x.NkeySeedFile, CredsFile: x.CredsFile}
	if t := x.TLS; t != nil {
		auth.TLSCA, auth.TLSCert, auth.TLSKey = t.CA, t.Cert, t.Key
	}
	opts, err := auth.Options(subj)
	if err != nil {
		return nil, usagef("node: config: nats.external: %v", strings.TrimPrefix(err.Error(), "bus: "))
	}
	return opts, nil
}

// connect opens one of the node's connections; each part has its own, as
// it would in a process of its own.
func (n *node) connect(part string) (*nats.Conn, error) {
	opts := append([]nats.Option{nats.DrainTimeout(n.cfg.ShutdownTimeout)}, n.connOpts...)
	url := n.natsURL
	if n.nats != nil {
		// Beside the embedded server: an in-process pipe, logged in (on
		// a locked server) as the part's role.
		url = n.nats.InProcessURL()
		opts = append(opts, n.nats.InProcessAs(partRole(part)))
	}
	nc, err := bus.Connect(url, "kuebus-node-"+n.cfg.Name+"-"+part, opts...)
	if err != nil {
		return nil, fmt.Errorf("node: %s: %w", part, err)
	}
	return nc, nil
}

// partRole is the NATS role a part of the node logs in as on its own
// locked server: core and promoter as themselves; the HTTP API, which
// serves every method behind its own authentication, as admin.
func partRole(part string) bus.Role {
	switch part {
	case "core":
		return bus.RoleCore
	case "promoter":
		return bus.RolePromoter
	}
	return bus.RoleAdmin
}

// startCore connects to Redis, checks that it answers, and serves core.
func (n *node) startCore(ctx context.Context) error {
	var err error
	var where string
	if n.rdb, where, err = redisClient(n.cfg.Redis); err != nil {
		return err
	}
	store, err := redisstore.New(redisstore.Config{Client: n.rdb, Prefix: n.cfg.RedisPrefix})
	if err != nil {
		return usagef("node: config: redis_prefix: %v", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, redisPingTimeout)
	err = store.Ping(pingCtx)
	cancel()
	if err != nil {
		if be, ok := errors.AsType[*bus.Error](err); ok {
			err = errors.New(be.Message)
		}
		return fmt.Errorf("node: Redis at %s does not answer: %w", where, err)
	}
	if n.coreConn, err = n.connect("core"); err != nil {
		return err
	}
	n.svc, err = service.New(service.Config{
		Store:           store,
		Conn:            n.coreConn,
		Subjects:        n.subj,
		Logger:          n.log,
		ShutdownTimeout: n.cfg.ShutdownTimeout,
		StallLimit:      n.cfg.StallLimit,
	})
	if err != nil {
		return fmt.Errorf("node: core: %w", err)
	}
	return nil
}

// redisClient builds the go-redis client the config describes, and says
// where it points for messages (without passwords). Every kind gets
// kuebus's options (redisstore.ApplyOptions: RESP2, no client retries).
func redisClient(r clusterconfig.Redis) (redis.UniversalClient, string, error) {
	switch {
	case r.Sentinel != nil:
		opts := &redis.FailoverOptions{
			MasterName:    r.Sentinel.Master,
			SentinelAddrs: r.Sentinel.Addrs,
			Password:      r.Sentinel.Password,
		}
		redisstore.ApplyOptions(opts)
		return redis.NewFailoverClient(opts), fmt.Sprintf("master %s of Sentinels %s", r.Sentinel.Master, strings.Join(r.Sentinel.Addrs, ",")), nil
	case r.Cluster != nil:
		opts := &redis.ClusterOptions{
			Addrs:    r.Cluster.Addrs,
			Password: r.Cluster.Password,
		}
		redisstore.ApplyOptions(opts)
		return redis.NewClusterClient(opts), "cluster " + strings.Join(r.Cluster.Addrs, ","), nil
	}
	rdb, err := redisstore.Dial(r.URL)
	if err != nil {
		return nil, "", usagef("node: config: redis.url: %v", err)
	}
	return rdb, redactURL(r.URL), nil
}

// startRing joins the promoter ring; Run leads while this node is the
// leader, until shutdown cancels it.
func (n *node) startRing(ctx context.Context, failed context.CancelFunc) error {
	var err error
	if n.ringConn, err = n.connect("promoter"); err != nil {
		return err
	}
	m := n.cfg.Memberlist
	n.ring, err = promoter.New(promoter.NodeConfig{
		Name:       n.cfg.Name,
		Bind:       m.Bind,
		Advertise:  m.Advertise,
		Seeds:      m.Seeds,
		Memberlist: memberlistPreset(m),
		SecretKey:  m.Key(),
		Conn:       n.ringConn,
		Subjects:   n.subj,
		Logger:     n.log,
	})
	if err != nil {
		return fmt.Errorf("node: memberlist: %w", err)
	}
	if host, _, _ := net.SplitHostPort(m.Bind); m.Insecure && m.SecretKey == "" && !clusterconfig.LoopbackHost(host) {
		n.log.Warn("the ring takes any member from other machines, which may then lead (memberlist.insecure)", "bind", m.Bind)
	}
	// Not runCtx: shutdown stops the ring first, in its order.
	ringCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	n.stopRing = stop
	ring := n.ring
	n.running.Go(func() {
		if err := ring.Run(ringCtx); err != nil {
			n.fail(fmt.Errorf("node: promoter: %w", err), failed)
		}
	})
	return nil
}

// memberlistPreset is the preset with the config's overrides.
func memberlistPreset(m clusterconfig.Memberlist) *memberlist.Config {
	var mc *memberlist.Config
	switch m.Preset {
	case clusterconfig.PresetLocal:
		mc = memberlist.DefaultLocalConfig()
	case clusterconfig.PresetWAN:
		mc = memberlist.DefaultWANConfig()
	default:
		mc = memberlist.DefaultLANConfig()
	}
	if m.ProbeInterval > 0 {
		mc.ProbeInterval = m.ProbeInterval
	}
	if m.ProbeTimeout > 0 {
		mc.ProbeTimeout = m.ProbeTimeout
	}
	if m.SuspicionMult > 0 {
		mc.SuspicionMult = m.SuspicionMult
	}
	return mc
}

// shutdown stops what start started. The order differs from the start
// order in one place: the promoter goes first, because a graceful leave
// is what hands leadership over at once, and nothing it needs goes away
// before it (the other nodes' cores serve its last calls). Then each step
// stops a part that nothing still running depends on.
func (n *node) shutdown() error {
	var errs []error
	// 1. The promoter: step down (its loops are cancelled and awaited),
	// leave the ring, stop serving cluster.status, shut memberlist down.
	if n.stopRing != nil {
		n.stopRing()
		n.running.Wait()
	}
	// 2. HTTP: no new requests; those in flight get shutdown_timeout.
	if err := n.stopHTTP(); err != nil {
		errs = append(errs, fmt.Errorf("node: %w", err))
	}
	// 3.–5. Core, the connections, the Redis client, the embedded NATS
	// server last (stop.go).
	lower := lowerParts{svc: n.svc, conns: []*nats.Conn{n.ringConn, n.httpConn, n.coreConn},
		rdb: n.rdb, nats: n.nats, timeout: n.cfg.ShutdownTimeout}
	errs = append(errs, lower.stop("node")...)
	return errors.Join(errs...)
}
