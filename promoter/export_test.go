package promoter

import (
	"context"
	"log/slog"
	"time"

	"github.com/hashicorp/memberlist"
)

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

// MemberlistLines is how many lines the node's memberlist has logged so
// far, written or counted by its log bridge.
func MemberlistLines(n *Node) int { return n.mlog.taken() }

// NewLogBridge is the writer memberlist logs to, for its test: write
// takes one line, and flushEvery runs until ctx ends.
func NewLogBridge(log *slog.Logger, every time.Duration) (write func(line string), flushEvery func(ctx context.Context)) {
	b := newLogBridge(log, every, time.Now)
	return func(line string) { _, _ = b.Write([]byte(line + "\n")) }, b.flushEvery
}
