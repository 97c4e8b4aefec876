package redisstore_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/redisproc"
)

// Bad WaitReplicas and WaitTimeout are refused by New with the field's
// name, before anything talks to Redis.
func TestWaitSettingsAreChecked(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	t.Cleanup(func() { _ = rdb.Close() })
	for _, tc := range []struct {
		name     string
		replicas int
		timeout  time.Duration
		want     string // "" for good settings
	}{
		{"no wait at all is fine", 0, 0, ""},
		{"one replica within 100ms is fine", 1, 100 * time.Millisecond, ""},
		{"a negative replica count is refused", -1, 100 * time.Millisecond, "WaitReplicas -1 is negative"},
		{"a negative timeout is refused", 1, -time.Millisecond, "WaitTimeout -1ms is negative"},
		{"replicas without a timeout are refused: WAIT would block forever", 1, 0, "WaitTimeout is required"},
		{"a timeout without replicas is refused", 0, time.Second, "WaitReplicas is 0"},
		{"a timeout under a millisecond is refused: WAIT would get 0, forever", 1, 500 * time.Microsecond, "WaitTimeout 500µs is under 1ms"},
		{"a timeout past the read timeout is refused", 1, 5 * time.Second, "WaitTimeout 5s is over 2s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := redisstore.New(redisstore.Config{Client: rdb, WaitReplicas: tc.replicas, WaitTimeout: tc.timeout})
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// replicaPair starts a standalone master and a replica of it, and waits
// until the replica's link is up.
func replicaPair(t *testing.T) (master, replica *redisproc.Server) {
	t.Helper()
	ctx := t.Context()
	// No 5 s wait for more replicas before a diskless full sync (Redis 7's
	// default repl-diskless-sync-delay).
	master, err := redisproc.Start(ctx, redisproc.Options{ExtraArgs: []string{"--repl-diskless-sync-delay", "0"}})
	require.NoError(t, err, "start a redis-server")
	t.Cleanup(func() { _ = master.Stop() })
	host, port, _ := strings.Cut(master.Addr(), ":")
	replica, err = redisproc.Start(ctx, redisproc.Options{ExtraArgs: []string{"--replicaof", host, port}})
	require.NoError(t, err, "start a replica")
	t.Cleanup(func() { _ = replica.Stop() })
	waitInfo(t, replica.Addr(), "replication", "master_link_status:up")
	return master, replica
}

// waitInfo polls INFO section of the server at addr until it holds want:
// the state is the server's, there is nothing to be told of.
func waitInfo(t *testing.T, addr, section, want string) {
	t.Helper()
	require.Eventually(t, func() bool {
		info, err := redisproc.Command(t.Context(), addr, "", "INFO", section)
		return err == nil && strings.Contains(info, want)
	}, 15*time.Second, 20*time.Millisecond, "%s: INFO %s never said %s", addr, section, want)
}

// A standalone master (a Sentinel's master is reached the same way, one
// *redis.Client): with WaitReplicas 1 a create is acknowledged once the
// replica has it, and answers unavailable, the job stored but not safe,
// when no replica acknowledges.
func TestWaitReplicasOnAStandaloneMaster(t *testing.T) {
	master, replica := replicaPair(t)
	ctx := t.Context()
	rdb, err := redisstore.Dial(master.URL())
	require.NoError(t, err)
	t.Cleanup(func() { _ = rdb.Close() })
	// The longest timeout allowed: a replica on a machine busy with the
	// rest of the suite can take over 200 ms to acknowledge, and the test
	// is about what WAIT's answer does, not how fast it comes.
	st, err := redisstore.New(redisstore.Config{Client: rdb, Prefix: "kw", WaitReplicas: 1, WaitTimeout: 2 * time.Second})
	require.NoError(t, err)

	jobs, _, err := st.Create(ctx, 1000, []core.Spec{{Type: "w", MaxAttempts: 1, TTL: 60_000 * time.Millisecond}})
	require.NoError(t, err)
	// WAIT said the replica has it: read it there.
	rep := redis.NewClient(&redis.Options{Addr: replica.Addr()})
	t.Cleanup(func() { _ = rep.Close() })
	n, err := rep.Exists(ctx, "kw:{w}:job:"+strconv.FormatInt(jobs[0].ID, 10)).Result()
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "the replica has the acknowledged job")

	// A master that lost its scripts (a promoted replica, a restart):
	// EVALSHA and WAIT answer NOSCRIPT and 0, and the script goes again
	// as EVAL, with its WAIT, once.
	require.NoError(t, rdb.ConfigResetStat(ctx).Err())
	require.NoError(t, rdb.ScriptFlush(ctx).Err())
	_, _, err = st.Create(ctx, 1000, []core.Spec{{Type: "w", MaxAttempts: 1, TTL: 60_000 * time.Millisecond}})
	require.NoError(t, err)
	ready, err := rdb.ZCard(ctx, "kw:{w}:ready").Result()
	require.NoError(t, err)
	require.Equal(t, int64(2), ready, "each create stored once")
	errs, err := rdb.Info(ctx, "errorstats").Result()
	require.NoError(t, err)
	require.Contains(t, errs, "errorstat_NOSCRIPT:count=1", "the path after NOSCRIPT was taken")

	// Leases, completions and every other change wait too.
	leased, _, err := st.Lease(ctx, &service.LeaseParams{Now: 1001, Types: []string{"w"}, Max: 2, Worker: "wk", Token: "tok", TTL: 0})
	require.NoError(t, err)
	require.Len(t, leased, 2)

	require.NoError(t, replica.Stop())
	_, _, err = st.Create(ctx, 1002, []core.Spec{{Type: "w", MaxAttempts: 1, TTL: 60_000 * time.Millisecond, UniqueKey: "u1"}})
	require.Equal(t, bus.CodeUnavailable, bus.CodeOf(err), "%v", err)
	require.ErrorContains(t, err, "only 0 of 1 replicas acknowledged it within 2s")
	// The write happened: a retry with the same unique_key finds the job.
	got, err := st.GetByKey(ctx, "w", "u1")
	require.NoError(t, err)
	require.Equal(t, "w", got.Type)
}
