package node_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node"
	"github.com/kuebus/kuebus/node/nodetest"
)

// waitingLog is a log handler that signals on waiting when its node logs
// that it waits for JetStream (node.ensureEventStream's line), and keeps
// the node's lines about durable events in lines, for the test's log.
type waitingLog struct {
	node    string
	waiting chan struct{}
	lines   *eventLines
}

type eventLines struct {
	mu    sync.Mutex
	lines []string
}

func (h waitingLog) Enabled(context.Context, slog.Level) bool { return true }
func (h waitingLog) Handle(_ context.Context, r slog.Record) error {
	if !strings.HasPrefix(r.Message, "durable events") {
		return nil
	}
	if strings.HasPrefix(r.Message, "durable events: waiting for JetStream") {
		select {
		case h.waiting <- struct{}{}:
		default:
		}
	}
	line := h.node + " " + r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "replicas" || a.Key == "events_replicas" {
			line += " " + a.String()
		}
		return true
	})
	h.lines.mu.Lock()
	defer h.lines.mu.Unlock()
	h.lines.lines = append(h.lines.lines, line)
	return nil
}
func (h waitingLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h waitingLog) WithGroup(string) slog.Handler      { return h }

// started is the outcome of one node.Start run on its own goroutine.
type started struct {
	n   *node.Node
	err error
}

