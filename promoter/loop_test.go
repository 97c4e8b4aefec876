package promoter_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/promoter"
)

// waitTimeout bounds every wait on a signal; generous for slow machines.
const waitTimeout = 5 * time.Second

func TestRunLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Redis and NATS")
	}
	t.Parallel()

	t.Run("promotes a delayed job on time, sleeping rather than spinning meanwhile", func(t *testing.T) {
		t.Parallel()
		c := nodetest.NewCore(t, service.Config{})
		promoted := watchPromotions(t, c, "email")
		rec := newRecorder()
		startLoop(t, promoter.LoopConfig{Core: c.Client, OnPromote: rec.hook})

		job, err := c.Client.Create(t.Context(), "email", map[string]string{"to": "a@b.c"}, &core.CreateOpts{Delay: 300 * time.Millisecond})
		require.NoError(t, err)
		require.Equal(t, core.StateDelayed, job.State)

		got := waitFor(t, promoted, "the job's promotion event")
		require.Equal(t, job.ID, got.ev.ID)
		require.GreaterOrEqual(t, got.at.UnixMilli(), job.PromoteAt, "promoted before its promote_at")
		require.Less(t, rec.calls.Load(), int64(20), "the loop spun instead of sleeping until next_due")
	})

	t.Run("wakes early when core announces a job due before the end of its sleep", func(t *testing.T) {
		t.Parallel()
		c := nodetest.NewCore(t, service.Config{})
		promoted := watchPromotions(t, c, "email")
		rec := newRecorder()
		startLoop(t, promoter.LoopConfig{Core: c.Client, MaxSleep: time.Minute, OnPromote: rec.hook})

		first := waitFor(t, rec.replies, "the first promote call")
		require.Equal(t, core.MoveReply{}, *first, "nothing was due and nothing waits")

		// The loop now sleeps for a minute; only queue.due can wake it in time.
		job, err := c.Client.Create(t.Context(), "email", nil, &core.CreateOpts{Delay: 100 * time.Millisecond})
		require.NoError(t, err)
		got := waitFor(t, promoted, "the job's promotion event")
		require.Equal(t, job.ID, got.ev.ID)
		require.GreaterOrEqual(t, got.at.UnixMilli(), job.PromoteAt, "promoted before its promote_at")
		require.Less(t, rec.calls.Load(), int64(5))
	})

	t.Run("calls again at once while a call moves a full batch", func(t *testing.T) {
		t.Parallel()
		clock := nodetest.NewClock(time.Now())
		c := nodetest.NewCore(t, service.Config{Now: clock.Now})
		specs := make([]core.Spec, 250)
		for i := range specs {
			specs[i] = core.Spec{Type: "report", Delay: 1 * time.Millisecond}
		}
		jobs, err := c.Client.CreateBulk(t.Context(), specs)
		require.NoError(t, err)
		require.Len(t, jobs, 250)
		clock.Advance(time.Second) // all 250 are due

		rec := newRecorder()
		startLoop(t, promoter.LoopConfig{Core: c.Client, Limit: 100, Now: clock.Now, OnPromote: rec.hook})
		var moved []int
		for range 3 {
			moved = append(moved, waitFor(t, rec.replies, "a promote call").Moved)
		}
		require.Equal(t, []int{100, 100, 50}, moved)

		inactive, err := c.Client.Count(t.Context(), core.StateInactive, "report")
		require.NoError(t, err)
		require.EqualValues(t, 250, inactive)
		delayed, err := c.Client.Count(t.Context(), core.StateDelayed, "report")
		require.NoError(t, err)
		require.Zero(t, delayed)
	})

	t.Run("returns nil promptly when its context ends", func(t *testing.T) {
		t.Parallel()
		c := nodetest.NewCore(t, service.Config{})
		rec := newRecorder()
		l := startLoop(t, promoter.LoopConfig{Core: c.Client, MaxSleep: time.Minute, OnPromote: rec.hook})
		waitFor(t, rec.replies, "the first promote call")

		start := time.Now()
		require.NoError(t, l.stop(t))
		require.Less(t, time.Since(start), time.Second)
	})

	t.Run("keeps retrying while core is down and promotes again through a new core", func(t *testing.T) {
		t.Parallel()
		c := nodetest.NewCore(t, service.Config{})
		warns := make(chan slog.Record, 100)
		rec := newRecorder()
		l := startLoop(t, promoter.LoopConfig{
			Core:       c.Client,
			MaxSleep:   20 * time.Millisecond,
			RetryDelay: 10 * time.Millisecond,
			Logger:     slog.New(warnHandler{warns}),
			OnPromote:  rec.hook,
		})
		waitFor(t, rec.replies, "the first promote call")

		require.NoError(t, c.Service.Stop(t.Context()))
		for range 2 {
			r := waitFor(t, warns, "a failed call's warning")
			require.True(t, hasAttr(r, "err"), "the warning carries the error: %v", r)
		}
		select {
		case err := <-l.done:
			t.Fatalf("the loop returned while core was down: %v", err)
		default:
		}

		svc, err := service.New(service.Config{Store: c.Store, Conn: c.NATS.Conn})
		require.NoError(t, err)
		t.Cleanup(func() { _ = svc.Stop(context.Background()) })
		promoted := watchPromotions(t, c, "email")
		job, err := c.Client.Create(t.Context(), "email", nil, &core.CreateOpts{Delay: time.Millisecond})
		require.NoError(t, err)
		got := waitFor(t, promoted, "the job's promotion event")
		require.Equal(t, job.ID, got.ev.ID)
	})
}

func TestRunLoopRejectsBadConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  promoter.LoopConfig
	}{
		{"a negative limit", promoter.LoopConfig{Limit: -1}},
		{"a limit over core's maximum", promoter.LoopConfig{Limit: core.MaxMoveLimit + 1}},
		{"a negative max sleep", promoter.LoopConfig{MaxSleep: -time.Second}},
		{"a negative retry delay", promoter.LoopConfig{RetryDelay: -time.Second}},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			t.Parallel()
			tc.cfg.Core = unusedCore{}
			require.Error(t, promoter.RunLoop(t.Context(), tc.cfg))
		})
	}
}

// unusedCore is a Core that a loop with a bad config must never touch.
type unusedCore struct{ promoter.Core }

// runningLoop is a RunLoop on its own goroutine.
type runningLoop struct {
	cancel  context.CancelFunc
	done    chan error
	stopped bool // stop was called; only the test's goroutine touches it
}

// startLoop runs RunLoop until stop or the end of the test, whose cleanup
// requires it to return nil.
func startLoop(t *testing.T, cfg promoter.LoopConfig) *runningLoop {
	t.Helper()
	return start(t, func(ctx context.Context) error { return promoter.RunLoop(ctx, cfg) })
}

// start runs a loop until stop or the end of the test, whose cleanup
// requires it to return nil.
func start(t *testing.T, run func(context.Context) error) *runningLoop {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &runningLoop{cancel: cancel, done: make(chan error, 1)}
	go func() { l.done <- run(ctx) }()
	t.Cleanup(func() {
		if !l.stopped {
			require.NoError(t, l.stop(t))
		}
	})
	return l
}

// stop cancels the loop and returns what RunLoop returned.
func (l *runningLoop) stop(t *testing.T) error {
	t.Helper()
	l.cancel()
	err := waitFor(t, l.done, "RunLoop to return")
	l.stopped = true
	return err
}

// recorder is an OnPromote hook: it counts the calls and keeps the replies.
type recorder struct {
	calls   atomic.Int64
	replies chan *core.MoveReply
}

func newRecorder() *recorder { return &recorder{replies: make(chan *core.MoveReply, 1000)} }

func (r *recorder) hook(reply *core.MoveReply) {
	r.calls.Add(1)
	select {
	case r.replies <- reply:
	default: // a test that stopped reading only needs the count
	}
}

// arrival is an event and when the test saw it, by the real clock.
type arrival struct {
	ev *core.Event
	at time.Time
}

// watchPromotions reports every promotion event of jobType. It subscribes on
// the client's connection, so a job created through the client after it
// returns has its events delivered.
func watchPromotions(t *testing.T, c *nodetest.Core, jobType string) <-chan arrival {
	t.Helper()
	ch := make(chan arrival, 1000)
	sub, err := c.Client.Subscribe(c.Client.Subjects().JobEventsOf(bus.EventPromotion, jobType), func(ev *core.Event) {
		select {
		case ch <- arrival{ev: ev, at: time.Now()}:
		default:
		}
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return ch
}

// waitFor receives one value from ch, failing the test after waitTimeout.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("timed out after %v waiting for %s", waitTimeout, what)
		panic("unreachable")
	}
}

// warnHandler passes log records at Warn and above to a channel.
type warnHandler struct{ ch chan<- slog.Record }

func (h warnHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h warnHandler) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h warnHandler) WithGroup(string) slog.Handler                { return h }
func (h warnHandler) Handle(_ context.Context, r slog.Record) error {
	select {
	case h.ch <- r.Clone():
	default:
	}
	return nil
}

func hasAttr(r slog.Record, key string) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = found || a.Key == key
		return !found
	})
	return found
}
