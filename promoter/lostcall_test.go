package promoter_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/promoter"
)

// These tests put a "black hole" in core's queue group: a member that takes
// calls and never answers, as a core does that is killed -9 while a call is
// on its way to it (its NATS server lives on, so the caller hears nothing,
// not "no responders"). The loops must notice within their call timeout and
// call again, instead of waiting for the client's 10s default.

func TestLostCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Redis and NATS")
	}
	t.Parallel()

	// NATS hands each request to a random member of the queue group. To be
	// deterministic, the first call finds only the black hole; the test
	// then starts a real core and takes the black hole away while that call
	// still waits, so the retry can only reach the real core. The first
	// core's stop drains its subscriptions in the background, so a first
	// call may still reach it and be refused at once: RetryDelay is short
	// here, and the tests with a live core show that a timed-out call does
	// not wait it.

	t.Run("a promote call lost with a dying core is made again after the call timeout", func(t *testing.T) {
		t.Parallel()
		c := nodetest.NewCore(t, service.Config{})
		promoted := watchPromotions(t, c, "email")
		job, err := c.Client.Create(t.Context(), "email", nil, &core.CreateOpts{Delay: time.Millisecond})
		require.NoError(t, err)
		require.NoError(t, c.Service.Stop(t.Context()))

		hole := newBlackHole(t, c, bus.MethodPromote)
		startLoop(t, promoter.LoopConfig{Core: c.Client, RetryDelay: 10 * time.Millisecond})
		waitFor(t, hole.calls, "the promote call the dying core took")

		restartCore(t, c, service.Config{})
		hole.close(t)
		got := waitFor(t, promoted, "the job's promotion event")
		require.Equal(t, job.ID, got.ev.ID)
	})

	t.Run("a rescue call lost with a dying core is made again after the call timeout", func(t *testing.T) {
		t.Parallel()
		clock := nodetest.NewClock(time.Now())
		c := nodetest.NewCore(t, service.Config{Now: clock.Now})
		stalled := watchEvents(t, c, bus.EventStalled, "scan")
		job, err := c.Client.Create(t.Context(), "scan", nil, nil)
		require.NoError(t, err)
		leased, err := c.Client.Lease(t.Context(), core.LeaseRequest{Types: []string{"scan"}, TTL: 1000})
		require.NoError(t, err)
		require.Len(t, leased, 1)
		clock.Advance(2 * time.Second) // the lease ran out
		require.NoError(t, c.Service.Stop(t.Context()))

		hole := newBlackHole(t, c, bus.MethodRescue)
		startRescueLoop(t, promoter.RescueConfig{Core: c.Client, RetryDelay: 10 * time.Millisecond, Now: clock.Now})
		waitFor(t, hole.calls, "the rescue call the dying core took")

		restartCore(t, c, service.Config{Now: clock.Now})
		hole.close(t)
		got := waitFor(t, stalled, "the job's stalled event")
		require.Equal(t, job.ID, got.ID)
	})

	// Beside a live core the black hole is a member that died and still
	// holds its place in the queue group: it takes about every other call.

	t.Run("the promote loop keeps promoting while a black hole beside core swallows calls", func(t *testing.T) {
		t.Parallel()
		c := nodetest.NewCore(t, service.Config{})
		promoted := watchPromotions(t, c, "email")
		hole := newBlackHole(t, c, bus.MethodPromote)
		warns := make(chan slog.Record, 1000)
		startLoop(t, promoter.LoopConfig{
			Core:        c.Client,
			MaxSleep:    10 * time.Millisecond,
			RetryDelay:  time.Minute,
			CallTimeout: 50 * time.Millisecond,
			Logger:      slog.New(warnHandler{warns}),
		})
		waitFor(t, hole.calls, "a promote call the black hole took")
		w := waitFor(t, warns, "the lost call's warning")
		require.Equal(t, time.Duration(0), attr(w, "retry_in").Duration(), "a timed-out call is made again at once: %v", w)

		for range 3 {
			job, err := c.Client.Create(t.Context(), "email", nil, &core.CreateOpts{Delay: time.Millisecond})
			require.NoError(t, err)
			got := waitFor(t, promoted, "the job's promotion event")
			require.Equal(t, job.ID, got.ev.ID)
		}
	})

	t.Run("the rescue loop keeps rescuing while a black hole beside core swallows calls", func(t *testing.T) {
		t.Parallel()
		clock := nodetest.NewClock(time.Now())
		c := nodetest.NewCore(t, service.Config{Now: clock.Now})
		stalled := watchEvents(t, c, bus.EventStalled, "")
		hole := newBlackHole(t, c, bus.MethodRescue)
		startRescueLoop(t, promoter.RescueConfig{
			Core:        c.Client,
			Interval:    10 * time.Millisecond,
			RetryDelay:  time.Minute,
			CallTimeout: 50 * time.Millisecond,
			Now:         clock.Now,
		})
		waitFor(t, hole.calls, "a rescue call the black hole took")

		for i := range 3 {
			// A type each, so the lease takes the new job, not one rescued before.
			jobType := fmt.Sprintf("scan%d", i)
			job, err := c.Client.Create(t.Context(), jobType, nil, nil)
			require.NoError(t, err)
			leased, err := c.Client.Lease(t.Context(), core.LeaseRequest{Types: []string{jobType}, TTL: 1000})
			require.NoError(t, err)
			require.Len(t, leased, 1)
			clock.Advance(2 * time.Second)
			got := waitFor(t, stalled, "the job's stalled event")
			require.Equal(t, job.ID, got.ID)
		}
	})
}

