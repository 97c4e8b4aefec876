package worker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/worker"
)

func TestKueFormProcessesJobsWithTheirData(t *testing.T) {
	c := stack(t)
	w := newWorker(t, c, worker.Config{})
	w.Process("email", 2, func(ctx context.Context, job *worker.Job) error {
		var in struct{ To string }
		if err := job.Decode(&in); err != nil {
			return err
		}
		return job.SetResult(map[string]string{"sent_to": in.To})
	}, nil)
	run(t, w)
	job := create(t, c, "email", map[string]string{"to": "ada@example.com"}, nil)
	done := await(t, c, job.ID)
	require.Equal(t, core.StateComplete, done.State)
	require.JSONEq(t, `{"sent_to":"ada@example.com"}`, string(done.Result))
	require.Equal(t, 1, done.Attempts)
	require.NotEmpty(t, done.WorkerID)
}

func TestGoFormSharesOneConcurrencyAndHonoursIt(t *testing.T) {
	c := stack(t)
	const limit = 3
	var runningNow, most atomic.Int32
	started := make(chan struct{}, 100)
	release := make(chan struct{})
	h := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		n := runningNow.Add(1)
		defer runningNow.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		started <- struct{}{}
		<-release
		return nil
	})
	w := newWorker(t, c, worker.Config{Concurrency: limit})
	w.Handle("a", h)
	w.Handle("b", h)
	run(t, w)
	var ids []int64
	for i := range 10 {
		ids = append(ids, create(t, c, []string{"a", "b"}[i%2], i, nil).ID)
	}
	for range limit {
		within(t, started, "a handler start")
	}
	// A bounded look for a fourth start: none may come while three run.
	select {
	case <-started:
		t.Fatal("a fourth handler started while three were running")
	case <-time.After(200 * time.Millisecond):
	}
	n, err := c.Client.Count(ctx, core.StateActive, "")
	require.NoError(t, err)
	require.Equal(t, int64(limit), n, "the worker leases only for free slots")
	close(release)
	for _, id := range ids {
		require.Equal(t, core.StateComplete, await(t, c, id).State)
	}
	require.Equal(t, int32(limit), most.Load())
}

func TestRetriesWithFixedBackoffThenSucceeds(t *testing.T) {
	c := stack(t)
	var calls atomic.Int32
	var starts []time.Time
	var mu sync.Mutex
	w := newWorker(t, c, worker.Config{})
	w.Process("flaky", 1, func(ctx context.Context, job *worker.Job) error {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		if calls.Add(1) < 3 {
			return fmt.Errorf("attempt %d failed", job.Attempts)
		}
		return nil
	}, nil)
	run(t, w)
	job := create(t, c, "flaky", nil, &core.CreateOpts{MaxAttempts: 3, Backoff: &core.Backoff{Type: core.BackoffFixed, Delay: 150 * time.Millisecond}})
	done := await(t, c, job.ID)
	require.Equal(t, core.StateComplete, done.State)
	require.Equal(t, 3, done.Attempts)
	require.Equal(t, "attempt 2 failed", done.Error, "the last error stays for a person to read")
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(starts); i++ {
		require.GreaterOrEqual(t, starts[i].Sub(starts[i-1]), 150*time.Millisecond, "retry %d came before its backoff", i)
	}
}

func TestFailsForGoodAndTheHookRuns(t *testing.T) {
	c := stack(t)
	failed := make(chan *core.Job, 2)
	hookErrs := make(chan error, 2)
	w := newWorker(t, c, worker.Config{OnFailed: func(job *core.Job, err error) {
		hookErrs <- err
		failed <- job
	}})
	w.Process("doomed", 1, func(ctx context.Context, job *worker.Job) error {
		if job.Data != nil && string(job.Data) == `"discard"` {
			return worker.Discard(errors.New("bad input"))
		}
		return errors.New("always")
	}, nil)
	run(t, w)
	job := create(t, c, "doomed", nil, &core.CreateOpts{MaxAttempts: 2})
	done := await(t, c, job.ID)
	require.Equal(t, core.StateFailed, done.State)
	require.Equal(t, 2, done.Attempts)
	got := <-failed
	require.Equal(t, job.ID, got.ID)
	require.Equal(t, core.StateFailed, got.State)
	require.EqualError(t, <-hookErrs, "always")

	discarded := create(t, c, "doomed", "discard", &core.CreateOpts{MaxAttempts: 5})
	done = await(t, c, discarded.ID)
	require.Equal(t, core.StateFailed, done.State)
	require.Equal(t, 1, done.Attempts, "Discard skips the attempts left")
	require.Equal(t, "bad input", done.Error)
	<-failed
	require.ErrorContains(t, <-hookErrs, "bad input")
}

