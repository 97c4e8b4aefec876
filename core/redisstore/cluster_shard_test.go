package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/node/redisproc"
	"github.com/kuebus/kuebus/promoter"
)

// Finding 4 of issue 15: one dead shard must stop only its own types.
//
// The test breaks a cluster of its own (nodetest.NewShardCluster): 3 masters
// with no replica, so that the killed master stays down with no failover,
// and cluster-require-full-coverage off, so that the live masters go on
// serving their slots once the cluster has seen the master fail (with it
// on, the default, every master refuses every key then: see
// docs/reliability.md). Job types are picked so that each master owns
// two, and the master killed is not the one of {_} (the types list, which
// every call over all types reads first).
//
// Before shard isolation, lease, promote, rescue, count and stats read all
// types in one pipeline and failed whole: lease handed out nothing,
// promote and rescue moved nothing (checked: both tests fail at their
// first lease on the code before).

// shardTypes returns two job types per master of c (by the master's
// address) and the address of a master that does not hold {_}.
func shardTypes(t *testing.T, c *redisproc.Cluster) (byMaster map[string][]string, victim string) {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	defer rdb.Close()
	ctx := t.Context()
	master := func(key string) string {
		m, err := rdb.MasterForKey(ctx, key)
		require.NoError(t, err)
		return m.Options().Addr
	}
	byMaster = map[string][]string{}
	for i := 0; len(byMaster) < 3 || slices.ContainsFunc(mapValues(byMaster), func(ts []string) bool { return len(ts) < 2 }); i++ {
		require.Less(t, i, 1000, "no two types per master in 1000 tries")
		jobType := fmt.Sprintf("s%d", i)
		addr := master("{" + jobType + "}")
		if len(byMaster[addr]) < 2 {
			byMaster[addr] = append(byMaster[addr], jobType)
		}
	}
	global := master("{_}")
	for addr := range byMaster {
		if addr != global {
			return byMaster, addr
		}
	}
	t.Fatal("every master holds {_}")
	return nil, ""
}