// TestDurableEventsOnAThreeNodeEmbeddedCluster runs durable events on
// kuebus's own routed NATS: three nodes with the nats and core roles, each
// an embedded server routed to the other two, started one after the other
// as `kuebus node` × 3 would be. The first waits (and says so) until the
// second gives JetStream its quorum; the third finds it ready. The stream
// exists once, with a copy on each of the three servers; events that
// cores publish through any node are stored and replay through any node;
// and once the stream leader's node is stopped, the two left elect a new
// leader, store new events and replay old and new; when it comes back, its
// copy catches up.
func TestDurableEventsOnAThreeNodeEmbeddedCluster(t *testing.T) {
	rdb := nodetest.NewRedis(t)
	prefix := nodetest.Prefix(t, rdb)
	names := []string{"jsc-a", "jsc-b", "jsc-c"}
	addrs := []string{bustest.FreeAddr(t), bustest.FreeAddr(t), bustest.FreeAddr(t)}
	waiting := make([]chan struct{}, 3)
	lines := &eventLines{}
	t.Cleanup(func() {
		lines.mu.Lock()
		defer lines.mu.Unlock()
		t.Logf("the nodes' durable events lines:\n%s", strings.Join(lines.lines, "\n"))
	})
	cfgs := make([]node.Config, 3)
	for i, name := range names {
		var routes []string
		for j, a := range addrs {
			if j != i {
				routes = append(routes, "nats-route://"+a)
			}
		}
		waiting[i] = make(chan struct{}, 1)
		cfgs[i] = node.Config{
			Node: &clusterconfig.Config{
				Name:        name,
				Roles:       []string{clusterconfig.RoleNATS, clusterconfig.RoleCore},
				RedisPrefix: prefix,
				NATS: clusterconfig.NATS{Embedded: &clusterconfig.EmbeddedNATS{
					Listen: "127.0.0.1:0", ClusterListen: addrs[i], Routes: routes, ClusterName: "jsc",
				}},
				Redis:  clusterconfig.Redis{URL: nodetest.RedisURL(t)},
				Events: clusterconfig.Events{Durable: true, StoreDir: t.TempDir()}, // file storage, replicas by default
			},
			Logger: slog.New(waitingLog{node: name, waiting: waiting[i], lines: lines}),
		}
	}
	nodes := make([]*node.Node, 3)
	t.Cleanup(func() {
		for _, n := range slices.Backward(nodes) {
			if n != nil {
				require.NoError(t, n.Stop())
			}
		}
	})
	start := func(i int) <-chan started {
		done := make(chan started, 1)
		go func() {
			n, err := node.Start(context.Background(), cfgs[i])
			done <- started{n, err}
		}()
		return done
	}
	await := func(i int, done <-chan started) {
		t.Helper()
		select {
		case s := <-done:
			nodes[i] = s.n
			require.NoError(t, s.err, "%s starts", names[i])
		case <-time.After(90 * time.Second): // beyond the node's own bound (eventStreamWait)
			t.Fatalf("%s did not start within 90s", names[i])
		}
	}

	// a alone: JetStream has no quorum, a waits and says so.
	t0 := time.Now()
	doneA := start(0)
	select {
	case <-waiting[0]:
	case s := <-doneA:
		nodes[0] = s.n
		t.Fatalf("%s started without a quorum (err %v): it should wait for one", names[0], s.err)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s neither started nor logged that it waits for JetStream", names[0])
	}
	// b makes the quorum: both start.
	doneB := start(1)
	await(0, doneA)
	await(1, doneB)
	t.Logf("a and b started %s after a began (a waited for b)", time.Since(t0).Round(time.Millisecond))
	// c joins a cluster that is ready.
	await(2, start(2))

	ctx := context.Background()
	jss := make([]jetstream.JetStream, 3)
	clients := make([]*core.Client, 3)
	for i, n := range nodes {
		nc := bustest.Connect(t, n.NATS().ClientURL())
		var err error
		jss[i], err = jetstream.New(nc)
		require.NoError(t, err)
		clients[i], err = core.NewClient(nc, nil)
		require.NoError(t, err)
	}

	// One stream, a copy on each server, all three current.
	var streams []string
	for name := range jss[2].StreamNames(ctx).Name() {
		streams = append(streams, name)
	}
	require.Equal(t, []string{"KUEBUS_EVENTS"}, streams, "the stream exists once")
	var info *jetstream.StreamInfo
	require.Eventually(t, func() bool {
		st, err := jss[0].Stream(ctx, "KUEBUS_EVENTS")
		if err != nil {
			return false
		}
		info = st.CachedInfo()
		return info.Cluster != nil && info.Cluster.Leader != "" && len(info.Cluster.Replicas) == 2 &&
			info.Cluster.Replicas[0].Current && info.Cluster.Replicas[1].Current
	}, 30*time.Second, 50*time.Millisecond, "a leader and two current replicas")
	require.Equal(t, 3, info.Config.Replicas)
	require.Equal(t, jetstream.FileStorage, info.Config.Storage)
	peers := []string{info.Cluster.Leader, info.Cluster.Replicas[0].Name, info.Cluster.Replicas[1].Name}
	slices.Sort(peers)
	require.Equal(t, names, peers, "one copy on each server")

	// Events through every node: a create on each node's NATS, served by
	// the core the queue group picks (NATS prefers the local one).
	typ := "jsc"
	var want []int64
	create := func(i int) {
		t.Helper()
		j, err := clients[i].Create(ctx, typ, map[string]int{"via": i}, nil)
		require.NoError(t, err)
		want = append(want, j.ID)
	}
	for range 3 {
		for i := range nodes {
			create(i)
		}
	}
	for i := range nodes {
		require.ElementsMatch(t, want, replayEnqueued(t, clients[i], typ, len(want)), "replayed through %s", names[i])
	}

	// Stop the stream leader's node: the two left elect a leader.
	leader := slices.Index(names, info.Cluster.Leader)
	require.NotEqual(t, -1, leader)
	stopping := time.Now()
	require.NoError(t, nodes[leader].Stop())
	stopped := time.Now()
	left := slices.DeleteFunc([]int{0, 1, 2}, func(i int) bool { return i == leader })
	require.Eventually(t, func() bool {
		st, err := jss[left[0]].Stream(ctx, "KUEBUS_EVENTS")
		if err != nil {
			return false
		}
		info = st.CachedInfo()
		return info.Cluster != nil && info.Cluster.Leader != "" && info.Cluster.Leader != names[leader]
	}, 30*time.Second, 50*time.Millisecond, "a new stream leader among the two left")
	t.Logf("%s (stream leader) stopped in %s; %s leads the stream %s after that", names[leader], stopped.Sub(stopping).Round(time.Millisecond),
		info.Cluster.Leader, time.Since(stopped).Round(time.Millisecond))

	// What a node that starts meanwhile does to the stream (the stopped
	// one coming back, or either of the two left after a restart of its
	// own) keeps its three replicas: with a copy's server down, the same
	// config needs no new placement, so FewerReplicas does not shrink it.
	kept, err := bus.EnsureEventStream(ctx, bustest.Connect(t, nodes[left[0]].NATS().ClientURL()), bus.Subjects{},
		bus.EventStreamConfig{Replicas: 3, FewerReplicas: true}) // the nodes' config: defaults, replicas 3

	require.NoError(t, err)
	require.Equal(t, 3, kept.Config.Replicas, "a start with one server down keeps the stream's three replicas")

	// The stream still takes events, and replays old and new.
	for range 3 {
		for _, i := range left {
			create(i)
		}
	}
	for _, i := range left {
		require.ElementsMatch(t, want, replayEnqueued(t, clients[i], typ, len(want)), "replayed through %s after %s stopped", names[i], names[leader])
	}

	// The stopped node comes back, on its own files: its copy catches up.
	await(leader, start(leader))
	require.Eventually(t, func() bool {
		st, err := jss[left[0]].Stream(ctx, "KUEBUS_EVENTS")
		if err != nil {
			return false
		}
		info = st.CachedInfo()
		ok := info.Cluster != nil && info.Cluster.Leader != "" && len(info.Cluster.Replicas) == 2
		for _, r := range info.Cluster.Replicas {
			ok = ok && r.Current
		}
		return ok
	}, 30*time.Second, 100*time.Millisecond, "the node back has a current copy")
}

// replayEnqueued replays the enqueue events of type typ through c from the
// stream's start until it has n of them, and returns their job ids in the
// stream's order; it fails when they are not all there within 30s.
func replayEnqueued(t *testing.T, c *core.Client, typ string, n int) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ids []int64
	var last uint64
	err := c.Replay(ctx, &core.ReplayOptions{Subject: c.Subjects().JobEventsOf("enqueue", typ)}, func(ev *core.Event) {
		require.Greater(t, ev.Seq, last, "in the stream's order")
		last = ev.Seq
		ids = append(ids, ev.ID)
		if len(ids) == n {
			cancel()
		}
	})
	require.NoError(t, err)
	require.Len(t, ids, n, fmt.Sprintf("enqueue events replayed: %v", ids))
	return ids
}
