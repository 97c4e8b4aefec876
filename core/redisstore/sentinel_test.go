package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/node/redisproc"
)

// Tests of issue 15 on a real Sentinel set: a master, a replica and 3
// Sentinels with quorum 2 (nodetest.Sentinel, one per test binary), which
// a core reaches as a node config names it (redis.sentinel: master name,
// Sentinel addresses, password). The failover test kills the master, so
// none of these tests is parallel (Go runs the sequential tests first,
// before the parallel ones on the standalone Redis), and it leaves the set
// ready again.

// TestSentinelTour: a core on Sentinel does what a producer and a worker
// ask of it, without error.
func TestSentinelTour(t *testing.T) {
	c := nodetest.NewSentinelCore(t, service.Config{}, nil)
	client := c.Client
	ctx := t.Context()

	var ids []int64
	for i := range 3 {
		job, err := client.Create(ctx, "tour", map[string]int{"n": i}, &core.CreateOpts{TTL: time.Minute})
		require.NoError(t, err)
		ids = append(ids, job.ID)
	}
	got, err := client.Get(ctx, ids[1])
	require.NoError(t, err)
	require.Equal(t, "tour", got.Type)
	require.Equal(t, core.StateInactive, got.State)

	leased, err := client.Lease(ctx, core.LeaseRequest{Types: []string{"tour"}, Max: 10, Worker: "w"})
	require.NoError(t, err)
	require.Len(t, leased, 3)
	for _, job := range leased {
		require.NoError(t, client.Complete(ctx, core.LeaseOp{ID: job.ID, Lease: job.Lease, Type: job.Type}))
	}
	got, err = client.Get(ctx, ids[0])
	require.NoError(t, err)
	require.Equal(t, core.StateComplete, got.State)

	stats, err := client.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(3), stats.Types["tour"].Complete)
	require.Zero(t, stats.Types["tour"].Inactive)
}

