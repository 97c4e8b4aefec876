package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

// BenchmarkFlowRedisCPU reports the Redis CPU time of a 1,000-job create
// (per job) as a plain bulk, and as a fan-out/fan-in flow (a root, 998
// jobs that depend on it, a sink that depends on those) of one type and of
// two: what a flow adds in Redis, the bound of issue 26's "within 2× of a
// create_bulk" on a shared box. Each case is a sub-benchmark with a server of
// its own, so that callgrind (docs/benchmarks.md) counts one case alone:
// -test.bench 'FlowRedisCPU/flow2'.
func BenchmarkFlowRedisCPU(b *testing.B) {
	ctx := context.Background()
	flow := func(types ...string) []core.Spec {
		specs := make([]core.Spec, 1000)
		specs[0] = core.Spec{Type: types[0], MaxAttempts: 1, TTL: time.Second}
		specs[999] = core.Spec{Type: types[0], MaxAttempts: 1, TTL: time.Second}
		for i := 1; i < 999; i++ {
			specs[i] = core.Spec{Type: types[i%len(types)], MaxAttempts: 1, TTL: time.Second, DependsOnRefs: []int{0}}
			specs[999].DependsOnRefs = append(specs[999].DependsOnRefs, i)
		}
		return specs
	}
	bulk := make([]core.Spec, 1000)
	for i := range bulk {
		bulk[i] = core.Spec{Type: "a", MaxAttempts: 1, TTL: time.Second}
	}
	for _, c := range []struct {
		name  string
		specs []core.Spec
	}{{"bulk", bulk}, {"flow1", flow("a")}, {"flow2", flow("a", "b")}} {
		b.Run(c.name, func(b *testing.B) {
			st, rdb := nodetest.NewStore(b)
			if _, _, err := st.Create(ctx, 1, c.specs); err != nil { // scripts loaded
				b.Fatal(err)
			}
			u0 := evalUsec(rdb)
			for range b.N {
				if _, _, err := st.Create(ctx, 1, c.specs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((evalUsec(rdb)-u0)/float64(b.N*1000), "redis-µs/job")
		})
	}
}
