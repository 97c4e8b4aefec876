package promoter

import "github.com/hashicorp/memberlist"

// Crash shuts the node's memberlist down without leaving the ring, as a
// killed process would: the others notice only by probing. Cancel the
// node's Run afterwards to stop its loops; it then skips the Leave.
func Crash(n *Node) {
	n.crashed.Store(true)
	_ = n.ml.Shutdown()
}

// LeaderOf is the leader rule, for its table test.
var LeaderOf = leaderOf

// MemberlistOf is the node's memberlist, for the tests that wait until its
// goroutines are gone.
func MemberlistOf(n *Node) *memberlist.Memberlist { return n.ml }
