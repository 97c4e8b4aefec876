package core_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// traceOf is a valid traceparent whose parent id ends in n.
func traceOf(n int) string {
	return fmt.Sprintf("00-4bf92f3577b34da6a3ce929d0e0e4736-%016x-01", n+1)
}

// TestBatchedCreatesKeepTheTraceOfTheirOwnContext: the client's middleware
// sees each create with its caller's context, before the client joins
// concurrent creates into one create_bulk; each create's traceparent header
// (set in its context, as a tracing middleware does) becomes its own spec's
// trace, so each stored job has the trace of the call that made it.
func TestBatchedCreatesKeepTheTraceOfTheirOwnContext(t *testing.T) {
	c := nodetest.NewCore(t, service.Config{})
	ctx := context.Background()
	bulks := make(chan *nats.Msg, 16)
	sub, err := c.NATS.Conn.ChanSubscribe(c.Client.Subjects().Core(bus.MethodCreateBulk), bulks)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	require.NoError(t, c.NATS.Conn.Flush())

	var mu sync.Mutex
	seen := map[string]string{} // the traceparent a middleware saw, per data
	record := func(next core.CallFunc) core.CallFunc {
		return func(ctx context.Context, method string, req, reply any) error {
			if sp, ok := req.(core.Spec); ok && method == bus.MethodCreate {
				mu.Lock()
				seen[string(sp.Data)] = bus.OutgoingHeader(ctx).Get(bus.HeaderTraceparent)
				mu.Unlock()
			}
			return next(ctx, method, req, reply)
		}
	}
	client, err := core.NewClient(bustest.Connect(t, c.NATS.ClientURL()), &core.ClientOptions{Middleware: []core.CallMiddleware{record}})
	require.NoError(t, err)
	held, release := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	core.HoldCreates(client, func() {
		once.Do(func() { held <- struct{}{}; <-release })
	})

	first := make(chan error, 1)
	go func() {
		_, err := client.Create(bus.WithHeader(ctx, bus.HeaderTraceparent, traceOf(99)), "mail", 99, nil)
		first <- err
	}()
	<-held // the first create is on its way, alone

	const calls = 10
	jobs, errs := make([]*core.Job, calls), make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			jobs[i], errs[i] = client.Create(bus.WithHeader(ctx, bus.HeaderTraceparent, traceOf(i)), "mail", i, nil)
		})
	}
	require.Eventually(t, func() bool { return core.CreatesWaiting(client) == calls }, 10*time.Second, time.Millisecond)
	close(release)
	require.NoError(t, <-first)
	wg.Wait()

	for i := range calls {
		require.NoError(t, errs[i], "create %d", i)
		require.Equal(t, traceOf(i), jobs[i].Trace, "create %d", i)
		got, err := c.Client.Get(ctx, jobs[i].ID)
		require.NoError(t, err)
		require.Equal(t, traceOf(i), got.Trace, "create %d stored its own trace", i)
		require.Equal(t, traceOf(i), seen[fmt.Sprint(i)], "the middleware saw create %d with its own context", i)
	}
	select {
	case <-bulks: // the waiting creates went as one create_bulk
	case <-time.After(10 * time.Second):
		t.Fatal("no create_bulk was sent")
	}
}
