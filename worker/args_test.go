package worker_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/worker"
)

// TestHandleArgsFailsForGoodOnDataThatDoesNotDecode: no retry would make
// a string decode into a struct, so the job fails at its first attempt,
// saying what it got.
func TestHandleArgsFailsForGoodOnDataThatDoesNotDecode(t *testing.T) {
	c := stack(t)
	w := newWorker(t, c, worker.Config{})
	var mu sync.Mutex
	var got []string
	worker.HandleArgs(w, func(ctx context.Context, job *worker.Job, args Welcome) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, args.To)
		return nil
	}, nil)
	stop := run(t, w)
	defer stop()

	good := create(t, c, "welcome", Welcome{To: "ada@example.com"}, nil)
	bad := create(t, c, "welcome", json.RawMessage(`"not an object"`), &core.CreateOpts{MaxAttempts: 5})
	require.Equal(t, core.StateComplete, await(t, c, good.ID).State)
	failed := await(t, c, bad.ID)
	require.Equal(t, core.StateFailed, failed.State)
	require.Equal(t, 1, failed.Attempts, "no retry: the data will not change")
	require.True(t, strings.HasPrefix(failed.Error, "job "), failed.Error)
	require.Contains(t, failed.Error, "data is no worker_test.Welcome")
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"ada@example.com"}, got)
}

// TestMiddlewareWrapsInOrder: the first middleware is the outermost, and
// Process'd types get it too.
func TestMiddlewareWrapsInOrder(t *testing.T) {
	c := stack(t)
	var mu sync.Mutex
	var trace []string
	mark := func(name string) worker.Middleware {
		return func(next worker.Handler) worker.Handler {
			return worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
				mu.Lock()
				trace = append(trace, name+">")
				mu.Unlock()
				err := next.Handle(ctx, job)
				mu.Lock()
				trace = append(trace, "<"+name)
				mu.Unlock()
				return err
			})
		}
	}
	w := newWorker(t, c, worker.Config{Middleware: []worker.Middleware{mark("outer"), mark("inner")}})
	w.Process("solo", 1, func(ctx context.Context, job *worker.Job) error {
		mu.Lock()
		trace = append(trace, "handler")
		mu.Unlock()
		return nil
	}, nil)
	stop := run(t, w)
	defer stop()
	job := create(t, c, "solo", nil, nil)
	require.Equal(t, core.StateComplete, await(t, c, job.ID).State)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"outer>", "inner>", "handler", "<inner", "<outer"}, trace)
}

// TestARunningWorkerIsListed: a worker beats as it runs, so core's workers
// list shows it with its types and concurrency, and leaves the list when
// it stops.
func TestARunningWorkerIsListed(t *testing.T) {
	c := stack(t)
	w := newWorker(t, c, worker.Config{ID: "listed-1", Concurrency: 3})
	w.Handle("email", worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil }))
	w.Process("sms", 2, func(context.Context, *worker.Job) error { return nil }, nil)
	stop := run(t, w)
	// The first beat goes out as Run starts: a job done shows Run runs,
	// and the beat is then at most one call behind.
	job := create(t, c, "email", nil, nil)
	require.Equal(t, core.StateComplete, await(t, c, job.ID).State)
	var listed *core.WorkerInfo
	for range 1000 {
		list, err := c.Client.Workers(t.Context())
		require.NoError(t, err)
		if len(list) == 1 {
			listed = &list[0]
			break
		}
	}
	require.NotNil(t, listed, "the worker is listed")
	require.Equal(t, "listed-1", listed.Worker)
	require.ElementsMatch(t, []string{"email", "sms"}, listed.Types)
	require.Equal(t, 5, listed.Concurrency)
	require.NoError(t, stop())
	list, err := c.Client.Workers(t.Context())
	require.NoError(t, err)
	require.Empty(t, list, "a stopped worker leaves the list")
}
