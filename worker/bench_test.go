package worker_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/worker"
)

// BenchmarkProcessC64 runs b.N no-op jobs, enqueued beforehand, through one
// worker with concurrency 64: peerbench's process_c64.
func BenchmarkProcessC64(b *testing.B) {
	c := nodetest.NewCore(b, service.Config{})
	specs := make([]core.Spec, 0, 1000)
	for i := 0; i < b.N; i++ {
		specs = append(specs, core.Spec{Type: "bench"})
		if len(specs) == cap(specs) || i == b.N-1 {
			_, err := c.Client.CreateBulk(ctx, specs)
			require.NoError(b, err)
			specs = specs[:0]
		}
	}
	var done atomic.Int64
	all := make(chan struct{})
	w, err := worker.New(worker.Config{Conn: bustest.Connect(b, c.NATS.ClientURL())})
	require.NoError(b, err)
	n := int64(b.N)
	w.Process("bench", 64, func(ctx context.Context, job *worker.Job) error {
		if done.Add(1) == n {
			close(all)
		}
		return nil
	}, nil)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	b.ResetTimer()
	start := time.Now()
	ran := make(chan error, 1)
	go func() { ran <- w.Run(runCtx) }()
	<-all
	// Handlers are done; the last acknowledgements are on their way.
	require.Eventually(b, func() bool {
		k, err := c.Client.Count(ctx, core.StateComplete, "bench")
		return err == nil && k == n
	}, time.Minute, time.Millisecond)
	elapsed := time.Since(start)
	b.StopTimer()
	stop()
	require.NoError(b, <-ran)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
}
