package nodetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node"
	"github.com/kuebus/kuebus/node/redisproc"
)

// redisURL is the Redis the tests of this binary use, set by Main.
var redisURL string

// Main runs a test binary's tests against a real Redis: the one in
// TEST_REDIS_URL, or a redis-server it starts on a free loopback port and
// stops afterwards. When it can do neither, every test fails: a suite that
// silently skips its Redis tests proves nothing. After the tests it checks
// that no goroutine was left running. Use it as
//
//	func TestMain(m *testing.M) { os.Exit(nodetest.Main(m)) }
func Main(m *testing.M) int {
	redisURL = os.Getenv("TEST_REDIS_URL")
	var srv *redisproc.Server
	if redisURL == "" {
		var err error
		srv, err = redisproc.Start(context.Background(), redisproc.Options{})
		if err != nil {
			fmt.Fprintf(os.Stderr, "nodetest: no TEST_REDIS_URL and cannot start redis-server: %v\n", err)
			return 1
		}
		redisURL = srv.URL()
	}
	code := m.Run()
	cluster.stop()
	sentinel.stop()
	if srv != nil {
		if err := srv.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "nodetest: stop redis-server: %v\n", err)
		}
	}
	if code == 0 {
		if err := goleak.Find(LeakIgnores()...); err != nil {
			fmt.Fprintf(os.Stderr, "nodetest: goroutines left behind: %v\n", err)
			return 1
		}
	}
	return code
}

// LeakIgnores are the goroutines that outlive a test on purpose.
func LeakIgnores() []goleak.Option {
	return []goleak.Option{
		// go-redis closes its pools' reaper goroutines lazily after Close.
		goleak.IgnoreTopFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).reaper"),
		// After dials to a server fail (a Redis Cluster master a test
		// killed), go-redis probes it on a goroutine that sleeps 1 s between
		// tries and sees the pool closed only when it wakes: up to a second
		// after Close, longer than goleak waits. A binary whose last test
		// kills a master (go test -run DeadShard) otherwise fails here.
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"),
	}
}

// RedisURL is the Redis of this test binary. Main must have run.
func RedisURL(t testing.TB) string {
	t.Helper()
	if redisURL == "" {
		t.Fatal("nodetest: no Redis: call nodetest.Main from TestMain")
	}
	return redisURL
}

