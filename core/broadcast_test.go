package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestABroadcastIsKeptInTheDurableStream: with durable events on, a
// broadcast published while nobody listened is in the stream, data and
// all, and a consumer that comes later replays it (then its complete).
func TestABroadcastIsKeptInTheDurableStream(t *testing.T) {
	clock := nodetest.NewClock(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	c := nodetest.NewDurableCore(t, service.Config{Now: clock.Now})
	ctx := context.Background()
	job, err := c.Client.Create(ctx, "radio", map[string]string{"say": "hello"}, &core.CreateOpts{Broadcast: true, Delay: time.Minute})
	require.NoError(t, err)
	clock.Advance(time.Minute)
	mv, err := c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 1, mv.Moved)

	later := startConsumer(t, c.Client, &core.ReplayOptions{Subject: c.Client.Subjects().JobEventsOf("", "radio")})
	want := []string{bus.EventEnqueue, bus.EventBroadcast, bus.EventComplete}
	for _, event := range want {
		ev := later.next(t)
		require.Equal(t, event, ev.Event)
		require.Equal(t, job.ID, ev.ID)
		if event == bus.EventBroadcast {
			require.JSONEq(t, `{"say":"hello"}`, string(ev.Job.Data))
			require.Equal(t, job.PromoteAt, ev.At)
		}
	}
}

// TestSubscribeBroadcastRefusesABadType: a type that is no subject token
// is invalid before anything is subscribed.
func TestSubscribeBroadcastRefusesABadType(t *testing.T) {
	c := nodetest.NewCore(t, service.Config{})
	_, err := c.Client.SubscribeBroadcast("a.b", func(*core.Broadcast) {})
	require.ErrorIs(t, err, core.ErrInvalid)
	require.ErrorContains(t, err, "type")
}
