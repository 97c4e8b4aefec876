package nodetest

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/redisproc"
)

// The Redis Cluster of a test binary: 3 masters with a replica each,
// started by the first test that asks for it and stopped by Main. One per
// binary, as starting it costs a few seconds; tests keep apart by key
// prefix. Tests that change a node's settings (maxmemory, SCRIPT FLUSH)
// or the cluster's shape (a kill, a failover) must not run in parallel
// with other cluster tests, and must put things back: the setting, a
// killed node restarted and WaitReady (which waits for every replica to be
// attached and in sync). Which node is master may change between tests:
// find one by key (MasterForKey), never by position.
var cluster = shared[*redisproc.Cluster]{
	what:    "a Redis Cluster",
	timeout: clusterStartTimeout,
	start: func(ctx context.Context) (*redisproc.Cluster, error) {
		return redisproc.StartCluster(ctx, redisproc.ClusterOptions{Masters: 3, Replicas: 1})
	},
}

// clusterStartTimeout bounds starting the 6 processes and joining them.
const clusterStartTimeout = time.Minute

// Cluster returns the test binary's Redis Cluster, starting it on first
// use. When it cannot start, the test fails (and so does every later one
// that asks): a Cluster test that skips proves nothing. Main must run.
func Cluster(t testing.TB) *redisproc.Cluster {
	t.Helper()
	return cluster.get(t)
}

// NewClusterRedis returns a client to the test Cluster, closed when the
// test ends, to seed and inspect it.
func NewClusterRedis(t testing.TB) *redis.ClusterClient {
	t.Helper()
	c := Cluster(t)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("nodetest: Redis Cluster at %v does not answer: %v", c.Addrs(), err)
	}
	return rdb
}

// ClusterPrefix returns a key prefix no other test uses; the test's
// cleanup deletes every key under it, on every master.
func ClusterPrefix(t testing.TB, rdb *redis.ClusterClient) string {
	t.Helper()
	prefix := uniquePrefix("kc")
	t.Cleanup(func() {
		ctx := context.Background()
		_ = rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			// One key per UNLINK: keys of several slots may share a master.
			pipe := m.Pipeline()
			iter := m.Scan(ctx, 0, prefix+":*", 1000).Iterator()
			for iter.Next(ctx) {
				pipe.Unlink(ctx, iter.Val())
			}
			_, err := pipe.Exec(ctx)
			return err
		})
	})
	return prefix
}

// ClusterConn is the test Cluster as a node's config names it.
func ClusterConn(t testing.TB) redisstore.Conn {
	t.Helper()
	return redisstore.Conn{Cluster: &redisstore.Cluster{Addrs: Cluster(t).Addrs()}}
}

// NewClusterStore returns a Store on the test Cluster, opened as a node
// opens it (redisstore.Open), under a prefix of its own, and a client of
// the test's own to seed and inspect the cluster.
func NewClusterStore(t testing.TB) (*redisstore.Store, *redis.ClusterClient) {
	t.Helper()
	rdb := NewClusterRedis(t)
	r, err := redisstore.Open(ClusterConn(t))
	if err != nil {
		t.Fatalf("nodetest: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	st, err := r.Store(redisstore.Config{Prefix: ClusterPrefix(t, rdb)})
	if err != nil {
		t.Fatalf("nodetest: %v", err)
	}
	return st, rdb
}

// NewClusterCore is NewCore on the test Cluster: Core.Cluster is a client
// of the test's own; Core.Redis is nil.
func NewClusterCore(t testing.TB, cfg service.Config) *Core {
	t.Helper()
	rdb := NewClusterRedis(t)
	c := startCore(t, cfg, ClusterPrefix(t, rdb), clusterconfig.Redis{
		Cluster: &clusterconfig.RedisCluster{Addrs: Cluster(t).Addrs()},
	}, clusterconfig.Events{})
	c.Cluster = rdb
	return c
}

// NewOwnCluster starts a Redis Cluster for one test alone, which it may
// break (kill masters with no replica to take over) without touching the
// binary's shared Cluster; the test's cleanup stops it and kills every
// process it started. When it cannot start, the test fails.
func NewOwnCluster(t testing.TB, opts redisproc.ClusterOptions) *redisproc.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clusterStartTimeout)
	defer cancel()
	c, err := redisproc.StartCluster(ctx, opts)
	if err != nil {
		t.Fatalf("nodetest: cannot start a Redis Cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("nodetest: stop the Redis Cluster: %v", err)
		}
	})
	return c
}

// NewCoreOnCluster is NewClusterCore on the cluster c (from
// NewOwnCluster): Core.Cluster is a client of the test's own to it.
func NewCoreOnCluster(t testing.TB, cfg service.Config, c *redisproc.Cluster) *Core {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	t.Cleanup(func() { _ = rdb.Close() })
	core := startCore(t, cfg, uniquePrefix("kc"), clusterconfig.Redis{
		Cluster: &clusterconfig.RedisCluster{Addrs: c.Addrs()},
	}, clusterconfig.Events{})
	core.Cluster = rdb
	return core
}
