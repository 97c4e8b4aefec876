package redisstore_test

import (
	"context"
	"testing"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

// BenchmarkCreateOne is one awaited store create at a time: a single round
// trip to Redis (ids come from a reserved block).
func BenchmarkCreateOne(b *testing.B) {
	st, _ := nodetest.NewStore(b)
	ctx := context.Background()
	spec := []core.Spec{{Type: "one", MaxAttempts: 1, TTL: 60000, Data: []byte(`{"i":1}`)}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := st.Create(ctx, 1, spec); err != nil {
			b.Fatal(err)
		}
	}
}
