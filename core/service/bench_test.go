package service_test

import (
	"testing"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// BenchmarkCreateSequential: one producer, each create awaited.
func BenchmarkCreateSequential(b *testing.B) {
	c := nodetest.NewCore(b, service.Config{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Client.CreateSpec(ctx, core.Spec{Type: "bench", Data: []byte(`{"i":1}`)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkCreateParallel: producers on every P.
func BenchmarkCreateParallel(b *testing.B) {
	c := nodetest.NewCore(b, service.Config{})
	b.SetParallelism(8) // 16 producers on 2 cores, as peerbench's conc16
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Client.CreateSpec(ctx, core.Spec{Type: "bench", Data: []byte(`{"i":1}`)}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkLeaseOneParallel: 16 workers, each leasing one job per call of
// one type, as HTTP pop clients or workers of concurrency 1 do.
func BenchmarkLeaseOneParallel(b *testing.B) {
	c := nodetest.NewCore(b, service.Config{})
	specs := make([]core.Spec, 1000)
	for i := range specs {
		specs[i] = core.Spec{Type: "bench"}
	}
	for n := 0; n < b.N; n += len(specs) {
		if _, err := c.Client.CreateBulk(ctx, specs); err != nil {
			b.Fatal(err)
		}
	}
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"bench"}, Max: 1}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "leases/s")
}

// BenchmarkCompleteBatch: a worker's acknowledgements, 64 completes a
// batch, of jobs removed as they complete (as kuebus bench's process
// phase makes them). heard: someone listens to complete events, so each
// complete reads the job back for its event; unheard: nobody does, and
// the complete is bare (service.StoreOp.Bare).
func BenchmarkCompleteBatch(b *testing.B) {
	for _, heard := range []bool{true, false} {
		name := map[bool]string{true: "heard", false: "unheard"}[heard]
		b.Run(name, func(b *testing.B) {
			c := nodetest.NewCore(b, service.Config{Listening: func(string) bool { return heard }})
			specs := make([]core.Spec, 1000)
			for i := range specs {
				specs[i] = core.Spec{Type: "bench", RemoveOnComplete: core.RemoveAtOnce}
			}
			var ops []core.LeaseOp
			for len(ops) < b.N {
				if _, err := c.Client.CreateBulk(ctx, specs); err != nil {
					b.Fatal(err)
				}
				jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"bench"}, Max: len(specs)})
				if err != nil {
					b.Fatal(err)
				}
				for _, j := range jobs {
					ops = append(ops, core.LeaseOp{Op: core.OpComplete, ID: j.ID, Lease: j.Lease, Type: j.Type})
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for from := 0; from < b.N; from += 64 {
				if _, err := c.Client.Batch(ctx, ops[from:min(from+64, b.N)]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "completes/s")
		})
	}
}
