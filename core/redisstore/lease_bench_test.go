package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// BenchmarkLeaseOne is one lease of one job at a time over 1 and 8 types
// (a worker that serves several): the read of the ready heads of every
// type, then the lease script of the type picked. It is the hot path a
// change to how the heads are read must not slow down.
func BenchmarkLeaseOne(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("types=%d", n), func(b *testing.B) {
			st, _ := nodetest.NewStore(b)
			ctx := context.Background()
			types := make([]string, n)
			for i := range types {
				types[i] = fmt.Sprintf("t%d", i)
			}
			// b.N jobs spread over the types, created in bulks.
			specs := make([]core.Spec, 0, 1000)
			for i := range b.N {
				specs = append(specs, core.Spec{Type: types[i%n], MaxAttempts: 1, TTL: 60000 * time.Millisecond, Data: []byte(`{"i":1}`)})
				if len(specs) == cap(specs) || i == b.N-1 {
					if _, _, err := st.Create(ctx, 1, specs); err != nil {
						b.Fatal(err)
					}
					specs = specs[:0]
				}
			}
			b.ResetTimer()
			for range b.N {
				jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: 2, Types: types, Max: 1, Worker: "w", Token: "tok", TTL: 0})
				if err != nil || len(jobs) != 1 {
					b.Fatalf("lease: %d jobs, %v", len(jobs), err)
				}
			}
		})
	}
}
