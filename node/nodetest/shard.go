package nodetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/node/redisproc"
)

// A dead shard (issue 15, finding 4): the tests of core/redisstore, and
// those that show what operators see with one Redis Cluster master down
// (httpapi, cmd/kuebus), break a cluster with these.

// NewShardCluster is a Redis Cluster of the test's own that it may break:
// 3 masters with no replica, so that a killed master stays down with no
// failover, and cluster-require-full-coverage off, so that the live
// masters go on serving their slots once they have seen it fail
// (docs/reliability.md). The test's cleanup stops every process.
func NewShardCluster(t testing.TB) *redisproc.Cluster {
	t.Helper()
	return NewOwnCluster(t, redisproc.ClusterOptions{
		Masters: 3, Replicas: 0,
		ExtraArgs: []string{"--cluster-require-full-coverage", "no"},
	})
}

// ShardTypes picks job types, n per master of c, and a victim: a master
// that does not hold {_} (the types list every call over all types reads
// first). It returns the victim's types (dead) and the others (healthy),
// each sorted.
func ShardTypes(t testing.TB, c *redisproc.Cluster, n int) (victim string, dead, healthy []string) {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	defer rdb.Close()
	master := func(key string) string {
		m, err := rdb.MasterForKey(t.Context(), key)
		require.NoError(t, err)
		return m.Options().Addr
	}
	global := master("{_}")
	byMaster := map[string][]string{}
	full := func() bool {
		if len(byMaster) < len(c.Addrs()) {
			return false
		}
		for _, types := range byMaster {
			if len(types) < n {
				return false
			}
		}
		return true
	}
	for i := 0; !full(); i++ {
		require.Less(t, i, 1000, "no %d types per master in 1000 tries", n)
		jobType := fmt.Sprintf("s%d", i)
		if addr := master("{" + jobType + "}"); len(byMaster[addr]) < n {
			byMaster[addr] = append(byMaster[addr], jobType)
		}
	}
	for addr, types := range byMaster {
		if victim == "" && addr != global {
			victim, dead = addr, types
			continue
		}
		healthy = append(healthy, types...)
	}
	require.NotEmpty(t, victim, "every master holds {_}")
	slices.Sort(dead)
	slices.Sort(healthy)
	return victim, dead, healthy
}

// KillMaster kills the master at addr (kill -9) and waits until a live
// master has marked it failed and the cluster says cluster_state:ok again,
// i.e. the others serve their own slots without the dead one's.
func KillMaster(t testing.TB, c *redisproc.Cluster, addr string) {
	t.Helper()
	require.NoError(t, c.Kill(addr))
	var live string
	for _, a := range c.Addrs() {
		if a != addr {
			live = a
			break
		}
	}
	require.Eventually(t, func() bool {
		nodes, err := redisproc.Command(t.Context(), live, "", "CLUSTER", "NODES")
		return err == nil && markedFailed(nodes, addr)
	}, 30*time.Second, 50*time.Millisecond, "no live master marked %s failed", addr)
	require.NoError(t, c.WaitReady(t.Context()))
}

// markedFailed reports whether a CLUSTER NODES listing marks the node at
// addr as failed (flag "fail", not only "fail?").
func markedFailed(nodes, addr string) bool {
	for line := range strings.SplitSeq(nodes, "\n") {
		f := strings.Fields(line) // id ip:port@bus flags ...
		if len(f) >= 3 && strings.HasPrefix(f[1], addr+"@") && slices.Contains(strings.Split(f[2], ","), "fail") {
			return true
		}
	}
	return false
}