func TestCallTimeoutMustBeSensible(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		want    string
	}{
		{"a negative call timeout", -time.Second, "call timeout -1s is negative"},
		{"a call timeout no core can meet", time.Millisecond, "call timeout 1ms is under 10ms"},
		{"a call timeout that would hold due jobs back for minutes", 2 * time.Minute, "call timeout 2m0s is over 1m0s"},
	} {
		t.Run("the promote loop refuses "+tc.name, func(t *testing.T) {
			t.Parallel()
			err := promoter.RunLoop(t.Context(), promoter.LoopConfig{Core: unusedCore{}, CallTimeout: tc.timeout})
			require.ErrorContains(t, err, "promoter: loop "+tc.want)
		})
		t.Run("the rescue loop refuses "+tc.name, func(t *testing.T) {
			t.Parallel()
			err := promoter.RunRescueLoop(t.Context(), promoter.RescueConfig{Core: unusedRescuer{}, CallTimeout: tc.timeout})
			require.ErrorContains(t, err, "promoter: rescue "+tc.want)
		})
	}
}

// unusedRescuer is a Rescuer that a rescue loop with a bad config must
// never touch.
type unusedRescuer struct{ promoter.Rescuer }

// blackHole is a member of core's queue group on one method that never
// answers.
type blackHole struct {
	nc  *nats.Conn
	sub *nats.Subscription
	// calls gets a token for every call the black hole took.
	calls chan struct{}
}

// newBlackHole joins core's queue group on method's subject, on a connection
// of core's side, and returns once the server routes calls to it.
func newBlackHole(t *testing.T, c *nodetest.Core, method string) *blackHole {
	t.Helper()
	h := &blackHole{calls: make(chan struct{}, 1000)}
	sub, err := c.NATS.Conn.QueueSubscribe(c.Client.Subjects().Core(method), bus.CoreQueueGroup, func(*nats.Msg) {
		select {
		case h.calls <- struct{}{}:
		default:
		}
	})
	require.NoError(t, err)
	require.NoError(t, c.NATS.Conn.Flush())
	h.nc, h.sub = c.NATS.Conn, sub
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return h
}

// close leaves the queue group, as the killed core's subscription does when
// its connection drops; the calls it took stay unanswered.
func (h *blackHole) close(t *testing.T) {
	t.Helper()
	require.NoError(t, h.sub.Unsubscribe())
	require.NoError(t, h.nc.Flush())
}

// restartCore starts a new core service on c's store and NATS server, the
// one that answers after the first died; cfg may set its clock.
func restartCore(t *testing.T, c *nodetest.Core, cfg service.Config) {
	t.Helper()
	cfg.Store, cfg.Conn = c.Store, c.NATS.Conn
	svc, err := service.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Stop(context.Background()) })
}

// startRescueLoop runs RunRescueLoop until the end of the test, whose
// cleanup requires it to return nil.
func startRescueLoop(t *testing.T, cfg promoter.RescueConfig) {
	t.Helper()
	start(t, func(ctx context.Context) error { return promoter.RunRescueLoop(ctx, cfg) })
}

// watchEvents reports every event of one kind on jobs of jobType.
func watchEvents(t *testing.T, c *nodetest.Core, event, jobType string) <-chan *core.Event {
	t.Helper()
	ch := make(chan *core.Event, 1000)
	sub, err := c.Client.Subscribe(c.Client.Subjects().JobEventsOf(event, jobType), func(ev *core.Event) {
		select {
		case ch <- ev:
		default:
		}
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return ch
}

// attr is the value of a record's attribute; the zero Value when absent.
func attr(r slog.Record, key string) slog.Value {
	var v slog.Value
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value
			return false
		}
		return true
	})
	return v
}
