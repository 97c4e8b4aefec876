package core_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// consumer is a Replay run on its own goroutine, stopped by stop.
type consumer struct {
	events chan *core.Event
	stop   func()
}

func startConsumer(t *testing.T, c *core.Client, opts *core.ReplayOptions) *consumer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	events := make(chan *core.Event, 1024)
	go func() { done <- c.Replay(ctx, opts, func(ev *core.Event) { events <- ev }) }()
	stop := sync.OnceFunc(func() {
		cancel()
		require.NoError(t, <-done)
	})
	t.Cleanup(stop)
	return &consumer{events: events, stop: stop}
}

func (cs *consumer) next(t *testing.T) *core.Event {
	t.Helper()
	select {
	case ev := <-cs.events:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
		return nil
	}
}

// TestAConsumerThatWasDownReplaysEveryEventItMissed is issue 15's "a
// consumer that was down for 30 s replays every event it missed, in
// order, from the durable stream", without the 30 s: the consumer stops,
// jobs are created and run meanwhile, and the consumer comes back from the
// sequence after its last event; every missed event arrives once, in the
// stream's order, and then the live ones follow.
func TestAConsumerThatWasDownReplaysEveryEventItMissed(t *testing.T) {
	c := nodetest.NewDurableCore(t, service.Config{})
	ctx := context.Background()
	jobs := c.Client.Subjects().JobEventsOf("", "")

	// A plain subscriber stays up all along: what the consumer must
	// catch up on.
	all := make(chan *core.Event, 1024)
	sub, err := c.Client.Subscribe(jobs, func(ev *core.Event) { all <- ev })
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })

	first := startConsumer(t, c.Client, &core.ReplayOptions{Subject: jobs})
	j, err := c.Client.Create(ctx, "mail", nil, nil)
	require.NoError(t, err)
	ev := first.next(t)
	require.Equal(t, j.ID, ev.ID)
	last := ev.Seq
	<-all
	first.stop() // down

	// Meanwhile: creates, a lease and a completion, a removal.
	var missed []*core.Event
	for range 20 {
		_, err := c.Client.Create(ctx, "mail", map[string]int{"n": 1}, nil)
		require.NoError(t, err)
	}
	leased, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"mail"}, Max: 2, Worker: "w"})
	require.NoError(t, err)
	require.Len(t, leased, 2)
	require.NoError(t, c.Client.Complete(ctx, core.LeaseOp{ID: leased[0].ID, Lease: leased[0].Lease}))
	_, err = c.Client.Remove(ctx, j.ID)
	require.NoError(t, err)
	const want = 20 + 2 + 1 + 1 // enqueue ×20, start ×2, complete, remove
	for range want {
		select {
		case ev := <-all:
			missed = append(missed, ev)
		case <-time.After(10 * time.Second):
			t.Fatalf("the subscriber saw %d events of %d", len(missed), want)
		}
	}

	back := startConsumer(t, c.Client, &core.ReplayOptions{FromSeq: last + 1, Subject: jobs})
	for i, m := range missed {
		ev := back.next(t)
		require.Equal(t, last+1+uint64(i), ev.Seq, "event %d comes once, in stream order", i)
		require.Equal(t, m.Event, ev.Event, "event %d", i)
		require.Equal(t, m.ID, ev.ID, "event %d", i)
	}
	// Then live.
	j2, err := c.Client.Create(ctx, "mail", nil, nil)
	require.NoError(t, err)
	ev = back.next(t)
	require.Equal(t, bus.EventEnqueue, ev.Event)
	require.Equal(t, j2.ID, ev.ID)
	require.Equal(t, last+1+uint64(len(missed)), ev.Seq)
	select {
	case ev := <-back.events:
		t.Fatalf("an event twice or one too many: %+v", ev)
	default:
	}
}

func TestReplaySinceATime(t *testing.T) {
	c := nodetest.NewDurableCore(t, service.Config{})
	ctx := context.Background()
	_, err := c.Client.Create(ctx, "mail", nil, nil)
	require.NoError(t, err)
	cs := startConsumer(t, c.Client, &core.ReplayOptions{Since: time.Now().Add(-time.Minute)})
	require.Equal(t, bus.EventEnqueue, cs.next(t).Event)
}

func TestReplayWithoutDurableEventsSaysSo(t *testing.T) {
	c := nodetest.NewCore(t, service.Config{})
	err := c.Client.Replay(context.Background(), nil, func(*core.Event) {})
	require.ErrorIs(t, err, core.ErrNotDurable)
	require.ErrorContains(t, err, "events.durable")
}