// TestSentinelAuth: on a Sentinel set of its own whose Sentinels require
// a password of their own (not the servers'), a core whose node config
// gives it (redis.sentinel.sentinel_password) creates and reads a job; a
// node whose config gives none, or a wrong one, does not start, and its
// error names the field and says the Sentinels refused it. No message
// shows a password.
func TestSentinelAuth(t *testing.T) {
	t.Parallel()
	const serversPassword, sentinelPassword = "the servers' secret", "the Sentinels' secret"
	ctx := t.Context()
	set, err := redisproc.StartSentinel(ctx, redisproc.SentinelOptions{Password: serversPassword, SentinelPassword: sentinelPassword})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, set.Stop()) })

	c := nodetest.NewSentinelCoreOn(t, set, service.Config{}, nil)
	job, err := c.Client.Create(ctx, "auth", map[string]int{"n": 1}, &core.CreateOpts{TTL: time.Minute})
	require.NoError(t, err)
	got, err := c.Client.Get(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, "auth", got.Type)
	require.Equal(t, core.StateInactive, got.State)

	// startNode starts a core node on sc, stops it, and returns why it did
	// not start. Core pings Redis before it connects to NATS, which is not
	// there.
	startNode := func(t *testing.T, sc *clusterconfig.Sentinel) error {
		n, err := node.Start(ctx, node.Config{Node: &clusterconfig.Config{
			Name:  "sentinel-auth",
			Roles: []string{clusterconfig.RoleCore},
			NATS:  clusterconfig.NATS{External: &clusterconfig.ExternalNATS{URLs: []string{"nats://127.0.0.1:1"}}},
			Redis: clusterconfig.Redis{Sentinel: sc},
		}})
		require.NoError(t, n.Stop())
		return err
	}
	for _, tc := range []struct {
		name, user, password, want string
	}{
		{"no Sentinel password", "", "", "the Sentinels require a password of their own and none was given"},
		{"the servers' password", "", serversPassword, "the Sentinels refused the Sentinel password"},
		{"a wrong user", "kuebus", sentinelPassword, `the Sentinels refused user "kuebus" with the Sentinel password`},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			sc := nodetest.SentinelConfig(set)
			sc.SentinelUsername, sc.SentinelPassword = tc.user, tc.password
			err := startNode(t, sc)
			require.ErrorIs(t, err, redisstore.ErrSentinelAuth)
			_, ok := errors.AsType[*node.ConfigError](err)
			require.True(t, ok, "%T: %v", err, err)
			require.ErrorContains(t, err, "node: config: redis.sentinel.sentinel_password: Redis at master kuebus of Sentinels ")
			require.ErrorContains(t, err, "redisstore: Sentinel authentication failed: "+tc.want+": 127.0.0.1:")
			require.NotContains(t, err.Error(), serversPassword)
			require.NotContains(t, err.Error(), sentinelPassword)

			// A store on such a connection answers each call unavailable
			// (not internal: no script failed), saying why.
			r, err := redisstore.Open(redisstore.Conn{Sentinel: &redisstore.Sentinel{
				Master: sc.Master, Addrs: sc.Addrs, Password: sc.Password, SentinelUsername: sc.SentinelUsername, SentinelPassword: sc.SentinelPassword,
			}})
			require.NoError(t, err)
			defer r.Close()
			st, err := r.Store(redisstore.Config{Prefix: "auth"})
			require.NoError(t, err)
			_, _, err = st.Create(ctx, 1000, []core.Spec{{Type: "auth", MaxAttempts: 1, TTL: 60_000 * time.Millisecond}})
			require.ErrorIs(t, err, bus.ErrUnavailable)
			require.ErrorContains(t, err, "redis reserve ids: authentication refused (the servers' password, or on Sentinel the Sentinels' own): ")
		})
	}

	t.Run("names the master when it is the master that refuses", func(t *testing.T) {
		sc := nodetest.SentinelConfig(set)
		sc.Password = "not the servers'"
		err := startNode(t, sc)
		require.NotErrorIs(t, err, redisstore.ErrSentinelAuth)
		require.ErrorContains(t, err, "does not answer: redis ping: the master refused the servers' password (the Sentinels accepted theirs): WRONGPASS")
	})

	conn := redisstore.Conn{Sentinel: &redisstore.Sentinel{
		Master: "m", Addrs: []string{"s:26379"}, Password: serversPassword, SentinelUsername: "u", SentinelPassword: sentinelPassword,
	}}
	require.Equal(t, "master m of Sentinels s:26379", conn.String(), "no password, nor user")
}

// TestSentinelStoreScriptFlush: a store opened as a node opens it on
// Sentinel writes to the master, and the replica gets the writes. A
// master without the scripts (a promoted replica that never ran them;
// here SCRIPT FLUSH) runs a create once, with EVAL, not twice.
func TestSentinelStoreScriptFlush(t *testing.T) {
	st, rdb := nodetest.NewSentinelStore(t, redisstore.Config{})
	ctx := t.Context()
	specs := func(n int) []core.Spec {
		out := make([]core.Spec, n)
		for i := range out {
			out[i] = core.Spec{Type: "flush", MaxAttempts: 1, TTL: 60_000 * time.Millisecond}
		}
		return out
	}
	_, _, err := st.Create(ctx, 1000, specs(2))
	require.NoError(t, err)
	require.NoError(t, rdb.ScriptFlush(ctx).Err())
	_, _, err = st.Create(ctx, 1001, specs(2))
	require.NoError(t, err)

	leased, _, err := st.Lease(ctx, &service.LeaseParams{Now: 2000, Types: []string{"flush"}, Max: 10, Worker: "w", Token: "tok", TTL: 0})
	require.NoError(t, err)
	require.Len(t, leased, 4, "each job once")

	set := nodetest.Sentinel(t)
	master, err := set.Master(ctx)
	require.NoError(t, err)
	replicas := slices.DeleteFunc(set.ServerAddrs(), func(a string) bool { return a == master })
	require.Len(t, replicas, 1)
	n, err := rdb.Wait(ctx, 1, 5*time.Second).Result()
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "the replica acknowledged the writes")
	replica := redis.NewClient(&redis.Options{Addr: replicas[0], Password: set.Password()})
	defer replica.Close()
	onReplica, err := replica.ZCard(ctx, prefixOf(t, rdb, "flush")+":{flush}:leases").Result()
	require.NoError(t, err)
	require.Equal(t, int64(4), onReplica, "the replica holds the 4 leases")
}

