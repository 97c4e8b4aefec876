package promoter_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/bus/embedded"
	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/promoter"
)

// clusterWait bounds a wait that includes memberlist's failure detection
// (about 3 to 6 s with the local preset), with room for -race.
const clusterWait = 20 * time.Second

// cluster is what the nodes of one test share: a Redis key prefix, and the
// first NATS server and memberlist member, which the others route to and
// join.
type cluster struct {
	t      *testing.T
	rdb    *redis.Client
	prefix string
	nodes  []*clusterNode
}

// clusterNode is one node as `kuebus node` with every role but http runs
// it (package node): an embedded NATS server routed to the cluster's, a
// core on it, and a promoter node in the ring.
type clusterNode struct {
	name   string
	node   *node.Node
	client *core.Client // a client over TCP to this node's NATS server
	moved  atomic.Int64 // jobs this node's loops moved while it led

	// terms receives OnTerm's reports with the time they were made.
	terms chan termEvent
	once  sync.Once
}

// nats is the node's embedded NATS server.
func (n *clusterNode) nats() *embedded.Server { return n.node.NATS() }

// conn is the core's own connection, for publish barriers.
func (n *clusterNode) conn() *nats.Conn { return n.node.CoreConn() }

// ring is the node's promoter member.
func (n *clusterNode) ring() *promoter.Node { return n.node.Promoter() }

type termEvent struct {
	leading bool
	at      time.Time
}

func newCluster(t *testing.T) *cluster {
	rdb := nodetest.NewRedis(t)
	return &cluster{t: t, rdb: rdb, prefix: nodetest.Prefix(t, rdb)}
}

// nodeOpts varies a node; the zero value joins the cluster's first node.
type nodeOpts struct {
	alone bool // no seeds: a ring of its own (its NATS server is routed all the same)
	limit int  // the promote loop's limit
}

// add starts a node named name. Every node routes its NATS server to the
// first node's and, unless alone, takes its memberlist address as the seed.
func (c *cluster) add(name string, o nodeOpts) *clusterNode {
	t := c.t
	t.Helper()
	embedded := &clusterconfig.EmbeddedNATS{Listen: "127.0.0.1:0", ClusterName: "kuebus-test", ClusterListen: "127.0.0.1:0"}
	var seeds []string
	if len(c.nodes) > 0 {
		first := c.nodes[0]
		embedded.Routes = []string{"nats-route://" + first.nats().ClusterAddr().String()}
		if !o.alone {
			seeds = []string{first.ring().Addr()}
		}
	}
	n := &clusterNode{name: name, terms: make(chan termEvent, 100)}
	var err error
	n.node, err = node.Start(t.Context(), node.Config{
		Node: &clusterconfig.Config{
			Name:        name,
			Roles:       []string{clusterconfig.RoleNATS, clusterconfig.RoleCore, clusterconfig.RolePromoter},
			RedisPrefix: c.prefix,
			NATS:        clusterconfig.NATS{Embedded: embedded},
			Memberlist:  clusterconfig.Memberlist{Bind: "127.0.0.1:0", Preset: clusterconfig.PresetLocal, Seeds: seeds},
			Redis:       clusterconfig.Redis{URL: nodetest.RedisURL(t)},
		},
		Promoter: func(pc *promoter.NodeConfig) {
			leaderCore, err := core.NewClient(pc.Conn, nil)
			require.NoError(t, err)
			pc.Core = countingCore{leaderCore, &n.moved}
			pc.Loop = promoter.LoopConfig{Limit: o.limit}
			pc.JoinRetry = 50 * time.Millisecond
			pc.OnTerm = func(leading bool) {
				n.terms <- termEvent{leading: leading, at: time.Now()}
			}
		},
	})
	t.Cleanup(func() { n.stop(t) })
	require.NoError(t, err)
	n.client, err = core.NewClient(bustest.Connect(t, n.nats().ClientURL()), nil)
	require.NoError(t, err)
	c.nodes = append(c.nodes, n)
	return n
}

// stop stops the node as `kuebus node` does on SIGTERM, and requires a
// clean stop: its promoter leaves the ring (unless the node was crashed
// first), then its core and NATS server stop.
func (n *clusterNode) stop(t *testing.T) {
	n.once.Do(func() {
		require.NoError(t, n.node.Stop())
		if ring := n.ring(); ring != nil {
			waitMemberlistGone(t, ring)
		}
	})
}

// crash stops the node as kill -9 would: its memberlist vanishes without a
// leave message, its loops stop, and its core and NATS server go away.
func (n *clusterNode) crash(t *testing.T) {
	promoter.Crash(n.ring())
	n.stop(t)
}

// waitRouted waits until every NATS server has a route to every other.
func (c *cluster) waitRouted(nodes ...*clusterNode) {
	c.t.Helper()
	require.Eventually(c.t, func() bool {
		for _, n := range nodes {
			if n.nats().NumRoutes() < len(nodes)-1 {
				return false
			}
		}
		return true
	}, clusterWait, 10*time.Millisecond, "the NATS servers did not route to each other")
}

