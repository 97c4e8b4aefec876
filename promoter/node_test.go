package promoter_test

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/promoter"
)

func TestLeaderRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		alive []string
		want  string
	}{
		{"no member has no leader", nil, ""},
		{"a ring of one leads itself", []string{"node-c"}, "node-c"},
		{"the lowest name leads, whatever the order", []string{"node-c", "node-a", "node-b"}, "node-a"},
		{"names compare byte-wise, not as numbers", []string{"node-10", "node-9"}, "node-10"},
		{"capitals sort before lower case", []string{"b", "B"}, "B"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, promoter.LeaderOf(tc.alive))
		})
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  promoter.NodeConfig
		want string
	}{
		{"a missing name", promoter.NodeConfig{}, `node name ""`},
		{"a name that is not one token", promoter.NodeConfig{Name: "node.a"}, `node name "node.a"`},
		{"a bind address without port", promoter.NodeConfig{Name: "a", Bind: "127.0.0.1"}, `bind address "127.0.0.1" is not HOST:PORT`},
		{"a bind host name", promoter.NodeConfig{Name: "a", Bind: "localhost:7946"}, `bind address "localhost:7946": host must be an IP address`},
		{"an advertise port out of range", promoter.NodeConfig{Name: "a", Advertise: "10.0.0.1:70000"}, `advertise address "10.0.0.1:70000": port must be a number`},
		{"a seed with port 0", promoter.NodeConfig{Name: "a", Seeds: []string{"node-b:0"}}, `seed address "node-b:0": port 0`},
		{"a negative leave timeout", promoter.NodeConfig{Name: "a", LeaveTimeout: -1}, "leave timeout -1ns is negative"},
		{"a bad loop limit", promoter.NodeConfig{Name: "a", Loop: promoter.LoopConfig{Limit: -1}}, "loop limit -1"},
		{"a bad rescue interval", promoter.NodeConfig{Name: "a", Rescue: promoter.RescueConfig{Interval: -1}}, "rescue interval -1ns is negative"},
		{"a loop call timeout no core can meet", promoter.NodeConfig{Name: "a", Loop: promoter.LoopConfig{CallTimeout: time.Millisecond}}, "loop call timeout 1ms is under 10ms"},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			t.Parallel()
			tc.cfg.Conn = &nats.Conn{} // never used: validation comes first
			_, err := promoter.New(tc.cfg)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestNewFailsWhenTheAddressIsTaken(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: binds loopback sockets")
	}
	t.Parallel()
	ns := bustest.NewServer(t)
	first := startNode(t, promoter.NodeConfig{Name: "a", Conn: ns.Conn})
	_, err := promoter.New(promoter.NodeConfig{Name: "b", Bind: first.Addr(), Memberlist: memberlist.DefaultLocalConfig(), Conn: ns.Conn})
	require.ErrorContains(t, err, "promoter: memberlist on "+first.Addr())
}

func TestASeedListThatNamesTheNodeItselfIsFine(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: binds loopback sockets")
	}
	t.Parallel()
	// Production configs often give every node the same seed list.
	ns := bustest.NewServer(t)
	a := startNode(t, promoter.NodeConfig{Name: "a", Conn: ns.Conn})
	b := startNode(t, promoter.NodeConfig{Name: "b", Conn: ns.Conn, Seeds: []string{a.Addr()}})
	selfAddr := bustest.FreeAddr(t)
	c := startNode(t, promoter.NodeConfig{Name: "c", Bind: selfAddr, Conn: ns.Conn, Seeds: []string{selfAddr, a.Addr(), b.Addr()}})
	require.Equal(t, selfAddr, c.Addr())
	require.Eventually(t, func() bool {
		st := c.Status()
		return st.Leader == "a" && len(st.Members) == 3
	}, waitTimeout, 10*time.Millisecond)
}

// startNode runs a node with the local preset on a free loopback port
// until the test ends.
func startNode(t *testing.T, cfg promoter.NodeConfig) *promoter.Node {
	t.Helper()
	cfg.Bind = cmp.Or(cfg.Bind, "127.0.0.1:0")
	cfg.Memberlist = memberlist.DefaultLocalConfig()
	n, err := promoter.New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, waitFor(t, done, "Run to return"))
		waitMemberlistGone(t, n)
	})
	return n
}

// waitMemberlistGone waits until no goroutine of the node's memberlist is
// left. Memberlist's Shutdown does not wait for a probe in flight, which
// ends at its own deadline, up to a probe interval later; the leak check
// after the tests would report it.
func waitMemberlistGone(t *testing.T, n *promoter.Node) {
	t.Helper()
	ptr := fmt.Sprintf("(0x%x", reflect.ValueOf(promoter.MemberlistOf(n)).Pointer())
	require.Eventually(t, func() bool {
		buf := make([]byte, 8<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(stacks, "\n\n") {
			if strings.Contains(g, "github.com/hashicorp/memberlist.") && strings.Contains(g, ptr) {
				return false
			}
		}
		return true
	}, waitTimeout, 20*time.Millisecond, "memberlist goroutines of %s remain after Run returned", n.Name())
}

func TestANodeWithoutTheGossipKeyCannotJoinNorLead(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: binds loopback sockets")
	}
	t.Parallel()
	key := []byte("0123456789abcdef0123456789abcdef")
	ns := bustest.NewServer(t)
	b := startNode(t, promoter.NodeConfig{Name: "b", Conn: ns.Conn, SecretKey: key})
	c := startNode(t, promoter.NodeConfig{Name: "c", Conn: ns.Conn, SecretKey: key, Seeds: []string{b.Addr()}})
	require.Eventually(t, func() bool { return len(b.Status().Members) == 2 && len(c.Status().Members) == 2 },
		waitTimeout, 10*time.Millisecond, "two members with the key did not form a ring")

	// The attack: a member named "aaa", which would lead by name,
	// tries to join without the key, then with a wrong one. Join returns
	// once b has refused its push-pull, so b's view after it is final.
	for _, intruderKey := range [][]byte{nil, []byte("fedcba9876543210fedcba9876543210")} {
		mc := memberlist.DefaultLocalConfig()
		mc.Name, mc.BindAddr, mc.BindPort = "aaa", "127.0.0.1", 0
		mc.SecretKey = intruderKey
		mc.LogOutput = io.Discard
		intruder, err := memberlist.Create(mc)
		require.NoError(t, err)
		joined, err := intruder.Join([]string{b.Addr()})
		require.Error(t, err)
		require.Zero(t, joined)
		require.NoError(t, intruder.Shutdown())
	}
	for _, n := range []*promoter.Node{b, c} {
		st := n.Status()
		require.Equal(t, "b", st.Leader)
		for _, m := range st.Members {
			require.NotEqual(t, "aaa", m.Name)
		}
	}
}

func TestNewRejectsASecretKeyOfTheWrongSize(t *testing.T) {
	t.Parallel()
	_, err := promoter.New(promoter.NodeConfig{Name: "a", Conn: &nats.Conn{}, SecretKey: []byte("short")})
	require.ErrorContains(t, err, "promoter: secret key of 5 bytes: it must be 16, 24 or 32 bytes")
}