// failoverRun is what one failover run measured.
type failoverRun struct {
	acked      int           // creates that got a reply with an id
	failed     int           // creates that got an error (unavailable, a timeout)
	lost       int           // acknowledged, and get finds no such job afterwards (through the core, or a new one)
	lostFresh  int           // of those, the ones the core that created them finds, and a new core does not
	lostLag    time.Duration // how long before the kill the last lost job was acknowledged
	dupAcked   int           // ids that two creates were both given
	dupReady   int           // ids in the ready queue more than once
	dupLeased  int           // ids that two leases handed out
	orphans    int           // stored without an acknowledged create, and get finds none
	unacked    int           // stored without an acknowledged create, and get finds it (outcome unknown to the producer: fine)
	recovery   time.Duration // from the kill to the first acknowledged create sent after it
	switched   time.Duration // from the kill to a Sentinel's +switch-master
	oldMaster  string
	newMaster  string
	afterCount int // acknowledged creates sent after the kill
}

func (r failoverRun) String() string {
	lost := strconv.Itoa(r.lost)
	if r.lost > 0 {
		lost += fmt.Sprintf(" (%d only for a new core; the last acknowledged %s before the kill)", r.lostFresh, r.lostLag.Round(time.Millisecond))
	}
	return fmt.Sprintf("acknowledged %d (%d after the kill), failed %d, lost %s, "+
		"duplicated %d (acked twice %d, twice in ready %d, leased twice %d), orphans %d, stored without ack %d, "+
		"recovery %s (Sentinel switched after %s; master %s → %s)",
		r.acked, r.afterCount, r.failed, lost,
		r.dupAcked+r.dupReady+r.dupLeased, r.dupAcked, r.dupReady, r.dupLeased, r.orphans, r.unacked,
		r.recovery.Round(10*time.Millisecond), r.switched.Round(10*time.Millisecond), r.oldMaster, r.newMaster)
}

const (
	// failoverProducers create jobs in a loop each, one at a time.
	failoverProducers = 4
	// failoverBefore is how many creates are acknowledged before the kill,
	// failoverAfter how many after the first one that recovered.
	failoverBefore, failoverAfter = 500, 500
	// failoverDeadline bounds the run from the kill: the Sentinels promote
	// the replica in about 2 s, so a run that has not recovered by then is
	// a failure, not a slow machine.
	failoverDeadline = 15 * time.Second
	// createTimeout bounds one create, as a producer would.
	createTimeout = 2 * time.Second
	// retryPause is how long a producer waits after a failed create before
	// it sends the next one: a producer's pacing, so that the outage is not
	// a busy loop on 2 shared cores (it adds at most this much to the
	// recovery measured).
	retryPause = 10 * time.Millisecond
)