// waitLeader waits until every node of nodes sees exactly nodes as its
// alive members and leader as their leader.
func (c *cluster) waitLeader(leader string, nodes ...*clusterNode) {
	c.t.Helper()
	require.Eventually(c.t, func() bool {
		for _, n := range nodes {
			st := n.ring().Status()
			alive := 0
			for _, m := range st.Members {
				if m.State == promoter.MemberAlive {
					alive++
				}
			}
			if st.Leader != leader || alive != len(nodes) {
				return false
			}
		}
		return true
	}, clusterWait, 10*time.Millisecond, "the nodes did not agree on leader %s", leader)
}

// countingCore counts the jobs its promote calls moved.
type countingCore struct {
	promoter.LeaderCore
	moved *atomic.Int64
}

func (c countingCore) Promote(ctx context.Context, limit int) (*core.MoveReply, error) {
	r, err := c.LeaderCore.Promote(ctx, limit)
	if err == nil {
		c.moved.Add(int64(r.Moved))
	}
	return r, err
}

// promotions records every promotion event of one job type, with unlimited
// pending messages so that none is dropped.
type promotions struct {
	mu     sync.Mutex
	byID   map[int64][]*core.Event
	total  int
	probes map[string]bool
	grew   chan struct{}
}

// probeType marks barrier messages: published on the promotion subject of
// the watched type with id 0, which no job has.
const probeID = 0

// watchRing subscribes on sub to the promotion events of jobType and
// waits until messages published on every conn in from reach it: after
// that, the NATS route interest is in place and no event is missed.
func watchRing(t *testing.T, sub *core.Client, jobType string, from ...*nats.Conn) *promotions {
	t.Helper()
	p := &promotions{byID: make(map[int64][]*core.Event), probes: make(map[string]bool), grew: make(chan struct{}, 1)}
	s, err := sub.Subscribe(sub.Subjects().JobEventsOf(bus.EventPromotion, jobType), func(ev *core.Event) {
		p.mu.Lock()
		if ev.ID == probeID {
			p.probes[ev.Error] = true
		} else {
			p.byID[ev.ID] = append(p.byID[ev.ID], ev)
			p.total++
		}
		p.mu.Unlock()
		select {
		case p.grew <- struct{}{}:
		default:
		}
	})
	require.NoError(t, err)
	require.NoError(t, s.SetPendingLimits(-1, -1))
	t.Cleanup(func() { _ = s.Unsubscribe() })
	p.barrier(t, sub.Subjects(), jobType, from...)
	return p
}

// barrier publishes a probe on each conn until the subscriber has seen one
// from each. A probe follows, on its connection, every event published
// before it, so after barrier every such event has been counted.
func (p *promotions) barrier(t *testing.T, subj bus.Subjects, jobType string, from ...*nats.Conn) {
	t.Helper()
	tag := fmt.Sprintf("probe-%d", time.Now().UnixNano())
	require.Eventually(t, func() bool {
		for i, nc := range from {
			name := fmt.Sprintf("%s-%d", tag, i)
			p.mu.Lock()
			seen := p.probes[name]
			p.mu.Unlock()
			if seen {
				continue
			}
			data, err := bus.Encode(&core.Event{Event: bus.EventPromotion, ID: probeID, Error: name})
			require.NoError(t, err)
			_ = nc.Publish(subj.Job(bus.EventPromotion, probeID, jobType), data)
			_ = nc.Flush()
			return false
		}
		return true
	}, clusterWait, 20*time.Millisecond, "probes did not reach the subscriber")
}

// waitCount waits until n distinct jobs have had a promotion event.
func (p *promotions) waitCount(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		got := len(p.byID)
		p.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-p.grew:
		case <-deadline.C:
			t.Fatalf("after %v only %d of %d jobs were promoted", timeout, got, n)
		}
	}
}

// snapshot returns a copy of the events by job id and their total.
func (p *promotions) snapshot() (map[int64][]*core.Event, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[int64][]*core.Event, len(p.byID))
	for id, evs := range p.byID {
		out[id] = append([]*core.Event(nil), evs...)
	}
	return out, p.total
}

// leaderEvents records queue.leader announcements.
func leaderEvents(t *testing.T, sub *core.Client) <-chan *core.Event {
	t.Helper()
	ch := make(chan *core.Event, 100)
	s, err := sub.Subscribe(sub.Subjects().Queue(bus.QueueLeader), func(ev *core.Event) { ch <- ev })
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Unsubscribe() })
	return ch
}

// nextTerm waits for the node's next OnTerm report.
func (n *clusterNode) nextTerm(t *testing.T, timeout time.Duration) termEvent {
	t.Helper()
	select {
	case ev := <-n.terms:
		return ev
	case <-time.After(timeout):
		t.Fatalf("%s: no leadership change within %v", n.name, timeout)
		panic("unreachable")
	}
}

// requireNoTermChange fails when a node reported a term change that the
// test has not consumed.
func requireNoTermChange(t *testing.T, nodes ...*clusterNode) {
	t.Helper()
	for _, n := range nodes {
		select {
		case ev := <-n.terms:
			t.Fatalf("%s: unexpected leadership change: leading=%v", n.name, ev.leading)
		default:
		}
	}
}