func TestPanicFailsTheAttemptWithTheStackInTheLog(t *testing.T) {
	c := stack(t)
	w := newWorker(t, c, worker.Config{})
	w.Process("panicky", 1, func(ctx context.Context, job *worker.Job) error {
		panic("kaboom")
	}, nil)
	run(t, w)
	job := create(t, c, "panicky", nil, nil)
	done := await(t, c, job.ID)
	require.Equal(t, core.StateFailed, done.State)
	require.Contains(t, done.Error, "kaboom")
	lines, err := c.Client.Log(ctx, job.ID)
	require.NoError(t, err)
	require.Len(t, lines, 1)
	require.Contains(t, lines[0], "panic: kaboom")
	require.Contains(t, lines[0], "worker_test.go", "the stack names the handler")
	got, err := c.Client.Get(ctx, job.ID)
	require.NoError(t, err)
	require.Len(t, got.Errors, 1)
	require.Equal(t, 1, got.Errors[0].Attempt)
	require.Contains(t, got.Errors[0].Error, "kaboom")
	require.Contains(t, got.Errors[0].Stack, "worker_test.go", "the history has the stack too")
}

// stackedError is an error that carries a stack, as worker.Stacker says.
type stackedError struct{ stack []byte }

func (e *stackedError) Error() string { return "stacked" }
func (e *stackedError) Stack() []byte { return e.stack }

// TestAnErrorsStackGoesToTheHistoryCutToTheLimit: a handler's error that
// wraps a Stacker sends its stack; one over core.MaxStackBytes is cut at a
// character, keeping the head.
func TestAnErrorsStackGoesToTheHistoryCutToTheLimit(t *testing.T) {
	c := stack(t)
	w := newWorker(t, c, worker.Config{})
	long := []byte("top of stack\n" + strings.Repeat("é", core.MaxStackBytes))
	w.Process("stacked", 1, func(ctx context.Context, job *worker.Job) error {
		return fmt.Errorf("wrapped: %w", &stackedError{stack: long})
	}, nil)
	run(t, w)
	job := create(t, c, "stacked", nil, nil)
	require.Equal(t, core.StateFailed, await(t, c, job.ID).State)
	got, err := c.Client.Get(ctx, job.ID)
	require.NoError(t, err)
	require.Len(t, got.Errors, 1)
	st := got.Errors[0].Stack
	require.True(t, strings.HasPrefix(st, "top of stack"))
	require.LessOrEqual(t, len(st), core.MaxStackBytes)
	require.Greater(t, len(st), core.MaxStackBytes-2)
	require.True(t, utf8.ValidString(st), "cut at a character")
}

func TestRetryAfterRejoinsWithoutUsingAnAttempt(t *testing.T) {
	c := stack(t)
	var calls atomic.Int32
	w := newWorker(t, c, worker.Config{})
	w.Process("later", 1, func(ctx context.Context, job *worker.Job) error {
		if calls.Add(1) == 1 {
			return worker.RetryAfter(100 * time.Millisecond)
		}
		return nil
	}, nil)
	run(t, w)
	job := create(t, c, "later", nil, nil) // one attempt only
	done := await(t, c, job.ID)
	require.Equal(t, core.StateComplete, done.State)
	require.Equal(t, 1, done.Attempts)
	require.Equal(t, int32(2), calls.Load())
}

func TestProgressAndLogFromAHandler(t *testing.T) {
	c := stack(t)
	evs := make(chan *core.Event, 10)
	sub, err := c.Client.Subscribe(c.Client.Subjects().JobEventsOf("progress", ""), func(ev *core.Event) { evs <- ev })
	require.NoError(t, err)
	defer sub.Unsubscribe()
	w := newWorker(t, c, worker.Config{})
	w.Process("report", 1, func(ctx context.Context, job *worker.Job) error {
		if err := job.Log(ctx, "halfway"); err != nil {
			return err
		}
		return job.Progress(ctx, 1, 2)
	}, nil)
	run(t, w)
	job := create(t, c, "report", nil, nil)
	require.Equal(t, core.StateComplete, await(t, c, job.ID).State)
	ev := <-evs
	require.Equal(t, 50, *ev.Progress)
	lines, err := c.Client.Log(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"halfway"}, lines)
}

func TestHandlerContextEndsAtTheTTL(t *testing.T) {
	c := stack(t)
	cause := make(chan error, 1)
	w := newWorker(t, c, worker.Config{})
	w.Process("slow", 1, func(ctx context.Context, job *worker.Job) error {
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return ctx.Err()
	}, nil)
	run(t, w)
	job := create(t, c, "slow", nil, &core.CreateOpts{TTL: 200 * time.Millisecond})
	done := await(t, c, job.ID)
	require.ErrorIs(t, <-cause, worker.ErrTTLExceeded)
	require.Equal(t, core.StateFailed, done.State)
	require.Equal(t, "kuebus: job ran past its ttl of 200 ms", done.Error, "says why, not \"context deadline exceeded\"")
}

