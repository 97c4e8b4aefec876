package nodetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/redisproc"
)

// The Sentinel set of a test binary: a master, a replica and 3 Sentinels
// (quorum 2) with a random password, started by the first test that asks
// for it and stopped by Main. One per binary, as Cluster; tests keep apart
// by key prefix. A test that kills a server must not run in parallel with
// other Sentinel tests, and must leave the set ready again (Restart what
// it killed, then WaitReady), as the next test expects both servers up.
var sentinel = shared[*redisproc.Sentinel]{
	what:    "a Sentinel set",
	timeout: time.Minute, // starting the 5 processes
	start: func(ctx context.Context) (*redisproc.Sentinel, error) {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		return redisproc.StartSentinel(ctx, redisproc.SentinelOptions{Password: hex.EncodeToString(b)})
	},
}

// Sentinel returns the test binary's Sentinel set, starting it on first
// use. When it cannot start, the test fails (and so does every later one
// that asks): a Sentinel test that skips proves nothing. Main must run.
func Sentinel(t testing.TB) *redisproc.Sentinel {
	t.Helper()
	return sentinel.get(t)
}

// SentinelConn is the test Sentinel set as a node's config names it.
func SentinelConn(t testing.TB) redisstore.Conn {
	t.Helper()
	s := Sentinel(t)
	return redisstore.Conn{Sentinel: &redisstore.Sentinel{
		Master: s.MasterName(), Addrs: s.SentinelAddrs(), Password: s.Password(), SentinelPassword: s.SentinelPassword(),
	}}
}

// SentinelConfig is the Sentinel set s as a node config's redis.sentinel
// section names it.
func SentinelConfig(s *redisproc.Sentinel) *clusterconfig.Sentinel {
	return &clusterconfig.Sentinel{
		Master: s.MasterName(), Addrs: s.SentinelAddrs(), Password: s.Password(), SentinelPassword: s.SentinelPassword(),
	}
}

// NewSentinelRedis returns a client of the test's own to the test
// Sentinel set's master (a go-redis failover client, which follows it
// through failovers), closed when the test ends, to seed and inspect it.
func NewSentinelRedis(t testing.TB) *redis.Client {
	t.Helper()
	return sentinelRedis(t, Sentinel(t))
}

// sentinelRedis is NewSentinelRedis on the Sentinel set s.
func sentinelRedis(t testing.TB, s *redisproc.Sentinel) *redis.Client {
	t.Helper()
	rdb := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: s.MasterName(), SentinelAddrs: s.SentinelAddrs(), Password: s.Password(),
		SentinelPassword: s.SentinelPassword(),
	})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("nodetest: the master of Sentinels %v does not answer: %v", s.SentinelAddrs(), err)
	}
	return rdb
}

// NewSentinelStore returns a Store on the test Sentinel set, opened as a
// node opens it (redisstore.Open with Conn.Sentinel), under a prefix of
// its own, and a client of the test's own to seed and inspect the master.
// cfg sets the store's options; its Client and Prefix are the helper's.
func NewSentinelStore(t testing.TB, cfg redisstore.Config) (*redisstore.Store, *redis.Client) {
	t.Helper()
	rdb := NewSentinelRedis(t)
	r, err := redisstore.Open(SentinelConn(t))
	if err != nil {
		t.Fatalf("nodetest: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	cfg.Prefix = Prefix(t, rdb)
	st, err := r.Store(cfg)
	if err != nil {
		t.Fatalf("nodetest: %v", err)
	}
	return st, rdb
}

// RedisOptions are a node config's redis settings beyond where Redis is.
type RedisOptions struct {
	// WaitReplicas and WaitTimeout are redis.wait_replicas and
	// redis.wait_timeout. Default: no WAIT.
	WaitReplicas int
	WaitTimeout  time.Duration
}

// NewSentinelCore is NewCore on the test Sentinel set, reached through
// the node config's redis.sentinel section, with the other redis settings
// of ro (nil: none): Core.Redis is a failover client of the test's own.
func NewSentinelCore(t testing.TB, cfg service.Config, ro *RedisOptions) *Core {
	t.Helper()
	return NewSentinelCoreOn(t, Sentinel(t), cfg, ro)
}

// NewSentinelCoreOn is NewSentinelCore on the Sentinel set s: one a test
// started with options of its own, and stops.
func NewSentinelCoreOn(t testing.TB, s *redisproc.Sentinel, cfg service.Config, ro *RedisOptions) *Core {
	t.Helper()
	rdb := sentinelRedis(t, s)
	r := clusterconfig.Redis{Sentinel: SentinelConfig(s)}
	if ro != nil {
		r.WaitReplicas, r.WaitTimeout = ro.WaitReplicas, ro.WaitTimeout
	}
	c := startCore(t, cfg, Prefix(t, rdb), r, clusterconfig.Events{})
	c.Redis = rdb
	return c
}
