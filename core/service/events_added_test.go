package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/node/redisproc"
)

// TestSetPriorityPublishesTheNewPriority on job.priority.<id>.<type>; a
// bad priority is invalid, changes nothing and publishes nothing.
func TestSetPriorityPublishesTheNewPriority(t *testing.T) {
	c, _ := newCore(t)
	evs := events(t, c, c.Client.Subjects().JobEventsOf(bus.EventPriority, "email"))
	job, err := c.Client.Create(ctx, "email", nil, nil)
	require.NoError(t, err)
	_, err = c.Client.SetPriority(ctx, job.ID, core.PriorityHigh)
	require.NoError(t, err)
	ev := next(t, evs)
	require.Equal(t, "priority", ev.Event)
	require.Equal(t, job.ID, ev.ID)
	require.Equal(t, core.PriorityHigh, *ev.Priority)
	require.Equal(t, core.PriorityHigh, ev.Job.Priority)

	_, code := raw(t, c, bus.MethodSetPriority, `{"id":1,"priority":"urgent"}`)
	require.Equal(t, "invalid", code)
	_, err = c.Client.SetPriority(ctx, job.ID, core.PriorityLow)
	require.NoError(t, err)
	require.Equal(t, core.PriorityLow, *next(t, evs).Priority, "the next event is the next change: the bad call published none")
}

// TestQueueErrorIsPublishedOncePerSecondPerCode: with Redis down every call
// fails unavailable; the first publishes queue.error, the next within the
// second only counts, and the first after it carries that count. A
// caller's mistake (invalid) publishes none.
func TestQueueErrorIsPublishedOncePerSecondPerCode(t *testing.T) {
	t.Parallel()
	srv, err := redisproc.Start(ctx, redisproc.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	st, err := redisstore.New(redisstore.Config{Client: rdb, Prefix: "qerr"})
	require.NoError(t, err)
	ns := bustest.NewServer(t)
	clock := nodetest.NewClock(t0)
	svc, err := service.New(service.Config{Store: st, Conn: ns.Conn, Now: clock.Now})
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Stop(context.Background()) })
	cc := bustest.Connect(t, ns.ClientURL())
	client, err := core.NewClient(cc, &core.ClientOptions{Timeout: 5 * time.Second})
	require.NoError(t, err)
	errs := make(chan *core.Event, 16)
	sub, err := client.Subscribe(client.Subjects().Queue(bus.QueueError), func(ev *core.Event) { errs <- ev })
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	require.NoError(t, cc.Flush()) // the subscription is in place

	require.NoError(t, srv.Kill())
	_, err = client.Get(ctx, 1)
	require.ErrorIs(t, err, core.ErrUnavailable)
	ev := next(t, errs)
	require.Equal(t, "error", ev.Event)
	require.Equal(t, "unavailable", ev.Code)
	require.Equal(t, "get", ev.Method)
	require.Contains(t, ev.Error, "redis")
	require.Equal(t, t0.UnixMilli(), ev.At)
	require.Zero(t, ev.Suppressed)

	_, err = client.Stats(ctx)
	require.ErrorIs(t, err, core.ErrUnavailable)
	_, err = client.Get(ctx, -1)
	require.ErrorIs(t, err, core.ErrInvalid)
	clock.Advance(time.Second)
	_, err = client.Types(ctx)
	require.ErrorIs(t, err, core.ErrUnavailable)
	ev = next(t, errs)
	require.Equal(t, "types", ev.Method, "stats, within the second, published nothing; invalid is not core's")
	require.Equal(t, 1, ev.Suppressed, "stats was counted")
}
