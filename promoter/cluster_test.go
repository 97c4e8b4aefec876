package promoter_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/promoter"
)

// These tests run, in one process, what three `kuebus node` processes with
// every role run: three NATS servers routed together, three cores on one
// Redis, three members of one memberlist ring on loopback sockets.

func TestLeaderIsTheAliveMemberWithTheLowestName(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Redis, NATS and loopback sockets")
	}
	t.Parallel()
	c := newCluster(t)

	// Start in reverse order: each newcomer has a lower name and takes
	// over. A newcomer joins before it first evaluates, so it never leads
	// a ring of its own on the way.
	nc := c.add("node-c", nodeOpts{})
	require.True(t, nc.nextTerm(t, waitTimeout).leading, "a ring of one leads itself")

	nb := c.add("node-b", nodeOpts{})
	c.waitLeader("node-b", nc, nb)
	require.True(t, nb.nextTerm(t, waitTimeout).leading)
	require.False(t, nc.nextTerm(t, waitTimeout).leading, "node-c must step down for node-b")

	na := c.add("node-a", nodeOpts{})
	c.waitLeader("node-a", nc, nb, na)
	c.waitRouted(nc, nb, na)
	require.True(t, na.nextTerm(t, waitTimeout).leading)
	require.False(t, nb.nextTerm(t, waitTimeout).leading, "node-b must step down for node-a")
	requireNoTermChange(t, na, nb, nc)

	t.Run("cluster.status gets one answer through any server", func(t *testing.T) {
		for _, n := range []*clusterNode{na, nb, nc} {
			st, err := promoter.FetchStatus(t.Context(), clientConn(t, n), n.client.Subjects())
			require.NoError(t, err)
			require.Equal(t, "node-a", st.Leader)
			require.Contains(t, []string{"node-a", "node-b", "node-c"}, st.Self)
			require.Len(t, st.Members, 3)
			for i, name := range []string{"node-a", "node-b", "node-c"} {
				require.Equal(t, name, st.Members[i].Name)
				require.Equal(t, promoter.MemberAlive, st.Members[i].State)
				require.NotEmpty(t, st.Members[i].Addr)
			}
		}
	})

	requireNoTermChange(t, na, nb, nc)
}

func TestFailoverAfterTheLeaderCrashes(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Redis, NATS and loopback sockets")
	}
	t.Parallel()
	c := newCluster(t)
	na := c.add("node-a", nodeOpts{})
	nb := c.add("node-b", nodeOpts{})
	nc := c.add("node-c", nodeOpts{})
	c.waitRouted(na, nb, nc)
	c.waitLeader("node-a", na, nb, nc)
	require.True(t, na.nextTerm(t, waitTimeout).leading)
	requireNoTermChange(t, nb, nc)
	watch := watchRing(t, nb.client, "report", na.conn(), nb.conn(), nc.conn())
	leaders := leaderEvents(t, nb.client)

	// Jobs falling due over the next 1.5 s: all of them while the ring
	// still takes node-a for alive, so nobody promotes them until node-b
	// has taken over.
	const jobs = 300
	promoteAt := make(map[int64]int64, jobs)
	specs := make([]core.Spec, jobs)
	for i := range specs {
		specs[i] = core.Spec{Type: "report", Delay: time.Duration(500+i*1000/jobs) * time.Millisecond}
	}
	created, err := nb.client.CreateBulk(t.Context(), specs)
	require.NoError(t, err)
	for _, j := range created {
		promoteAt[j.ID] = j.PromoteAt
	}

	crashed := time.Now()
	na.crash(t)

	took := nb.nextTerm(t, clusterWait)
	require.True(t, took.leading)
	failover := took.at.Sub(crashed)
	t.Logf("failover after a crash (memberlist local preset): node-b leads %v after node-a vanished", failover)
	ev := waitFor(t, leaders, "queue.leader naming node-b")
	require.Equal(t, "node-b", ev.Leader)
	c.waitLeader("node-b", nb, nc)

	watch.waitCount(t, jobs, waitTimeout)
	watch.barrier(t, nb.client.Subjects(), "report", nb.conn(), nc.conn())
	byID, total := watch.snapshot()
	require.Len(t, byID, jobs)
	require.Equal(t, jobs, total, "some job was promoted twice")
	var latest int64
	for id, evs := range byID {
		require.GreaterOrEqual(t, evs[0].At, promoteAt[id], "job %d promoted before its promote_at", id)
		latest = max(latest, evs[0].At)
	}
	// Every job fell due before node-b took over: all are promoted by its
	// first calls, right after.
	require.Less(t, time.UnixMilli(latest).Sub(took.at), 2*time.Second, "the jobs that fell due meanwhile were not promoted right after the failover")
	require.Zero(t, na.moved.Load(), "node-a promoted after it crashed")

	for state, want := range map[core.State]int64{core.StateDelayed: 0, core.StateInactive: jobs} {
		n, err := nb.client.Count(t.Context(), state, "report")
		require.NoError(t, err)
		require.Equal(t, want, n, "jobs %s", state)
	}
}

