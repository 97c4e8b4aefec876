package worker_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/worker"
)

// TestTheRetryDelayDecidesTheWait: a failed attempt's next one waits what
// the worker chose, read from the job as core stored it (promote_at −
// updated_at of the failed_attempt event: no wall clock): a DelayRetry
// error first, then the handler's RetryDelayer, then Config.RetryDelay; a
// negative answer leaves the job's backoff; with no attempt left nothing
// is asked and the job fails.
func TestTheRetryDelayDecidesTheWait(t *testing.T) {
	c := stack(t)
	type asked struct {
		id      int64
		attempt int
		err     string
	}
	var mu sync.Mutex
	var calls []asked // Config.RetryDelay's
	w := newWorker(t, c, worker.Config{RetryDelay: func(job *core.Job, attempt int, err error) time.Duration {
		mu.Lock()
		calls = append(calls, asked{job.ID, attempt, err.Error()})
		mu.Unlock()
		if job.Type == "backoff" {
			return -1
		}
		return time.Duration(attempt) * time.Hour
	}})
	fail := func(ctx context.Context, job *worker.Job) error { return errors.New("boom") }
	w.Handle("cfg", worker.HandlerFunc(fail))
	w.Handle("backoff", worker.HandlerFunc(fail))
	w.Handle("last", worker.HandlerFunc(fail))
	w.Handle("own", worker.WithRetryDelay(worker.HandlerFunc(fail), func(*core.Job, int, error) time.Duration {
		return 2 * time.Hour
	}))
	w.Handle("told", worker.WithRetryDelay(worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		return worker.DelayRetry(errors.New("rate limited"), 3*time.Hour)
	}), func(*core.Job, int, error) time.Duration { return 2 * time.Hour }))

	retried := make(chan *core.Event, 10)
	sub, err := c.Client.Subscribe(c.Client.Subjects().JobEventsOf("failed_attempt", ""), func(ev *core.Event) { retried <- ev })
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	run(t, w)

	backoff := &core.Backoff{Type: core.BackoffFixed, Delay: 5 * time.Minute}
	want := map[int64]int64{} // job id → the wait in ms
	for typ, wait := range map[string]int64{"cfg": 3600_000, "own": 7200_000, "told": 10800_000, "backoff": 300_000} {
		job := create(t, c, typ, nil, &core.CreateOpts{MaxAttempts: 3, Backoff: backoff})
		want[job.ID] = wait
	}
	last := create(t, c, "last", nil, &core.CreateOpts{MaxAttempts: 1, Backoff: backoff})

	got := map[int64]int64{}
	for len(got) < len(want) {
		select {
		case ev := <-retried:
			require.Equal(t, core.StateDelayed, ev.Job.State, "job %d (%s)", ev.ID, ev.Type)
			got[ev.ID] = ev.Job.PromoteAt - ev.Job.UpdatedAt
			if ev.Type == "told" {
				require.Equal(t, "rate limited", ev.Error, "DelayRetry's error is the attempt's")
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d of %d failed attempts seen", len(got), len(want))
		}
	}
	require.Equal(t, want, got)
	done := await(t, c, last.ID)
	require.Equal(t, core.StateFailed, done.State, "no attempt left")

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, calls, 2, "Config.RetryDelay is asked for cfg and backoff only: %v", calls)
	for _, call := range calls {
		require.Equal(t, 1, call.attempt)
		require.Equal(t, "boom", call.err)
		require.NotEqual(t, last.ID, call.id)
	}
}