// TestExpiredLeaseIsRescuedAndRunsAgain: a handler hangs past its ttl,
// ignoring its context; the lease is no longer extended, the rescue loop
// sends the job back, it runs again and completes; the hung run's late
// outcome is refused as stale.
func TestExpiredLeaseIsRescuedAndRunsAgain(t *testing.T) {
	c := stack(t)
	var calls atomic.Int32
	hung := make(chan struct{})
	firstDone := make(chan struct{})
	w := newWorker(t, c, worker.Config{})
	w.Process("stuck", 2, func(ctx context.Context, job *worker.Job) error {
		if calls.Add(1) == 1 {
			<-hung // ignores ctx
			defer close(firstDone)
			return errors.New("the hung run's late failure")
		}
		return nil
	}, nil)
	run(t, w)
	job := create(t, c, "stuck", nil, &core.CreateOpts{TTL: 300 * time.Millisecond, MaxAttempts: 1})
	done := await(t, c, job.ID)
	require.Equal(t, core.StateComplete, done.State)
	require.Equal(t, 1, done.Stalls)
	close(hung)
	within(t, firstDone, "the hung handler's return")
	after, err := c.Client.Get(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateComplete, after.State, "the stale failure changed nothing")
}

func TestLeasesAreExtendedWhileTheHandlerRuns(t *testing.T) {
	c := stack(t)
	release := make(chan struct{})
	started := make(chan struct{})
	w := newWorker(t, c, worker.Config{})
	w.Process("long", 1, func(ctx context.Context, job *worker.Job) error {
		close(started)
		<-release
		return nil
	}, nil)
	run(t, w)
	job := create(t, c, "long", nil, &core.CreateOpts{TTL: time.Second})
	within(t, started, "the handler start")
	first, err := c.Client.Get(ctx, job.ID)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		j, err := c.Client.Get(ctx, job.ID)
		return err == nil && j.LeaseUntil > first.LeaseUntil
	}, 5*time.Second, 20*time.Millisecond, "the lease was extended (half the ttl after the lease)")
	close(release)
	require.Equal(t, core.StateComplete, await(t, c, job.ID).State)
}

func TestGracefulStopLetsHandlersFinish(t *testing.T) {
	c := stack(t)
	started := make(chan struct{}, 4)
	finish := make(chan struct{})
	w := newWorker(t, c, worker.Config{Concurrency: 2})
	w.Handle("g", worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		started <- struct{}{}
		<-finish
		return nil
	}))
	stop := run(t, w)
	var ids []int64
	for range 4 {
		ids = append(ids, create(t, c, "g", nil, nil).ID)
	}
	within(t, started, "first start")
	within(t, started, "second start")
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	close(finish)
	require.NoError(t, <-stopped)
	counts, err := c.Client.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(2), counts.Complete, "the running two finished")
	require.Equal(t, int64(2), counts.Inactive, "the other two were never taken")
	require.Zero(t, counts.Active)
}

func TestShutdownReleasesUnfinishedWorkWithoutUsingAttempts(t *testing.T) {
	c := stack(t)
	started := make(chan struct{}, 2)
	causes := make(chan error, 2)
	w := newWorker(t, c, worker.Config{Concurrency: 2, ShutdownTimeout: 100 * time.Millisecond})
	w.Process("endless", 2, func(ctx context.Context, job *worker.Job) error {
		started <- struct{}{}
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	}, nil)
	stop := run(t, w)
	a := create(t, c, "endless", nil, &core.CreateOpts{MaxAttempts: 3})
	b := create(t, c, "endless", nil, &core.CreateOpts{MaxAttempts: 3})
	within(t, started, "first start")
	within(t, started, "second start")
	err := stop()
	require.ErrorIs(t, err, worker.ErrShutdown)
	require.ErrorIs(t, <-causes, worker.ErrShutdown)
	for _, id := range []int64{a.ID, b.ID} {
		j, err := c.Client.Get(ctx, id)
		require.NoError(t, err)
		require.Equal(t, core.StateInactive, j.State, "released back to the queue")
		require.Zero(t, j.Attempts, "a release uses no attempt")
		require.Empty(t, j.Error)
	}
}

func TestBadConfigAndRegistrations(t *testing.T) {
	c := stack(t)
	conn := newWorker(t, c, worker.Config{}) // for its connection only
	_ = conn
	for _, cfg := range []worker.Config{
		{Concurrency: -1},
		{LeaseWait: -time.Second},
		{LeaseWait: time.Hour},
		{ID: strings.Repeat("x", 300)},
	} {
		_, err := worker.New(worker.Config{Conn: c.NATS.Conn, Concurrency: cfg.Concurrency, LeaseWait: cfg.LeaseWait, ID: cfg.ID})
		require.Error(t, err, "%+v", cfg)
	}
	w := newWorker(t, c, worker.Config{})
	require.ErrorIs(t, w.Run(ctx), worker.ErrNoHandlers)
	w = newWorker(t, c, worker.Config{})
	noop := func(context.Context, *worker.Job) error { return nil }
	require.Panics(t, func() { w.Process("a.b", 1, noop, nil) }, "not a job type")
	require.Panics(t, func() { w.Process("ok", 0, noop, nil) }, "no concurrency")
	w.Process("ok", 1, noop, nil)
	require.Panics(t, func() { w.Handle("ok", worker.HandlerFunc(noop)) }, "registered twice")
}