func TestHandoverOnLeaveTakesUnderASecond(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Redis, NATS and loopback sockets")
	}
	t.Parallel()
	c := newCluster(t)
	na := c.add("node-a", nodeOpts{})
	nb := c.add("node-b", nodeOpts{})
	nc := c.add("node-c", nodeOpts{})
	c.waitRouted(na, nb, nc)
	c.waitLeader("node-a", na, nb, nc)
	require.True(t, na.nextTerm(t, waitTimeout).leading)
	requireNoTermChange(t, nb, nc)
	leaders := leaderEvents(t, nb.client)

	stopped := time.Now()
	na.stop(t) // Run leaves the ring before it returns
	require.False(t, na.nextTerm(t, waitTimeout).leading)
	took := nb.nextTerm(t, clusterWait)
	require.True(t, took.leading)
	handover := took.at.Sub(stopped)
	t.Logf("handover on a graceful stop (Leave): node-b leads %v after node-a began to stop", handover)
	require.Less(t, handover, time.Second)
	require.Equal(t, "node-b", waitFor(t, leaders, "queue.leader naming node-b").Leader)
	c.waitLeader("node-b", nb, nc)

	st := nb.ring().Status()
	require.Equal(t, []promoter.Member{
		{Name: "node-a", Addr: st.Members[0].Addr, State: promoter.MemberGone},
		{Name: "node-b", Addr: nb.ring().Addr(), State: promoter.MemberAlive},
		{Name: "node-c", Addr: nc.ring().Addr(), State: promoter.MemberAlive},
	}, st.Members)

	// The new leader promotes.
	watch := watchRing(t, nc.client, "email", nb.conn(), nc.conn())
	job, err := nc.client.Create(t.Context(), "email", nil, &core.CreateOpts{Delay: 50 * time.Millisecond})
	require.NoError(t, err)
	watch.waitCount(t, 1, waitTimeout)
	byID, _ := watch.snapshot()
	require.Contains(t, byID, job.ID)
}

func TestTwoLeadersPromoteEachJobExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Redis, NATS and loopback sockets")
	}
	t.Parallel()
	c := newCluster(t)
	// Two rings of one, as a partition of the ring would leave them: each
	// node leads. NATS is still routed and both cores share the Redis keys,
	// so both loops promote the same jobs.
	nx := c.add("node-x", nodeOpts{limit: 50})
	ny := c.add("node-y", nodeOpts{limit: 50, alone: true})
	c.waitRouted(nx, ny)
	require.True(t, nx.nextTerm(t, waitTimeout).leading)
	require.True(t, ny.nextTerm(t, waitTimeout).leading)
	require.Equal(t, "node-x", nx.ring().Status().Leader)
	require.Equal(t, "node-y", ny.ring().Status().Leader)
	watch := watchRing(t, nx.client, "bulk", nx.conn(), ny.conn())

	// 10,000 jobs, all due at the same moment, shortly after they exist.
	const jobs = 10_000
	dueAt := time.Now().Add(3 * time.Second).UnixMilli()
	promoteAt := make(map[int64]int64, jobs)
	for range jobs / 1000 {
		specs := make([]core.Spec, 1000)
		delay := max(dueAt-time.Now().UnixMilli(), 1)
		for i := range specs {
			specs[i] = core.Spec{Type: "bulk", Delay: time.Duration(delay) * time.Millisecond}
		}
		created, err := nx.client.CreateBulk(t.Context(), specs)
		require.NoError(t, err)
		for _, j := range created {
			promoteAt[j.ID] = j.PromoteAt
		}
	}
	require.Len(t, promoteAt, jobs)

	require.Eventually(t, func() bool {
		n, err := nx.client.Count(context.Background(), core.StateDelayed, "bulk")
		return err == nil && n == 0
	}, clusterWait, 20*time.Millisecond, "delayed jobs remain")
	watch.barrier(t, nx.client.Subjects(), "bulk", nx.conn(), ny.conn())

	byID, total := watch.snapshot()
	t.Logf("node-x moved %d jobs, node-y %d", nx.moved.Load(), ny.moved.Load())
	require.Positive(t, nx.moved.Load(), "node-x never promoted: the loops did not run at once")
	require.Positive(t, ny.moved.Load(), "node-y never promoted: the loops did not run at once")
	require.EqualValues(t, jobs, nx.moved.Load()+ny.moved.Load(), "jobs moved by both loops")
	require.Equal(t, jobs, total, "promotion events: some job was promoted twice")
	for id, at := range promoteAt {
		evs := byID[id]
		require.Len(t, evs, 1, "job %d: %d promotion events", id, len(evs))
		require.GreaterOrEqual(t, evs[0].At, at, "job %d promoted before its promote_at", id)
	}
	n, err := nx.client.Count(t.Context(), core.StateInactive, "bulk")
	require.NoError(t, err)
	require.EqualValues(t, jobs, n)
}

// clientConn is the NATS connection of the node's test client.
func clientConn(t *testing.T, n *clusterNode) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(n.nats().ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}