// TestSentinelFailoverWait is TestSentinelFailover with a core that
// waits for one replica after each change (redis.wait_replicas 1): a
// create is acknowledged only once the replica has it, so the promoted
// replica has every acknowledged job: lost must be 0. With one replica,
// the new master has none until the killed server is back, so the test
// restarts it as soon as Sentinel has switched (as a supervisor would),
// and creates fail (unavailable, stored but not acknowledged) until it
// has synced.
func TestSentinelFailoverWait(t *testing.T) {
	c := nodetest.NewSentinelCore(t, service.Config{}, &nodetest.RedisOptions{WaitReplicas: 1, WaitTimeout: 500 * time.Millisecond})
	run := sentinelFailover(t, c, "failover-wait", true)
	t.Logf("Sentinel failover, WAIT 1: %s", run)
	if run.switched > 4*time.Second {
		logSentinels(t)
	}
	require.Zero(t, run.lost, "lost")
	require.Zero(t, run.dupAcked+run.dupReady+run.dupLeased, "duplicated")
	require.Zero(t, run.orphans, "orphans")
	require.LessOrEqual(t, run.recovery, 5*time.Second, "recovery")
}

// TestSentinelFailover: a steady stream of creates from a few producers
// through core; kill -9 of the master; the Sentinels promote the replica;
// the stream goes on. Nothing acknowledged may be duplicated, no job may
// be stored that no get finds, and creates must work again within 5 s of
// the kill. Redis replication is asynchronous, so creates the old master
// acknowledged in its last moment may be missing on the promoted replica:
// without WAIT, lost is logged, not asserted (TestSentinelFailoverWait
// asserts it).
func TestSentinelFailover(t *testing.T) {
	c := nodetest.NewSentinelCore(t, service.Config{}, nil)
	run := sentinelFailover(t, c, "failover", false)
	t.Logf("Sentinel failover, no WAIT: %s", run)
	if run.switched > 4*time.Second {
		logSentinels(t)
	}
	require.Zero(t, run.dupAcked+run.dupReady+run.dupLeased, "duplicated")
	require.Zero(t, run.orphans, "orphans")
	require.LessOrEqual(t, run.recovery, 5*time.Second, "recovery")
}

// logSentinels logs what each Sentinel of the set printed last: why a
// failover was slow (a failed vote, a failover refused).
func logSentinels(t *testing.T) {
	set := nodetest.Sentinel(t)
	for _, addr := range set.SentinelAddrs() {
		t.Logf("sentinel %s:\n%s", addr, set.Node(addr).Output())
	}
}

