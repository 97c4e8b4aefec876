package promoter_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/promoter"
)

// logRecords keeps the records logged with component=memberlist.
type logRecords struct {
	mu      sync.Mutex
	records []slog.Record
}

func newLogRecords() *logRecords { return &logRecords{} }

func (l *logRecords) all() []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]slog.Record(nil), l.records...)
}

// recordHandler records what a logger With("component", "memberlist")
// writes at Warn and above (every level with everyLevel); other
// components' records are dropped.
type recordHandler struct {
	to         *logRecords
	everyLevel bool
	memberlist bool
}

func (h recordHandler) Enabled(_ context.Context, l slog.Level) bool {
	return h.everyLevel || l >= slog.LevelWarn
}
func (h recordHandler) WithGroup(string) slog.Handler { return h }
func (h recordHandler) WithAttrs(as []slog.Attr) slog.Handler {
	for _, a := range as {
		if a.Key == "component" {
			h.memberlist = a.Value.String() == "memberlist"
		}
	}
	return h
}
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	if !h.memberlist {
		return nil
	}
	h.to.mu.Lock()
	defer h.to.mu.Unlock()
	h.to.records = append(h.to.records, r.Clone())
	return nil
}

// countAttr is a record's "count" attribute, 0 without one.
func countAttr(r slog.Record) int {
	n := 0
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "count" {
			n = int(a.Value.Int64())
		}
		return true
	})
	return n
}

func TestMemberlistLinesAreWrittenOncePerKindAndIntervalThenCounted(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		logs := newLogRecords()
		write, flushEvery := promoter.NewLogBridge(slog.New(recordHandler{to: logs}).With("component", "memberlist"), 10*time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		var flusher sync.WaitGroup
		flusher.Go(func() { flushEvery(ctx) })

		for i := range 5000 {
			write(fmt.Sprintf("[ERR] memberlist: Failed to decode ping request: garbage %d from=127.0.0.1:%d", i, 1000+i))
		}
		write("[WARN] memberlist: Got ping for unexpected node 'x' from=127.0.0.1:9")
		write("[ERR] memberlist: msg type (37) not supported from=127.0.0.1:9")
		write("[DEBUG] memberlist: not recorded: under Warn")
		got := logs.all()
		require.Len(t, got, 3, "the first line of each kind")
		require.Equal(t, "Failed to decode ping request: garbage 0 from=127.0.0.1:1000", got[0].Message)
		require.Equal(t, slog.LevelError, got[0].Level)
		require.Equal(t, slog.LevelWarn, got[1].Level)

		time.Sleep(10 * time.Second) // the interval ends (synctest's clock)
		synctest.Wait()
		got = logs.all()
		require.Len(t, got, 4, "one count for the one kind with lines not written")
		require.Equal(t, slog.LevelError, got[3].Level)
		require.Equal(t, "more memberlist lines like this were not written", got[3].Message)
		require.Equal(t, 4999, countAttr(got[3]))

		// A new interval writes the kind's first line again; the counts
		// of the last one come out when the bridge stops.
		write("[ERR] memberlist: Failed to decode ping request: again")
		write("[ERR] memberlist: Failed to decode ping request: and again")
		write("[ERR] memberlist: Failed to decode ping request: and again")
		cancel()
		flusher.Wait()
		got = logs.all()
		require.Len(t, got, 6)
		require.Equal(t, "Failed to decode ping request: again", got[4].Message)
		require.Equal(t, 2, countAttr(got[5]))
	})
}

func TestMemberlistLinesOfManyKindsAreBounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		logs := newLogRecords()
		write, flushEvery := promoter.NewLogBridge(slog.New(recordHandler{to: logs}).With("component", "memberlist"), 10*time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		var flusher sync.WaitGroup
		flusher.Go(func() { flushEvery(ctx) })
		// Words a sender chooses (a node name) make a kind each.
		for i := range 1000 {
			write(fmt.Sprintf("[ERR] memberlist: %s%c failed", string(rune('a'+i%26)), rune('a'+i/26%26)))
		}
		cancel()
		flusher.Wait()
		total := 0
		for _, r := range logs.all() {
			total += max(countAttr(r), 1)
		}
		require.LessOrEqual(t, len(logs.all()), 2*17, "16 kinds and one shared count, each a line and a count")
		require.Equal(t, 1000, total, "every line written or counted")
	})
}

func TestGarbageOnTheGossipPortIsLoggedAtABoundedRate(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: binds loopback sockets")
	}
	t.Parallel()
	ns := bustest.NewServer(t)
	logs := newLogRecords()
	n, err := promoter.New(promoter.NodeConfig{
		Name: "a", Bind: "127.0.0.1:0", Memberlist: memberlist.DefaultLocalConfig(), Conn: ns.Conn,
		// every level: each line memberlist logs must be accounted for
		Logger: slog.New(recordHandler{to: logs, everyLevel: true}),
		// One interval for the whole test: what Run's end writes is all.
		LogInterval: time.Hour,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()

	// The flood: 5,000 packets of random bytes on the gossip port,
	// each a line of memberlist's log. UDP may drop what the socket's
	// buffer cannot hold while memberlist's reader is behind (a loaded
	// machine, a small net.core.rmem_max), so the packets go in rounds of
	// 100, each sent once the bridge has taken half of the round before,
	// until it has taken 5,000 lines: what the bridge took is then known,
	// and its output must account for every one.
	udp, err := net.Dial("udp", n.Addr())
	require.NoError(t, err)
	defer udp.Close()
	const flood, round = 5000, 100
	for sent := 0; promoter.MemberlistLines(n) < flood; {
		require.Less(t, sent, 4*flood, "memberlist took %d of %d packets", promoter.MemberlistLines(n), sent)
		before := promoter.MemberlistLines(n)
		for i := range round {
			p := make([]byte, 1+(sent+i)%64)
			_, _ = rand.Read(p)
			_, err := udp.Write(p)
			require.NoError(t, err)
		}
		sent += round
		require.Eventually(t, func() bool { return promoter.MemberlistLines(n) >= before+round/2 }, waitTimeout,
			time.Millisecond, "memberlist read the round of packets")
	}
	cancel()
	require.NoError(t, waitFor(t, done, "Run to return"))
	waitMemberlistGone(t, n)
	taken := promoter.MemberlistLines(n)

	got := logs.all()
	accounted := 0
	for _, r := range got {
		accounted += max(countAttr(r), 1)
	}
	t.Logf("%d lines written for %d memberlist lines", len(got), accounted)
	// Kinds are bounded (16, and a shared count for each of the four
	// levels), each a line and a count: 40 at most, whatever the flood.
	require.LessOrEqual(t, len(got), 2*(16+4))
	require.Equal(t, taken, accounted, "every line memberlist logged is written or counted")
}