// NewRedis returns a client to the test Redis, closed when the test ends.
func NewRedis(t testing.TB) *redis.Client {
	t.Helper()
	rdb, err := redisstore.Dial(RedisURL(t))
	if err != nil {
		t.Fatalf("nodetest: %v", err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("nodetest: Redis at %s does not answer: %v", RedisURL(t), err)
	}
	return rdb
}

// Prefix returns a key prefix no other test uses; the test's cleanup deletes
// every key under it.
func Prefix(t testing.TB, rdb *redis.Client) string {
	t.Helper()
	prefix := uniquePrefix("kt")
	t.Cleanup(func() {
		ctx := context.Background()
		var batch []string
		iter := rdb.Scan(ctx, 0, prefix+":*", 1000).Iterator()
		for iter.Next(ctx) {
			if batch = append(batch, iter.Val()); len(batch) == 1000 {
				rdb.Unlink(ctx, batch...)
				batch = batch[:0]
			}
		}
		if len(batch) > 0 {
			rdb.Unlink(ctx, batch...)
		}
	})
	return prefix
}

// uniquePrefix is a Redis key prefix no other test or example uses: head
// and 12 random hex digits.
func uniquePrefix(head string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return head + hex.EncodeToString(b)
}

// NewStore returns a Store on the test Redis under a prefix of its own.
func NewStore(t testing.TB) (*redisstore.Store, *redis.Client) {
	t.Helper()
	rdb := NewRedis(t)
	st, err := redisstore.New(redisstore.Config{Client: rdb, Prefix: Prefix(t, rdb)})
	if err != nil {
		t.Fatalf("nodetest: %v", err)
	}
	return st, rdb
}

// Core is a running core for one test.
type Core struct {
	// Node runs NATS and core, as `kuebus node` with roles nats and core
	// would.
	Node  *node.Node
	NATS  *bustest.Server
	Store *redisstore.Store
	Redis *redis.Client // a client of the test's own, to seed and inspect
	// Cluster is, on a NewClusterCore, a client of the test's own to the
	// test Cluster; nil otherwise.
	Cluster *redis.ClusterClient
	Service *service.Service
	Client  *core.Client

	// What AddCore starts another core on: the Redis and the key prefix.
	redis  clusterconfig.Redis
	prefix string
}

// RedisKey is the key name of c's store ("{t}:jobs") under its prefix,
// for a test to seed or read with c.Redis.
func (c *Core) RedisKey(name string) string { return c.prefix + ":" + name }

// NewCore starts a node with embedded NATS and a core on a store under a
// key prefix of its own, and returns a client connected to it over TCP.
// cfg may set the clock, limits and hooks and the subject prefix; Store
// and Conn are the node's. Everything stops when the test ends.
func NewCore(t testing.TB, cfg service.Config) *Core {
	t.Helper()
	return newCore(t, cfg, clusterconfig.Events{})
}

// NewDurableCore is NewCore with durable events: the embedded NATS runs
// JetStream in a folder of the test's, and core keeps the events in a
// stream in memory with the default limits.
func NewDurableCore(t testing.TB, cfg service.Config) *Core {
	t.Helper()
	return newCore(t, cfg, clusterconfig.Events{Durable: true, Storage: clusterconfig.EventStorageMemory, StoreDir: t.TempDir()})
}

func newCore(t testing.TB, cfg service.Config, events clusterconfig.Events) *Core {
	t.Helper()
	rdb := NewRedis(t)
	c := startCore(t, cfg, Prefix(t, rdb), clusterconfig.Redis{URL: RedisURL(t)}, events)
	c.Redis = rdb
	return c
}

// startCore starts NewCore's node on the Redis r names, its keys under
// prefix, with the events settings given.
func startCore(t testing.TB, cfg service.Config, prefix string, r clusterconfig.Redis, events clusterconfig.Events) *Core {
	t.Helper()
	n := startNode(t, &clusterconfig.Config{
		Name:        "nodetest",
		Roles:       []string{clusterconfig.RoleNATS, clusterconfig.RoleCore},
		Prefix:      cfg.Subjects.Prefix(),
		RedisPrefix: prefix,
		NATS:        clusterconfig.NATS{Embedded: &clusterconfig.EmbeddedNATS{Listen: "127.0.0.1:0"}},
		Redis:       r,
		Events:      events,
	}, cfg)
	ns := &bustest.Server{Server: n.NATS(), Conn: bustest.Connect(t, n.NATS().ClientURL())}
	client, err := core.NewClient(bustest.Connect(t, ns.ClientURL()), &core.ClientOptions{Prefix: cfg.Subjects.Prefix()})
	if err != nil {
		t.Fatalf("nodetest: %v", err)
	}
	return &Core{Node: n, NATS: ns, Store: n.Store(), Service: n.Service(), Client: client, redis: r, prefix: prefix}
}

// startNode starts a node of the deployment dc whose core runs with the
// test's service config cfg (its store and connection the node's), and
// stops it when the test ends. When it cannot start, the test fails.
func startNode(t testing.TB, dc *clusterconfig.Config, cfg service.Config) *node.Node {
	t.Helper()
	n, err := node.Start(context.Background(), node.Config{
		Node: dc,
		Service: func(c *service.Config) {
			store, conn := c.Store, c.Conn
			*c = cfg
			c.Store, c.Conn = store, conn
		},
	})
	t.Cleanup(func() {
		if err := n.Stop(); err != nil {
			t.Errorf("nodetest: stop the node: %v", err)
		}
	})
	if err != nil {
		t.Fatalf("nodetest: %v", err)
	}
	return n
}

// AddCore starts one more core for the queue of first (from NewCore): a
// node with the core role alone, on first's NATS as an external server and
// on first's Redis and keys, as a second machine would run it. Every core
// joins the one queue group, so requests spread over them. cfg is as for
// NewCore. The returned Core's NATS and Redis are first's; its Client
// reaches any core of the group. It stops when the test ends.
func AddCore(t testing.TB, first *Core, cfg service.Config) *Core {
	t.Helper()
	n := startNode(t, &clusterconfig.Config{
		Name:        "nodetest-" + uniquePrefix("core"),
		Roles:       []string{clusterconfig.RoleCore},
		Prefix:      cfg.Subjects.Prefix(),
		RedisPrefix: first.prefix,
		NATS:        clusterconfig.NATS{External: &clusterconfig.ExternalNATS{URLs: []string{first.NATS.ClientURL()}}},
		Redis:       first.redis,
	}, cfg)
	return &Core{Node: n, NATS: first.NATS, Store: n.Store(), Redis: first.Redis, Cluster: first.Cluster,
		Service: n.Service(), Client: first.Client, redis: first.redis, prefix: first.prefix}
}

// Queue starts a whole queue for a runnable Example, which has no
// testing.T: embedded NATS and core on the test Redis (Main must have run)
// under a key prefix of its own, and a promoter leader of one, as `kuebus
// dev` runs them. It returns the NATS URL, and stop, which stops the node;
// its keys stay, under their unique prefix. It panics when the queue does
// not start: an Example cannot fail otherwise.
func Queue() (natsURL string, stop func()) {
	if redisURL == "" {
		panic("nodetest: no Redis: call nodetest.Main from TestMain")
	}
	n, err := node.Start(context.Background(), node.Config{
		Node: &clusterconfig.Config{
			Name:        "example",
			Roles:       []string{clusterconfig.RoleNATS, clusterconfig.RoleCore, clusterconfig.RolePromoter},
			RedisPrefix: uniquePrefix("kx"),
			NATS:        clusterconfig.NATS{Embedded: &clusterconfig.EmbeddedNATS{Listen: "127.0.0.1:0"}},
			Memberlist:  clusterconfig.Memberlist{Bind: "127.0.0.1:0", Preset: clusterconfig.PresetLocal},
			Redis:       clusterconfig.Redis{URL: redisURL},
		},
		Alone: true,
	})
	if err != nil {
		panic(fmt.Sprintf("nodetest: start a queue: %v", err))
	}
	return n.NATS().ClientURL(), func() {
		if err := n.Stop(); err != nil {
			panic(fmt.Sprintf("nodetest: stop the queue: %v", err))
		}
	}
}

// Clock is a settable clock for service.Config.Now, safe for concurrent use.
type Clock struct{ ms atomic.Int64 }

// NewClock returns a clock that reads `at` until moved.
func NewClock(at time.Time) *Clock {
	c := &Clock{}
	c.ms.Store(at.UnixMilli())
	return c
}

// Now is service.Config.Now.
func (c *Clock) Now() time.Time { return time.UnixMilli(c.ms.Load()) }

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// ErrCode is the wire code of err, for tables of expected failures.
func ErrCode(err error) bus.Code {
	if err == nil {
		return ""
	}
	return bus.CodeOf(err)
}
