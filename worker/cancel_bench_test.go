package worker_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/worker"
)

// BenchmarkCancelToContext measures, per job, the time from a client's
// cancel call to the running handler seeing its context done: the cancel
// RPC (cancel.lua in Redis), job.cancel over NATS, the worker's look-up and
// the context's cancellation. Real core, real Redis, embedded NATS on
// loopback. It reports p50 and p99 (docs/protocol.md §3.28 quotes them):
//
//	go test ./worker -run '^$' -bench CancelToContext -benchtime 2000x
func BenchmarkCancelToContext(b *testing.B) {
	c := nodetest.NewCore(b, service.Config{})
	w, err := worker.New(worker.Config{Conn: bustest.Connect(b, c.NATS.ClientURL())})
	require.NoError(b, err)
	started := make(chan struct{})
	saw := make(chan time.Time)
	w.Process("cancelme", 1, func(ctx context.Context, job *worker.Job) error {
		started <- struct{}{}
		<-ctx.Done()
		saw <- time.Now()
		return nil
	}, nil)
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(runCtx) }()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		j, err := c.Client.Create(ctx, "cancelme", nil, &core.CreateOpts{TTL: time.Minute})
		require.NoError(b, err)
		<-started
		t0 := time.Now()
		_, err = c.Client.Cancel(ctx, j.ID, "")
		require.NoError(b, err)
		lat = append(lat, (<-saw).Sub(t0))
	}
	b.StopTimer()
	stop()
	require.NoError(b, <-ran)
	slices.Sort(lat)
	at := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(at(1), "max-ms")
}
