package workerprom_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/worker"
	"github.com/kuebus/kuebus/worker/workerprom"
)

func TestMain(m *testing.M) { os.Exit(nodetest.Main(m)) }

// TestWorkerMetrics runs a real worker on a real core: each handler's end
// is counted with its outcome and time, and none is left running.
func TestWorkerMetrics(t *testing.T) {
	c := nodetest.NewCore(t, service.Config{})
	reg := prometheus.NewRegistry()
	m, err := workerprom.New(reg)
	require.NoError(t, err)
	failedForGood := make(chan struct{})
	w, err := worker.New(worker.Config{Conn: bustest.Connect(t, c.NATS.ClientURL()), Metrics: m,
		OnFailed: func(*core.Job, error) { close(failedForGood) }})
	require.NoError(t, err)
	completed := make(chan struct{}, 1)
	w.Handle("email", worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		if job.Attempts == 1 && string(job.Data) == `"flaky"` {
			return errors.New("smtp timeout")
		}
		if string(job.Data) == `"bad"` {
			return worker.Discard(errors.New("no such address"))
		}
		completed <- struct{}{}
		return nil
	}))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()

	_, err = c.Client.Create(t.Context(), "email", "flaky", &core.CreateOpts{MaxAttempts: 2})
	require.NoError(t, err)
	<-completed // the retry completed
	_, err = c.Client.Create(t.Context(), "email", "bad", nil)
	require.NoError(t, err)
	<-failedForGood
	cancel()
	require.NoError(t, <-done)

	want := `
# HELP kuebus_worker_jobs_total Handlers ended in this worker, per type and outcome (complete, fail, discard, retry_after).
# TYPE kuebus_worker_jobs_total counter
kuebus_worker_jobs_total{outcome="complete",type="email"} 1
kuebus_worker_jobs_total{outcome="discard",type="email"} 1
kuebus_worker_jobs_total{outcome="fail",type="email"} 1
# HELP kuebus_worker_jobs_running Handlers running now in this worker, per type.
# TYPE kuebus_worker_jobs_running gauge
kuebus_worker_jobs_running{type="email"} 0
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "kuebus_worker_jobs_total", "kuebus_worker_jobs_running"))
	n, err := testutil.GatherAndCount(reg, "kuebus_worker_handler_seconds")
	require.NoError(t, err)
	require.Equal(t, 1, n, "one histogram, for email")
}
