package worker_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/worker"
)

// TestAttemptsCountFromOne: a handler, OnError, a retry delay and OnFailed
// see the attempt that runs, the first being 1; OnFailed's count is core's.
func TestAttemptsCountFromOne(t *testing.T) {
	c := stack(t)
	seen := make(chan int, 3)
	onError := make(chan int, 3)
	delays := make(chan int, 3)
	failed := make(chan int, 1)
	w := newWorker(t, c, worker.Config{
		OnError:  func(job *core.Job, err error) { onError <- job.Attempts },
		OnFailed: func(job *core.Job, err error) { failed <- job.Attempts },
	})
	w.Process("count", 1, func(ctx context.Context, job *worker.Job) error {
		seen <- job.Attempts
		return errors.New("no")
	}, &worker.HandlerOpts{RetryDelay: func(job *core.Job, attempt int, err error) time.Duration {
		if job.Attempts != attempt {
			attempt = -job.Attempts // the test's goroutine fails on it
		}
		delays <- attempt
		return 0
	}})
	run(t, w)
	create(t, c, "count", nil, &core.CreateOpts{MaxAttempts: 3})
	for want := 1; want <= 3; want++ {
		require.Equal(t, want, <-seen)
		require.Equal(t, want, <-onError)
	}
	require.Equal(t, 1, <-delays)
	require.Equal(t, 2, <-delays, "no delay is asked after the last attempt")
	require.Equal(t, 3, <-failed)
}

// TestOnErrorIsNotCalledForACancel: a job a person cancels while it runs
// is no failed attempt: OnCancel hears it, OnError does not.
func TestOnErrorIsNotCalledForACancel(t *testing.T) {
	c := stack(t)
	var errorsSeen atomic.Int32
	cancelled := make(chan int64, 1)
	started := make(chan int64, 1)
	w := newWorker(t, c, worker.Config{
		OnError:  func(*core.Job, error) { errorsSeen.Add(1) },
		OnCancel: func(job *core.Job) { cancelled <- job.ID },
	})
	w.Process("long", 1, func(ctx context.Context, job *worker.Job) error {
		started <- job.ID
		<-ctx.Done()
		return context.Cause(ctx) // an error, which would be a failed attempt
	}, nil)
	run(t, w)
	job := create(t, c, "long", nil, &core.CreateOpts{TTL: time.Minute})
	require.Equal(t, job.ID, <-started)
	_, err := c.Client.Cancel(ctx, job.ID, "by hand")
	require.NoError(t, err)
	select {
	case id := <-cancelled:
		require.Equal(t, job.ID, id)
	case <-time.After(20 * time.Second):
		t.Fatal("OnCancel was not called within 20s")
	}
	require.Zero(t, errorsSeen.Load(), "OnError is for failed attempts")
}

// TestHandlerOptsTimeout: a registration's timeout ends the handler's
// context before the job's ttl, with cause ErrTimeout, and the attempt
// fails saying so.
func TestHandlerOptsTimeout(t *testing.T) {
	c := stack(t)
	cause := make(chan error, 1)
	w := newWorker(t, c, worker.Config{})
	worker.ProcessArgs(w, 1, func(ctx context.Context, job *worker.Job, args Welcome) error {
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return ctx.Err()
	}, &worker.HandlerOpts{Timeout: 200 * time.Millisecond})
	run(t, w)
	job, err := core.CreateArgs(ctx, c.Client, Welcome{To: "a"}, &core.CreateOpts{TTL: time.Hour})
	require.NoError(t, err)
	done := await(t, c, job.ID)
	require.ErrorIs(t, <-cause, worker.ErrTimeout)
	require.Equal(t, core.StateFailed, done.State)
	require.Equal(t, "kuebus: handler ran past its timeout of 200ms", done.Error)
}

// TestHandlerOptsAreChecked: a negative timeout is a programming error.
func TestHandlerOptsAreChecked(t *testing.T) {
	w := newWorker(t, stack(t), worker.Config{})
	noop := func(context.Context, *worker.Job) error { return nil }
	require.PanicsWithValue(t, `worker: "t": timeout -1s is negative`, func() {
		w.Process("t", 1, noop, &worker.HandlerOpts{Timeout: -time.Second})
	})
}

// TestATestJobIsSafe: a Job built by hand, with no queue behind it, logs
// and reports progress nowhere, without a panic; Execute runs a handler on
// it as a worker would, a panic included.
func TestATestJobIsSafe(t *testing.T) {
	job := &worker.Job{Job: core.Job{ID: 1, Type: "t"}}
	require.NoError(t, job.Log(ctx, "a line"))
	require.NoError(t, job.Progress(ctx, 1, 2))
	require.NoError(t, job.SetResult(map[string]int{"n": 1}))
	require.JSONEq(t, `{"n":1}`, string(job.Result), "the result set shows")

	err := worker.Execute(ctx, worker.HandlerFunc(func(context.Context, *worker.Job) error { panic("boom") }), job, nil)
	var p *worker.PanicError
	require.ErrorAs(t, err, &p)

	slow := worker.HandlerFunc(func(ctx context.Context, _ *worker.Job) error { <-ctx.Done(); return ctx.Err() })
	err = worker.Execute(ctx, slow, &worker.Job{Job: core.Job{TTL: 50}}, nil)
	require.ErrorIs(t, err, worker.ErrTTLExceeded)
	require.EqualError(t, err, "kuebus: job ran past its ttl of 50 ms")
	err = worker.Execute(ctx, slow, &worker.Job{Job: core.Job{TTL: 60_000}}, &worker.HandlerOpts{Timeout: 20 * time.Millisecond})
	require.ErrorIs(t, err, worker.ErrTimeout)
}
