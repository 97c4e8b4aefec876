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
