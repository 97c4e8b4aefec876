package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

// BenchmarkRedisCPUCreateOne reports the Redis CPU of a lone create (one
// job per call, a type without policy or dependencies), the step
// BenchmarkRedisCPUPerJob's create1 measures, alone: under callgrind
// (docs/benchmarks.md) its instructions count what the scripts run.
func BenchmarkRedisCPUCreateOne(b *testing.B) {
	st, rdb := nodetest.NewStore(b)
	ctx := context.Background()
	spec := []core.Spec{{Type: "l", MaxAttempts: 1, TTL: time.Minute, Data: []byte(`{"i":1}`)}}
	if _, _, err := st.Create(ctx, 4, spec); err != nil { // scripts loaded
		b.Fatal(err)
	}
	u0 := evalUsec(rdb)
	for range b.N {
		if _, _, err := st.Create(ctx, 4, spec); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((evalUsec(rdb)-u0)/float64(b.N), "create1-redis-µs/job")
}
