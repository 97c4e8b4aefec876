package redisstore_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/redisproc"
)

// TestARedisStallCannotDoubleACreate stops the Redis process (SIGSTOP) while
// a create is on its way, so that the client's read times out; then lets it
// go on (SIGCONT). A client that retried after the timeout would leave its
// attempts queued in Redis's socket buffers, each of which runs on resume:
// one id twice in the ready index, one job leased twice. With retries off
// the create runs at most once.
func TestARedisStallCannotDoubleACreate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, err := redisproc.Start(ctx, redisproc.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = syscall.Kill(srv.Pid(), syscall.SIGCONT) // never leave it stopped
		_ = srv.Stop()
	})

	opts, err := redisstore.ParseURL(srv.URL())
	require.NoError(t, err)
	opts.ReadTimeout = time.Second // short, yet ample for the first create on a busy machine
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	st, err := redisstore.New(redisstore.Config{Client: rdb, Prefix: "stall"})
	require.NoError(t, err)

	// A first create reserves a block of the type's ids, so the stalled
	// create sends its script at once instead of waiting on the id counter.
	_, _, err = st.Create(ctx, 1, []core.Spec{{Type: "email", MaxAttempts: 1, TTL: 1000 * time.Millisecond}})
	require.NoError(t, err)

	require.NoError(t, syscall.Kill(srv.Pid(), syscall.SIGSTOP))
	_, _, err = st.Create(ctx, 2, []core.Spec{{Type: "email", MaxAttempts: 1, TTL: 1000 * time.Millisecond}})
	require.Error(t, err, "Redis is stopped: the create times out") // the signal that the client gave up
	require.ErrorIs(t, err, core.ErrUnavailable)
	require.NoError(t, syscall.Kill(srv.Pid(), syscall.SIGCONT))

	// A second client, with patient timeouts, reads what Redis did. Its
	// PING is answered only after Redis has read every attempt already in
	// its socket buffers, and the read after it is served later still.
	check := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
	t.Cleanup(func() { _ = check.Close() })
	require.NoError(t, check.Ping(ctx).Err())
	ready, err := check.ZRange(ctx, "stall:{email}:ready", 0, -1).Result()
	require.NoError(t, err)
	require.Len(t, ready, 2, "the first create, and the stalled one once, not once per client attempt: %v", ready)

	now := time.Now().UnixMilli()
	first, _, err := st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"email"}, Max: 10, Worker: "w1", Token: "token-1", TTL: 0})
	require.NoError(t, err)
	require.Len(t, first, 2)
	second, _, err := st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"email"}, Max: 10, Worker: "w2", Token: "token-2", TTL: 0})
	require.NoError(t, err)
	require.Empty(t, second, "nobody else gets the job: %v", second)
}

// TestEveryClientKindHasRetriesOff: the options of each kind of client
// kuebus builds (URL, Sentinel, Cluster) carry no retries, even when the URL
// asks for some.
func TestEveryClientKindHasRetriesOff(t *testing.T) {
	opts, err := redisstore.ParseURL("redis://127.0.0.1:6379/0?max_retries=5")
	require.NoError(t, err)
	require.Equal(t, -1, opts.MaxRetries)
	require.Equal(t, 2, opts.Protocol)

	failover := &redis.FailoverOptions{MasterName: "m"}
	redisstore.ApplyOptions(failover)
	require.Equal(t, -1, failover.MaxRetries)
	require.Equal(t, 2, failover.Protocol)

	cluster := &redis.ClusterOptions{}
	redisstore.ApplyOptions(cluster)
	require.Equal(t, -1, cluster.MaxRetries)
	require.Equal(t, -1, cluster.MaxRedirects)
	require.Equal(t, 2, cluster.Protocol)

	require.Panics(t, func() { redisstore.ApplyOptions(struct{}{}) }, "a programmer error")
}