// sentinelFailover runs the scenario on core c with jobs of jobType and counts.
// With restartOnSwitch the killed server is restarted (a replica of the
// new master) as soon as a Sentinel announces the switch: a core that
// waits for a replica (WaitReplicas) on a set of one replica can answer
// no change before one is back.
func sentinelFailover(t *testing.T, c *nodetest.Core, jobType string, restartOnSwitch bool) failoverRun {
	t.Helper()
	set := nodetest.Sentinel(t)
	ctx := t.Context()
	var run failoverRun
	var err error
	run.oldMaster, err = set.Master(ctx)
	require.NoError(t, err)
	var killed, restarted atomic.Bool
	t.Cleanup(func() {
		// Leave the set as the next test expects it: both servers up, the
		// killed one a replica of the new master.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if killed.Load() && !restarted.Load() {
			require.NoError(t, set.Restart(ctx, run.oldMaster))
		}
		require.NoError(t, set.WaitReady(ctx))
	})

	type ack struct {
		id int64
		at time.Time // when the reply came
	}
	var (
		mu        sync.Mutex
		acks      []ack
		killedAt  time.Time // zero until the master is dead
		recovered time.Time // the reply of the first create sent after the kill
		after     int       // acknowledged creates sent after the kill
	)
	readyToKill := make(chan struct{})
	done := make(chan struct{}) // enough creates after the recovery
	stop := make(chan struct{}) // producers stop
	var wg sync.WaitGroup
	for p := range failoverProducers {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				sent := time.Now()
				cctx, cancel := context.WithTimeout(ctx, createTimeout)
				job, err := c.Client.CreateSpec(cctx, core.Spec{
					Type: jobType, Data: []byte(fmt.Sprintf(`{"p":%d,"n":%d}`, p, n)), MaxAttempts: 1, TTL: time.Minute,
				})
				cancel()
				at := time.Now()
				mu.Lock()
				if err != nil {
					run.failed++
					mu.Unlock()
					select {
					case <-stop:
						return
					case <-time.After(retryPause):
					}
					continue
				}
				acks = append(acks, ack{id: job.ID, at: at})
				switch {
				case killedAt.IsZero():
					if len(acks) == failoverBefore {
						close(readyToKill)
					}
				case sent.After(killedAt):
					if after++; after == 1 {
						recovered = at
					} else if after == failoverAfter {
						close(done)
					}
				}
				mu.Unlock()
			}
		})
	}
	defer func() { // on a failed require too
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}()

	// When the Sentinels switch masters, one of them says so on
	// +switch-master: the recovery's share that is Sentinel's.
	sub := redis.NewSentinelClient(&redis.Options{Addr: set.SentinelAddrs()[0]})
	defer sub.Close()
	switches := sub.Subscribe(ctx, "+switch-master")
	_, err = switches.Receive(ctx) // the subscription's confirmation
	require.NoError(t, err)
	switchedAt := make(chan time.Time, 1)
	restartErr := make(chan error, 1)
	var listen sync.WaitGroup
	listen.Go(func() {
		if _, ok := <-switches.Channel(); !ok {
			return
		}
		switchedAt <- time.Now()
		if restartOnSwitch {
			restarted.Store(true)
			restartErr <- set.Restart(ctx, run.oldMaster)
		}
	})
	defer func() {
		_ = switches.Close()
		listen.Wait()
	}()

	select {
	case <-readyToKill:
	case <-time.After(failoverDeadline):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("only %d creates acknowledged before the kill in %s (%d failed)", len(acks), failoverDeadline, run.failed)
	}
	killed.Store(true)
	require.NoError(t, set.Kill(run.oldMaster)) // SIGKILL, returns once the process is reaped
	mu.Lock()
	killedAt = time.Now()
	mu.Unlock()
	select {
	case <-done:
	case <-time.After(failoverDeadline):
		logSentinels(t)
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%d creates acknowledged after the kill within %s (first after %s), %d failed",
			after, failoverDeadline, recovered.Sub(killedAt), run.failed)
	}
	close(stop)
	wg.Wait()
	select {
	case at := <-switchedAt:
		run.switched = at.Sub(killedAt)
	case <-time.After(failoverDeadline):
		logSentinels(t)
		t.Fatal("no +switch-master from a Sentinel")
	}
	if restartOnSwitch {
		require.NoError(t, <-restartErr, "restart the killed server")
	}
	run.newMaster, err = set.Master(ctx)
	require.NoError(t, err)
	require.NotEqual(t, run.oldMaster, run.newMaster, "the Sentinels promoted the replica")
	run.recovery = recovered.Sub(killedAt)
	run.afterCount = after

	// What was acknowledged, and whether get finds it now.
	acked := map[int64]ack{}
	for _, a := range acks {
		if _, ok := acked[a.id]; ok {
			run.dupAcked++
		}
		acked[a.id] = a
	}
	run.acked = len(acks)
	// A core that starts now knows no id block from memory: it finds a
	// job's type in the blocks hash, which the failover may have lost too.
	r, err := redisstore.Open(nodetest.SentinelConn(t))
	require.NoError(t, err)
	defer r.Close()
	fresh, err := r.Store(redisstore.Config{Prefix: prefixOf(t, c.Redis, jobType)})
	require.NoError(t, err)
	ids := slices.Collect(maps.Keys(acked))
	found, foundFresh := getAll(t, c.Client.Get, ids), getAll(t, fresh.Get, ids)
	for id, a := range acked {
		if !found[id] || !foundFresh[id] {
			run.lost++
			run.lostLag = max(run.lostLag, killedAt.Sub(a.at))
			require.True(t, a.at.Before(killedAt), "job %d, acknowledged %s after the kill, is lost", id, a.at.Sub(killedAt))
		}
		if found[id] && !foundFresh[id] {
			run.lostFresh++
		}
	}

	// What is stored: the type's jobs index, its ready queue and its job
	// hashes. Anything there that was not acknowledged is an orphan unless
	// get finds it (a create whose reply was lost: the producer does not
	// know, which a unique_key settles).
	rdb := c.Redis
	prefix := prefixOf(t, rdb, jobType)
	keyOf := func(name string) string { return prefix + ":{" + jobType + "}:" + name }
	stored := map[int64]bool{}
	jobIDs, err := rdb.ZRange(ctx, keyOf("jobs"), 0, -1).Result()
	require.NoError(t, err)
	for _, m := range jobIDs {
		stored[atoi(t, m)] = true
	}
	ready, err := rdb.ZRange(ctx, keyOf("ready"), 0, -1).Result()
	require.NoError(t, err)
	inReady := map[int64]int{}
	for _, m := range ready {
		_, id, ok := strings.Cut(m, ":") // "<seq>:<id>"
		require.True(t, ok, "ready member %q", m)
		n := atoi(t, id)
		stored[n] = true
		if inReady[n]++; inReady[n] == 2 {
			run.dupReady++
		}
	}
	iter := rdb.Scan(ctx, 0, keyOf("job:*"), 1000).Iterator()
	for iter.Next(ctx) {
		stored[atoi(t, strings.TrimPrefix(iter.Val(), keyOf("job:")))] = true
	}
	require.NoError(t, iter.Err())
	var unacked []int64
	for id := range stored {
		if _, ok := acked[id]; !ok {
			unacked = append(unacked, id)
		}
	}
	for id, ok := range getAll(t, c.Client.Get, unacked) {
		if ok {
			run.unacked++
		} else {
			run.orphans++
			t.Logf("orphan: job %d is stored but get does not find it", id)
		}
	}

	// Every job in the queue is leased once.
	leased := map[int64]int{}
	for {
		jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{jobType}, Max: 100, Worker: "check"})
		require.NoError(t, err)
		if len(jobs) == 0 {
			break
		}
		for _, j := range jobs {
			if leased[j.ID]++; leased[j.ID] == 2 {
				run.dupLeased++
			}
		}
	}
	require.Len(t, leased, len(inReady), "every job in the ready queue was leased")
	return run
}

