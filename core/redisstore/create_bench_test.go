package redisstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/node/nodetest"
)

// BenchmarkCreateOne is one awaited store create at a time: a single round
// trip to Redis (ids come from a reserved block).
func BenchmarkCreateOne(b *testing.B) {
	st, _ := nodetest.NewStore(b)
	ctx := context.Background()
	spec := []core.Spec{{Type: "one", MaxAttempts: 1, TTL: 60000 * time.Millisecond, Data: []byte(`{"i":1}`)}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := st.Create(ctx, 1, spec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClusterCreate is store creates on the test Cluster (3 masters,
// a replica each, on loopback), over 12 types, without WAIT and with
// WaitReplicas 1: "serial" one awaited create at a time (the latency a
// producer sees), "parallel" from GOMAXPROCS×4 goroutines (throughput).
// The cost of WAIT is the replica's acknowledgement: one more round trip
// master → replica → master inside the create's own.
func BenchmarkClusterCreate(b *testing.B) {
	for _, wait := range []int{0, 1} {
		cfg := redisstore.Config{}
		name := "no WAIT"
		if wait > 0 {
			cfg.WaitReplicas, cfg.WaitTimeout, name = wait, time.Second, "WaitReplicas 1"
		}
		b.Run(name+"/serial", func(b *testing.B) {
			rg := openCluster(b, cfg)
			ctx := context.Background()
			i := 0
			for b.Loop() {
				if _, _, err := rg.st.Create(ctx, 1, clusterSpecs(fmt.Sprintf("bench%d", i%12), 1)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			rg := openCluster(b, cfg)
			ctx := context.Background()
			var n atomic.Int64
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					if _, _, err := rg.st.Create(ctx, 1, clusterSpecs(fmt.Sprintf("bench%d", i%12), 1)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
