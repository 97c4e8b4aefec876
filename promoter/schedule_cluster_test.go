package promoter_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// tickEvents records the enqueue events of one job type, in order, with no
// pending limit so that none is dropped.
func tickEvents(t *testing.T, sub *core.Client, jobType string) <-chan *core.Event {
	t.Helper()
	ch := make(chan *core.Event, 1000)
	s, err := sub.Subscribe(sub.Subjects().JobEventsOf(bus.EventEnqueue, jobType), func(ev *core.Event) { ch <- ev })
	require.NoError(t, err)
	require.NoError(t, s.SetPendingLimits(-1, -1))
	t.Cleanup(func() { _ = s.Unsubscribe() })
	return ch
}

// requireTicksOnce checks the jobs of a schedule: one per tick, each on
// the schedule's grid (anchor + whole intervals) and created at or after
// its tick, and returns their ticks, sorted.
func requireTicksOnce(t *testing.T, c *core.Client, jobType string, anchor, every int64) []int64 {
	t.Helper()
	jobs, err := c.Range(t.Context(), core.RangeRequest{Type: jobType, From: 0, To: 999})
	require.NoError(t, err)
	var ticks []int64
	for _, j := range jobs {
		require.Equal(t, "s", j.Schedule, "job %d", j.ID)
		require.Zero(t, (j.ScheduleAt-anchor)%every, "job %d: tick %d is off the grid", j.ID, j.ScheduleAt)
		require.GreaterOrEqual(t, j.CreatedAt, j.ScheduleAt, "job %d made before its tick", j.ID)
		ticks = append(ticks, j.ScheduleAt)
	}
	slices.Sort(ticks)
	require.Equal(t, slices.Compact(slices.Clone(ticks)), ticks, "a tick made two jobs")
	return ticks
}

// TestScheduleTicksOnceAcrossAFailover: a two-member ring fires a schedule
// of every second; the leader crashes between two ticks; the other member
// takes over and fires the ticks missed meanwhile once (the latest of
// them), then every tick again. Every tick that made a job made one, on
// time or later, never early.
func TestScheduleTicksOnceAcrossAFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Redis, NATS and loopback sockets")
	}
	// Not parallel: ticks a second apart are timing, and the failover tests
	// of this package judge timing too; run alone, neither slows the other.
	c := newCluster(t)
	na := c.add("node-a", nodeOpts{})
	nb := c.add("node-b", nodeOpts{})
	c.waitRouted(na, nb)
	c.waitLeader("node-a", na, nb)
	require.True(t, na.nextTerm(t, waitTimeout).leading)
	requireNoTermChange(t, nb)
	evs := tickEvents(t, nb.client, "tick")

	every := core.MinEvery.Milliseconds()
	sc, err := nb.client.SetSchedule(t.Context(), &core.ScheduleSetRequest{Name: "s", Every: new(core.MinEvery), Spec: core.Spec{Type: "tick"}})
	require.NoError(t, err)
	anchor := sc.NextAt - every

	// node-a fires two ticks; right after the second, it crashes.
	var before []int64
	for range 2 {
		ev := waitFor(t, evs, "a tick fired by node-a")
		before = append(before, ev.Job.ScheduleAt)
	}
	require.Equal(t, []int64{sc.NextAt, sc.NextAt + every}, before, "node-a fires each tick in turn")
	crashed := time.Now()
	na.crash(t)

	took := nb.nextTerm(t, clusterWait)
	require.True(t, took.leading)
	t.Logf("node-b leads %v after node-a vanished", took.at.Sub(crashed))
	// node-b's first job is for the latest tick missed meanwhile, then it
	// fires the ticks in turn (on a loaded machine a tick may pass unfired
	// when a call comes more than an interval late; the next call fires
	// the latest).
	first := waitFor(t, evs, "node-b's first tick").Job.ScheduleAt
	require.Greater(t, first, before[1])
	require.LessOrEqual(t, first, took.at.UnixMilli()+every, "node-b fires the latest missed tick, not the first")
	last := first
	for range 2 {
		at := waitFor(t, evs, "a tick fired by node-b").Job.ScheduleAt
		require.Greater(t, at, last, "a tick fired twice, or out of turn")
		last = at
	}

	ticks := requireTicksOnce(t, nb.client, "tick", anchor, every)
	require.GreaterOrEqual(t, len(ticks), 5)
	t.Logf("%d jobs; the %d ticks between node-a's last and node-b's first made no job", len(ticks), (first-before[1])/every-1)
}

// TestTwoLeadersFireEachTickOnce: two rings of one, as a partition would
// leave them, both lead and both fire the same schedule: each tick makes
// one job.
func TestTwoLeadersFireEachTickOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Redis, NATS and loopback sockets")
	}
	// Not parallel: ticks a second apart are timing, and the failover tests
	// of this package judge timing too; run alone, neither slows the other.
	c := newCluster(t)
	nx := c.add("node-x", nodeOpts{})
	ny := c.add("node-y", nodeOpts{alone: true})
	c.waitRouted(nx, ny)
	require.True(t, nx.nextTerm(t, waitTimeout).leading)
	require.True(t, ny.nextTerm(t, waitTimeout).leading)
	evs := tickEvents(t, nx.client, "tick")

	every := core.MinEvery.Milliseconds()
	sc, err := nx.client.SetSchedule(t.Context(), &core.ScheduleSetRequest{Name: "s", Every: new(core.MinEvery), Spec: core.Spec{Type: "tick"}})
	require.NoError(t, err)
	// Each job is for a later tick than the one before. A tick may pass
	// without a job when no leader got to call within the interval (a
	// loaded machine); then the next call fires the latest, once.
	last := int64(0)
	for range 4 {
		at := waitFor(t, evs, "a tick").Job.ScheduleAt
		require.Greater(t, at, last, "a tick fired twice, or out of turn")
		last = at
	}
	ticks := requireTicksOnce(t, nx.client, "tick", sc.NextAt-every, every)
	require.GreaterOrEqual(t, len(ticks), 4)
}