// prefixOf finds the key prefix of the one store on the test's Sentinel
// set that has jobs of jobType: nodetest gives each test a prefix of its
// own and deletes its keys when the test ends, and each test here uses a
// type of its own.
func prefixOf(t *testing.T, rdb *redis.Client, jobType string) string {
	t.Helper()
	suffix := ":{" + jobType + "}:jobs"
	var found []string
	iter := rdb.Scan(t.Context(), 0, "*"+suffix, 1000).Iterator()
	for iter.Next(t.Context()) {
		found = append(found, strings.TrimSuffix(iter.Val(), suffix))
	}
	require.NoError(t, iter.Err())
	require.Len(t, found, 1, "stores with jobs of type %s", jobType)
	return found[0]
}

// getAll gets each id with get, a few at a time, and says which ones it
// found; any error other than not found fails the test.
func getAll(t *testing.T, get func(context.Context, int64) (*core.Job, error), ids []int64) map[int64]bool {
	t.Helper()
	found := make(map[int64]bool, len(ids))
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for part := range slices.Chunk(ids, max(1, (len(ids)+3)/4)) {
		wg.Go(func() {
			for _, id := range part {
				_, err := get(t.Context(), id)
				if err != nil && !errors.Is(err, core.ErrNotFound) {
					select {
					case errs <- fmt.Errorf("get %d: %w", id, err):
					default:
					}
					return
				}
				mu.Lock()
				found[id] = err == nil
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	return found
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err, "id %q", s)
	return n
}
