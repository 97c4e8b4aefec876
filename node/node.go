package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/embedded"
	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/redisproc"
	"github.com/kuebus/kuebus/promoter"
)

// redisPingTimeout bounds the check that Redis answers at start.
const redisPingTimeout = 5 * time.Second

// Info is where a started node serves, what the ready lines report.
type Info struct {
	Name     string
	NATSURL  string // the client URL(s) the node's connections use
	RedisURL string // the managed redis-server's URL, with its password; "" without ManagedRedis
	RingAddr string // the memberlist address; "" without the promoter role
	HTTPURL  string // "" without the http role
}

// Node is a running node: what Start started, for Stop to stop. A nil
// field was not started.
type Node struct {
	cfg  *clusterconfig.Config // the copy, with defaults
	log  *slog.Logger
	opts Config
	subj bus.Subjects
	info Info

	redisChild *redisproc.Server
	nats       *embedded.Server
	connOpts   []nats.Option // credentials for external NATS; nil with nats embedded
	redis      *redisstore.Redis
	store      *redisstore.Store
	coreConn   *nats.Conn
	svc        *service.Service
	httpConn   *nats.Conn
	web        web // http.go
	ringConn   *nats.Conn
	ring       *promoter.Node
	stopRing   context.CancelFunc
	running    sync.WaitGroup // owns the ring's goroutine
	stopRaise  context.CancelFunc
	raising    sync.WaitGroup // owns raiseReplicas (events.go)

	failed   chan struct{} // closed by the first fail
	mu       sync.Mutex
	failure  error // what ended the node early, set before failed is closed
	stopOnce sync.Once
	stopErr  error
}

// Start starts the node's parts in dependency order: the managed
// redis-server, NATS (embedded, or the options that reach the external
// one), core, HTTP, the promoter. It returns once every part serves.
//
// Start returns the Node even when it fails: Stop then stops what it
// reached, and must be called either way. Errors the config caused are
// *ConfigError; a redis-server that is not installed is
// redisproc.ErrNotInstalled.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if cfg.Node == nil {
		panic("node: Start needs Config.Node")
	}
	n := &Node{cfg: cloneConfig(cfg.Node), opts: cfg, failed: make(chan struct{})}
	n.cfg.FillDefaults()
	n.log = cfg.Logger
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	n.info.Name = n.cfg.Name
	return n, n.start(ctx)
}

// cloneConfig copies c deep enough that filling its defaults leaves c as
// it was.
func cloneConfig(c *clusterconfig.Config) *clusterconfig.Config {
	cp := *c
	if e := c.NATS.Embedded; e != nil {
		x := *e
		cp.NATS.Embedded = &x
	}
	return &cp
}

func (n *Node) start(ctx context.Context) error {
	if n.opts.ManagedRedis != nil {
		if n.cfg.Redis != (clusterconfig.Redis{}) {
			return configErrorf("config: redis: the node manages its own redis-server: leave the section empty")
		}
		child, err := redisproc.Start(ctx, *n.opts.ManagedRedis)
		if err != nil {
			return fmt.Errorf("node: %w", err)
		}
		n.redisChild = child
		n.info.RedisURL = child.URL()
		n.cfg.Redis.URL = child.URL()
	}
	if err := Check(n.cfg); err != nil {
		return err
	}
	n.subj, _ = bus.NewSubjects(n.cfg.Prefix) // checked
	if err := n.startNATS(); err != nil {
		return err
	}
	if n.cfg.Has(clusterconfig.RoleCore) {
		if err := n.startCore(ctx); err != nil {
			return err
		}
	}
	if n.cfg.Has(clusterconfig.RoleHTTP) {
		// Before the promoter: the metrics then see this node's own
		// queue.leader announcement.
		if err := n.startHTTP(); err != nil {
			return err
		}
	}
	if n.cfg.Has(clusterconfig.RolePromoter) {
		if err := n.startRing(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Info is where the node serves.
func (n *Node) Info() Info { return n.info }

// Failed is closed when a part stopped on its own (the HTTP server or the
// promoter failed); Stop then returns why.
func (n *Node) Failed() <-chan struct{} { return n.failed }

// fail records why a part stopped on its own and closes failed.
func (n *Node) fail(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.failure == nil {
		close(n.failed)
	}
	n.failure = errors.Join(n.failure, err)
}

// NATS is the embedded NATS server; nil without the nats role.
func (n *Node) NATS() *embedded.Server { return n.nats }

// Service is the core service; nil without the core role.
func (n *Node) Service() *service.Service { return n.svc }

// Store is core's store; nil without the core role.
func (n *Node) Store() *redisstore.Store { return n.store }

// CoreConn is the NATS connection core serves and publishes on (a test's
// publish barrier follows core's events on it); nil without the core role.
func (n *Node) CoreConn() *nats.Conn { return n.coreConn }

// Promoter is the node's member of the ring; nil without the promoter
// role.
func (n *Node) Promoter() *promoter.Node { return n.ring }

// RedisChild is the managed redis-server; nil without ManagedRedis.
func (n *Node) RedisChild() *redisproc.Server { return n.redisChild }