func mapValues(m map[string][]string) [][]string {
	var out [][]string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// requireTypesError checks that err is a *service.TypesError naming exactly
// want, with code unavailable, and a message that names each of them.
func requireTypesError(t *testing.T, err error, want []string) {
	t.Helper()
	var te *service.TypesError
	require.True(t, errors.As(err, &te), "want a TypesError naming %v, got %v", want, err)
	require.Equal(t, want, te.Types())
	require.Equal(t, bus.CodeUnavailable, bus.CodeOf(err))
	for _, jt := range want {
		require.Contains(t, err.Error(), jt)
	}
}

// splitTypes sorts byMaster's types into all, those of victim and the rest.
func splitTypes(byMaster map[string][]string, victim string) (all, dead, healthy []string) {
	for addr, types := range byMaster {
		all = append(all, types...)
		if addr == victim {
			dead = append(dead, types...)
		} else {
			healthy = append(healthy, types...)
		}
	}
	slices.Sort(all)
	slices.Sort(dead)
	slices.Sort(healthy)
	return all, dead, healthy
}

// seededShardStore is a Store on c with, per type of all, at 1000: 3
// ready jobs, 2 delayed ones due at 2000, one of the ready ones leased
// until 1500, and a schedule ticking every second from 2000.
func seededShardStore(t *testing.T, c *redisproc.Cluster, all []string) *redisstore.Store {
	t.Helper()
	r, err := redisstore.Open(redisstore.Conn{Cluster: &redisstore.Cluster{Addrs: c.Addrs()}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	st, err := r.Store(redisstore.Config{Prefix: "shard"})
	require.NoError(t, err)
	for _, jt := range all {
		specs := clusterSpecs(jt, 5)
		specs[3].Delay, specs[4].Delay = time.Second, time.Second
		_, _, err := st.Create(t.Context(), 1000, specs)
		require.NoError(t, err)
		leased, _, err := st.Lease(t.Context(), &service.LeaseParams{Now: 1000, Types: []string{jt}, Max: 1, Worker: "w", Token: "early", TTL: 500})
		require.NoError(t, err)
		require.Len(t, leased, 1)
		_, err = st.SetSchedule(t.Context(), 1000, &core.Schedule{Name: "every-" + jt, Every: 1000 * time.Millisecond, Spec: scheduleSpec(jt), NextAt: 2000})
		require.NoError(t, err)
	}
	return st
}

// requireDueSchedulesOf checks that due holds one schedule of each of types.
func requireDueSchedulesOf(t *testing.T, due []service.StoredSchedule, types []string) {
	t.Helper()
	var got []string
	for _, sc := range due {
		got = append(got, sc.Spec.Type)
	}
	slices.Sort(got)
	require.Equal(t, types, got)
}

func TestClusterDeadMasterStopsOnlyItsTypes(t *testing.T) {
	t.Parallel() // its cluster is its own
	c := nodetest.NewShardCluster(t)
	byMaster, victim := shardTypes(t, c)
	all, dead, healthy := splitTypes(byMaster, victim)
	st := seededShardStore(t, c, all)
	ctx := t.Context()

	nodetest.KillMaster(t, c, victim)

	// Lease over every type: the healthy types' 2 ready jobs each, and an
	// error that names the dead types.
	leased, _, err := st.Lease(ctx, &service.LeaseParams{Now: 3000, Types: all, Max: 100, Worker: "w", Token: "tok", TTL: 60_000})
	requireTypesError(t, err, dead)
	require.Len(t, leased, 2*len(healthy))
	for _, j := range leased {
		require.Contains(t, healthy, j.Type)
	}
	// A lease of the dead types alone fails whole, and names them.
	none, _, err := st.Lease(ctx, &service.LeaseParams{Now: 3000, Types: dead, Max: 10, Worker: "w", Token: "tok", TTL: 0})
	require.Empty(t, none)
	require.Equal(t, bus.CodeUnavailable, bus.CodeOf(err))
	var te *service.TypesError
	require.False(t, errors.As(err, &te), "a lease that served no type is a plain error: %v", err)
	for _, jt := range dead {
		require.Contains(t, err.Error(), jt)
	}

	// Promote and rescue move the healthy types' jobs.
	promoted, _, err := st.Promote(ctx, 3000, 1000)
	requireTypesError(t, err, dead)
	require.Len(t, promoted, 2*len(healthy))
	rescued, _, err := st.Rescue(ctx, 3000, 1000, 1)
	requireTypesError(t, err, dead)
	require.Len(t, rescued, len(healthy))
	schedules, _, err := st.DueSchedules(ctx, 3000, 100)
	requireTypesError(t, err, dead)
	requireDueSchedulesOf(t, schedules, healthy)
	for _, j := range append(promoted, rescued...) {
		require.Contains(t, healthy, j.Type)
		require.Equal(t, core.StateInactive, j.State)
	}

	// Counts: a dead type's count, and any count over all types, is an
	// error that names the dead types, never a number without them.
	n, err := st.Count(ctx, core.StateInactive, healthy[0])
	require.NoError(t, err)
	require.EqualValues(t, 3, n) // 2 promoted, 1 rescued
	_, err = st.Count(ctx, core.StateInactive, dead[0])
	require.Equal(t, bus.CodeUnavailable, bus.CodeOf(err))
	require.Contains(t, err.Error(), dead[0])
	_, err = st.Count(ctx, core.StateInactive, "")
	require.Equal(t, bus.CodeUnavailable, bus.CodeOf(err))
	for _, jt := range dead {
		require.Contains(t, err.Error(), jt)
	}

	// Stats: the healthy types' counts and a TypesError for the dead ones,
	// which are left out of the types and the totals.
	stats, err := st.Stats(ctx)
	requireTypesError(t, err, dead)
	require.NotNil(t, stats)
	for _, jt := range dead {
		require.NotContains(t, stats.Types, jt)
	}
	for _, jt := range healthy {
		require.Equal(t, int64(3), stats.Types[jt].Inactive, jt)
		require.Equal(t, int64(2), stats.Types[jt].Active, jt)
	}
	require.Equal(t, int64(3*len(healthy)), stats.Inactive)
	require.Equal(t, int64(2*len(healthy)), stats.Active)

	// The master back: every type answers again.
	require.NoError(t, c.Restart(ctx, victim))
	require.NoError(t, c.WaitReady(ctx))
	require.Eventually(t, func() bool {
		_, err := st.Stats(ctx)
		return err == nil
	}, 30*time.Second, 50*time.Millisecond, "stats still fails after the master came back")
}

// The same through a core: lease, promote and rescue replies, stats and
// count over the wire.
func TestClusterDeadMasterThroughCore(t *testing.T) {
	t.Parallel() // its cluster is its own
	c := nodetest.NewShardCluster(t)
	byMaster, victim := shardTypes(t, c)
	all, dead, _ := splitTypes(byMaster, victim)
	cr := nodetest.NewCoreOnCluster(t, service.Config{}, c)
	client := cr.Client
	ctx := t.Context()
	for _, jt := range all {
		_, err := client.CreateSpec(ctx, core.Spec{Type: jt})
		require.NoError(t, err)
		_, err = client.SetSchedule(ctx, &core.ScheduleSetRequest{Name: "every-" + jt, Every: new(core.MinEvery), Spec: core.Spec{Type: jt}})
		require.NoError(t, err)
	}

	errs := make(chan *core.Event, 16)
	_, err := client.Subscribe(client.Subjects().Queue(bus.QueueError), func(ev *core.Event) {
		select {
		case errs <- ev:
		default:
		}
	})
	require.NoError(t, err)

	nodetest.KillMaster(t, c, victim)

	jobs, err := client.Lease(ctx, core.LeaseRequest{Types: all, Max: 100, Worker: "w"})
	require.NoError(t, err, "a lease whose types are partly served succeeds")
	require.Len(t, jobs, len(all)-len(dead))
	for _, j := range jobs {
		require.NotContains(t, dead, j.Type)
	}
	// The failure is not hidden: queue.error names the dead types.
	select {
	case ev := <-errs:
		require.Equal(t, bus.MethodLease, ev.Method)
		require.Equal(t, string(bus.CodeUnavailable), ev.Code)
		for _, jt := range dead {
			require.Contains(t, ev.Error, jt)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no queue.error after a lease that skipped the dead types")
	}

	for name, call := range map[string]func() ([]core.TypeError, error){
		"promote": func() ([]core.TypeError, error) {
			r, err := client.Promote(ctx, 100)
			if err != nil {
				return nil, err
			}
			return r.TypeErrors, nil
		},
		"rescue": func() ([]core.TypeError, error) {
			r, err := client.Rescue(ctx, &core.RescueRequest{})
			if err != nil {
				return nil, err
			}
			return r.TypeErrors, nil
		},
		"clean": func() ([]core.TypeError, error) {
			r, err := client.Clean(ctx, 100)
			if err != nil {
				return nil, err
			}
			return r.TypeErrors, nil
		},
	} {
		typeErrors, err := call()
		require.NoError(t, err, name)
		var failed []string
		for _, te := range typeErrors {
			require.Equal(t, string(bus.CodeUnavailable), te.Code, name)
			require.NotEmpty(t, te.Error, name)
			failed = append(failed, te.Type)
		}
		require.Equal(t, dead, failed, name)
	}

	// Schedules: the healthy types' fire (their first tick is a second
	// after they were set, so poll until it has come), the dead ones are
	// named.
	var fired int
	var lastFailed []string
	poll := time.NewTicker(50 * time.Millisecond) // bounded polling, as require.Eventually
	defer poll.Stop()
	for deadline := time.Now().Add(10 * time.Second); fired < len(all)-len(dead); <-poll.C {
		reply, err := client.FireSchedules(ctx, 100)
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d healthy schedules fired in 10s; last reply %+v, error %v", fired, len(all)-len(dead), reply, err)
		}
		if err != nil {
			continue
		}
		lastFailed = lastFailed[:0]
		for _, te := range reply.TypeErrors {
			lastFailed = append(lastFailed, te.Type)
		}
		fired += reply.Fired
	}
	require.Equal(t, dead, lastFailed, "schedule_fire names the dead types")

	_, err = client.Stats(ctx)
	require.ErrorIs(t, err, bus.ErrUnavailable)
	for _, jt := range dead {
		require.Contains(t, err.Error(), jt)
	}
	st, err := client.StatsPartial(ctx)
	require.NoError(t, err)
	var failed []string
	for _, te := range st.TypeErrors {
		failed = append(failed, te.Type)
	}
	require.Equal(t, dead, failed)
	require.EqualValues(t, len(all)-len(dead), st.Active)
	_, err = client.Count(ctx, core.StateActive, "")
	require.ErrorIs(t, err, bus.ErrUnavailable)
	require.Contains(t, err.Error(), dead[0])
}

// A master that hangs (SIGSTOP: it accepts connections and answers
// nothing) rather than refusing them: the first lease that names its types
// waits for go-redis's read timeout (3 s) and serves the others; after it,
// lease, promote and rescue skip the hung types for a while
// (core/redisstore/shards.go) and answer at once, within the promoter's
// 1 s call timeout. Without that memory every promote call read the hung
// master again and timed out, so no type was promoted at all.
func TestClusterHungMasterStopsOnlyItsTypes(t *testing.T) {
	t.Parallel() // its cluster is its own
	c := nodetest.NewShardCluster(t)
	byMaster, victim := shardTypes(t, c)
	all, dead, healthy := splitTypes(byMaster, victim)
	st := seededShardStore(t, c, all)
	ctx := t.Context()

	pid := c.Node(victim).Pid()
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) }) // before the cluster's Stop

	leased, _, err := st.Lease(ctx, &service.LeaseParams{Now: 3000, Types: all, Max: 100, Worker: "w", Token: "tok", TTL: 60_000})
	requireTypesError(t, err, dead)
	require.Len(t, leased, 2*len(healthy))

	// As the promoter calls: each bounded by its call timeout.
	bounded := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(ctx, promoter.CallTimeoutDefault)
	}
	pctx, cancel := bounded()
	promoted, _, err := st.Promote(pctx, 3100, 1000)
	cancel()
	requireTypesError(t, err, dead)
	require.Len(t, promoted, 2*len(healthy))
	rctx, cancel := bounded()
	rescued, _, err := st.Rescue(rctx, 3200, 1000, 1)
	cancel()
	requireTypesError(t, err, dead)
	require.Len(t, rescued, len(healthy))
	sctx, cancel := bounded()
	schedules, _, err := st.DueSchedules(sctx, 3250, 100)
	cancel()
	requireTypesError(t, err, dead)
	requireDueSchedulesOf(t, schedules, healthy)
	lctx, cancel := bounded()
	again, _, err := st.Lease(lctx, &service.LeaseParams{Now: 3300, Types: all, Max: 100, Worker: "w", Token: "tok2", TTL: 60_000})
	cancel()
	requireTypesError(t, err, dead)
	require.Len(t, again, 3*len(healthy), "the promoted and the rescued jobs")

	// The master answers again: once its window has passed, its types are
	// tried and served again (2 ready jobs each: 3 made, 1 leased early).
	require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
	now := int64(20_000)
	var back []core.Job
	require.Eventually(t, func() bool {
		now += 20_000 // past any window
		jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: now, Types: dead, Max: 100, Worker: "w", Token: "tok3", TTL: 60_000})
		back = append(back, jobs...)
		return err == nil && len(back) == 2*len(dead)
	}, 30*time.Second, 50*time.Millisecond, "the hung master's types are not served again")
}
