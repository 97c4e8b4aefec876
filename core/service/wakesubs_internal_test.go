package service

import (
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
)

// TestWakeSubscriptionsFollowTheWaitingLeases: no type's wake events reach
// a core until a lease of that type waits; once watch returns, an event
// published on another connection arrives; the subscription outlives its
// last watch by wakeLinger, then goes.
func TestWakeSubscriptionsFollowTheWaitingLeases(t *testing.T) {
	srv := bustest.NewServer(t)
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	now := func() time.Time { return time.UnixMilli(clock.Load()) }
	woke := make(chan string, 10)
	subj := bus.Subjects{}
	w := newWakeSubs(srv.Conn, subj, func(m *nats.Msg) { woke <- m.Subject }, slog.New(slog.DiscardHandler), now)
	t.Cleanup(w.close)
	require(t, len(w.subscribed()) == 0, "subscribed before any lease waited: %v", w.subscribed())

	w.watch([]string{"a"})
	other := bustest.Connect(t, srv.ClientURL())
	want := subj.Job(bus.EventPromotion, 7, "a")
	if err := other.Publish(want, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-woke:
		require(t, got == want, "woke on %s, want %s", got, want)
	case <-time.After(10 * time.Second):
		t.Fatal("an event published after watch returned did not arrive")
	}
	w.unwatch([]string{"a"})
	require(t, slices.Equal(w.subscribed(), []string{"a"}), "dropped at once: %v", w.subscribed())

	clock.Add(wakeLinger.Milliseconds())
	w.unwatch(nil) // an unwatch of another lease sweeps
	require(t, len(w.subscribed()) == 0, "kept past the linger: %v", w.subscribed())
}
