package promoter

import (
	"context"
	"fmt"
	"log"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/memberlist"
)

// Member states in Status.
const (
	// MemberAlive is a member memberlist lists: alive, or suspected but
	// not yet declared dead (memberlist does not tell those apart in its
	// public API). A suspected leader keeps leading until declared dead.
	MemberAlive = "alive"
	// MemberGone is a member this node saw that has since died or left. It
	// stays listed until it comes back or this node restarts.
	MemberGone = "gone"
)

// leaderOf is the leader rule: of the alive members, the one with the
// lowest name (byte-wise). Every member that sees the same members picks
// the same leader, and a member that joins with a higher name changes
// nothing. It returns "" for no members.
func leaderOf(alive []string) string {
	if len(alive) == 0 {
		return ""
	}
	return slices.Min(alive)
}

// evaluate reads the membership, records it for cluster.status and
// returns the leader by the rule. Only the leader loop calls it.
func (n *Node) evaluate() string {
	nodes := n.ml.Members()
	alive := make([]string, 0, len(nodes))
	present := make(map[string]bool, len(nodes))
	for _, nd := range nodes {
		alive = append(alive, nd.Name)
		present[nd.Name] = true
		n.known[nd.Name] = Member{Name: nd.Name, Addr: nd.Address(), State: MemberAlive}
	}
	for name, m := range n.known {
		if !present[name] && m.State != MemberGone {
			m.State = MemberGone
			n.known[name] = m
			n.log.Info("member gone", "member", name, "addr", m.Addr)
		}
	}
	leader := leaderOf(alive)
	members := make([]Member, 0, len(n.known))
	for _, m := range n.known {
		members = append(members, m)
	}
	slices.SortFunc(members, func(a, b Member) int { return strings.Compare(a.Name, b.Name) })

	n.mu.Lock()
	previous := n.status.Leader
	n.status = Status{Leader: leader, Self: n.cfg.Name, Members: members}
	n.mu.Unlock()
	if leader != previous {
		n.log.Info("leader", "leader", leader, "alive", len(alive))
	}
	return leader
}

// events is memberlist's event delegate. Its callbacks run on memberlist's
// goroutines, some while it holds its node lock: they only signal.
type events struct{ changed chan<- struct{} }

func (e events) signal() {
	select {
	case e.changed <- struct{}{}:
	default: // a re-evaluation is pending already; it reads the latest state
	}
}

func (e events) NotifyJoin(*memberlist.Node)   { e.signal() }
func (e events) NotifyLeave(*memberlist.Node)  { e.signal() }
func (e events) NotifyUpdate(*memberlist.Node) { e.signal() }

// memberlistConfig is the base preset with this node's name, addresses,
// events and logger.
func (n *Node) memberlistConfig() (*memberlist.Config, error) {
	base := n.cfg.Memberlist
	if base == nil {
		base = memberlist.DefaultLANConfig()
	}
	mc := *base
	mc.Name = n.cfg.Name
	host, port, err := splitAddr("bind", n.cfg.Bind, true)
	if err != nil {
		return nil, err
	}
	mc.BindAddr, mc.BindPort = host, port
	mc.AdvertiseAddr, mc.AdvertisePort = "", port
	if n.cfg.Advertise != "" {
		if mc.AdvertiseAddr, mc.AdvertisePort, err = splitAddr("advertise", n.cfg.Advertise, true); err != nil {
			return nil, err
		}
	}
	mc.Events = events{changed: n.changed}
	// With a key, memberlist refuses unencrypted gossip both ways
	// (GossipVerifyIncoming and Outgoing are on in every preset).
	mc.SecretKey = slices.Clone(n.cfg.SecretKey)
	mc.LogOutput = nil
	mc.Logger = log.New(n.mlog, "", 0)
	return &mc, nil
}

// join tries the seeds once and reports whether it reached one; it logs
// the first failure and then every 30th.
func (n *Node) join(failures *int) bool {
	count, err := n.ml.Join(n.cfg.Seeds)
	if count > 0 {
		if *failures >= 0 {
			n.log.Info("joined the ring", "seeds_reached", count, "members", n.ml.NumMembers())
		}
		*failures = -1 // joined: later rejoins log at debug level
		return true
	}
	switch {
	case *failures < 0:
		n.log.Debug("rejoin: no seed answers", "err", err)
	case *failures == 0 || *failures%30 == 0:
		n.log.Info("no seed answers yet; retrying", "seeds", n.cfg.Seeds, "err", err, "attempts", *failures+1)
	}
	if *failures >= 0 {
		*failures++
	}
	return false
}

// joinLoop goes on joining the seeds: every JoinRetry until one answered
// (or another member joined this one), then every Rejoin. Memberlist
// forgets dead members after a while, so the two halves of a ring split
// for longer than that would otherwise never merge again, and each would
// keep a leader of its own.
func (n *Node) joinLoop(ctx context.Context, failures int) {
	for {
		wait := n.cfg.Rejoin
		if failures >= 0 && n.ml.NumMembers() <= 1 {
			wait = n.cfg.JoinRetry
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		n.join(&failures)
	}
}

// splitAddr reads a HOST:PORT address. With ipOnly the host must be an IP
// literal, as memberlist needs for the addresses it binds and advertises;
// a seed may be a host name.
func splitAddr(what, addr string, ipOnly bool) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("promoter: %s address %q is not HOST:PORT", what, addr)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("promoter: %s address %q: port must be a number from 0 to 65535", what, addr)
	}
	if host == "" {
		return "", 0, fmt.Errorf("promoter: %s address %q has no host", what, addr)
	}
	if ipOnly && net.ParseIP(host) == nil {
		return "", 0, fmt.Errorf("promoter: %s address %q: host must be an IP address", what, addr)
	}
	return host, port, nil
}
