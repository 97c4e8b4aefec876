package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
)

// TestWorkerStopsGracefullyWithExitZero stops `kuebus worker` as a signal
// does, once idle and once with a job still running past the grace period:
// both exit 0; the second says in one line that it released the job, and
// no error line ("kuebus: worker: worker: ...") is printed.
func TestWorkerStopsGracefullyWithExitZero(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts NATS and redis-server")
	}
	t.Parallel()
	dev := startDev(t, "--data-dir", t.TempDir(), "--nats-listen", "127.0.0.1:0")

	t.Run("an idle worker stops with exit 0", func(t *testing.T) {
		w := start(t, context.Background(), "worker", "idle", "--nats-url", dev.info.NATSURL)
		w.stderr.waitFor(t, "worker running")
		require.Equal(t, 0, w.stop(t), w.stderr.String())
		require.Contains(t, w.stderr.String(), "worker stopped")
		require.NotContains(t, w.stderr.String(), "kuebus: ")
	})

	t.Run("a worker that releases a running job stops with exit 0 and one line", func(t *testing.T) {
		w := start(t, context.Background(), "worker", "long", "--work", "1h", "--grace", "50ms", "--nats-url", dev.info.NATSURL)
		w.stderr.waitFor(t, "worker running")
		client, err := core.NewClient(bustest.Connect(t, dev.info.NATSURL), nil)
		require.NoError(t, err)
		job, err := client.Create(t.Context(), "long", nil, &core.CreateOpts{MaxAttempts: 2})
		require.NoError(t, err)
		w.stderr.waitFor(t, "job_id=")
		require.Equal(t, 0, w.stop(t), w.stderr.String())
		stderr := w.stderr.String()
		require.NotContains(t, stderr, "kuebus: ")
		require.Equal(t, 1, strings.Count(stderr, "released"), stderr)
		require.Contains(t, stderr, "grace period over: released the jobs of handlers still running")
		require.Contains(t, stderr, "worker stopped")

		back, err := client.Get(t.Context(), job.ID)
		require.NoError(t, err)
		require.Equal(t, core.StateInactive, back.State, "released, to run again")
		require.Zero(t, back.Attempts, "no attempt used")
	})
}

// TestWorkerFailRateAndLog: with --fail-rate 1 every attempt fails, so a job
// with two attempts fails for good with the demo's error, and --log leaves
// each attempt's lines in the job's log; with --fail-rate 0 it completes.
func TestWorkerFailRateAndLog(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts NATS and redis-server")
	}
	t.Parallel()
	dev := startDev(t, "--data-dir", t.TempDir(), "--nats-listen", "127.0.0.1:0")
	client, err := core.NewClient(bustest.Connect(t, dev.info.NATSURL), nil)
	require.NoError(t, err)
	failed := make(chan *core.Event, 1)
	sub, err := client.Subscribe(client.Subjects().JobEventsOf(bus.EventFailed, "flaky"), func(ev *core.Event) { failed <- ev })
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })

	w := start(t, context.Background(), "worker", "flaky", "--fail-rate", "1", "--log", "--nats-url", dev.info.NATSURL)
	w.stderr.waitFor(t, "worker running")
	job, err := client.Create(t.Context(), "flaky", nil, &core.CreateOpts{MaxAttempts: 2})
	require.NoError(t, err)
	ev := <-failed
	require.Equal(t, job.ID, ev.ID)
	require.Equal(t, "attempt 2 failed on purpose (--fail-rate 1)", ev.Error)
	lines, err := client.Log(t.Context(), job.ID)
	require.NoError(t, err)
	require.Equal(t, []string{
		"attempt 1 of 2 started by kuebus worker", "attempt 1 failed on purpose (--fail-rate 1)",
		"attempt 2 of 2 started by kuebus worker", "attempt 2 failed on purpose (--fail-rate 1)",
	}, lines)
	require.Equal(t, 0, w.stop(t), w.stderr.String())
}
