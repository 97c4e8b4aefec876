package service_test

import (
	"fmt"
	"testing"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// BenchmarkCreateBulk1000 and BenchmarkCreateFlow1000 compare a 1,000-job
// create_bulk with a 1,000-job create_flow (issue 26's goal: within 2×): a
// fan-out/fan-in of one root, 998 jobs that depend on it and one that
// depends on those 998, of one type, and of two types alternating (every
// dependency across types a link, lua/dep_link.lua).
func BenchmarkCreateBulk1000(b *testing.B) {
	c := nodetest.NewCore(b, service.Config{})
	specs := make([]core.Spec, 1000)
	for i := range specs {
		specs[i] = core.Spec{Type: "bench", Data: []byte(`{"i":1}`)}
	}
	b.ResetTimer()
	for range b.N {
		if _, err := c.Client.CreateBulk(ctx, specs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "jobs/s")
}

func BenchmarkCreateFlow1000(b *testing.B) {
	for _, types := range [][]string{{"bench"}, {"bench", "other"}} {
		b.Run(fmt.Sprint(len(types), "types"), func(b *testing.B) {
			c := nodetest.NewCore(b, service.Config{})
			jobs := make([]core.FlowJob, 1000)
			jobs[0] = core.FlowJob{Ref: "root", Spec: core.Spec{Type: types[0], Data: []byte(`{"i":1}`)}}
			sink := core.FlowJob{Ref: "sink", Spec: core.Spec{Type: types[0], Data: []byte(`{"i":1}`)}}
			for i := 1; i < 999; i++ {
				ref := fmt.Sprint("j", i)
				jobs[i] = core.FlowJob{Ref: ref, Spec: core.Spec{Type: types[i%len(types)], Data: []byte(`{"i":1}`)},
					DependsOn: []core.DepRef{core.Ref("root")}}
				sink.DependsOn = append(sink.DependsOn, core.Ref(ref))
			}
			jobs[999] = sink
			b.ResetTimer()
			for range b.N {
				if _, err := c.Client.CreateFlow(ctx, jobs...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}
