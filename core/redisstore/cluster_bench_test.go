package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// BenchmarkClusterRedisCPUPerJob runs the life of a job (bulk create,
// lease 64 at a time over 6 types, complete what was leased in one batch)
// on the test Cluster, two types on each master, and on the standalone
// Redis, the same 6 types. It reports the scripts' Redis CPU per job,
// summed over the masters, and the share of the busiest one: the figures
// docs/scaling.md models shards with (a job costs a shard what it costs a
// standalone Redis, and types spread the cost over the masters).
func BenchmarkClusterRedisCPUPerJob(b *testing.B) {
	b.Run("redis=cluster", func(b *testing.B) {
		st, rdb := nodetest.NewClusterStore(b)
		ctx := context.Background()
		perMaster := map[string][]string{}
		var types []string
		for i := 0; len(types) < 6; i++ {
			jt := fmt.Sprintf("cb%d", i)
			m, err := rdb.MasterForKey(ctx, "{"+jt+"}")
			if err != nil {
				b.Fatal(err)
			}
			if addr := m.Options().Addr; len(perMaster[addr]) < 2 {
				perMaster[addr] = append(perMaster[addr], jt)
				types = append(types, jt)
			}
		}
		jobLife(b, st, types, func() map[string]float64 {
			out := map[string]float64{}
			if err := rdb.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
				out[m.Options().Addr] = evalUsec(m)
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			return out
		})
	})
	b.Run("redis=standalone", func(b *testing.B) {
		st, rdb := nodetest.NewStore(b)
		types := []string{"cb0", "cb1", "cb2", "cb3", "cb4", "cb5"}
		jobLife(b, st, types, func() map[string]float64 { return map[string]float64{"": evalUsec(rdb)} })
	})
}

// jobLife creates b.N jobs (at least 64 per type) over types, leases and
// completes them all, and reports the Redis CPU usec reads per job.
func jobLife(b *testing.B, st *redisstore.Store, types []string, usec func() map[string]float64) {
	ctx := context.Background()
	per := max(b.N/len(types), 64)
	u0 := usec()
	for _, jt := range types {
		specs := make([]core.Spec, 0, 1000)
		for i := range per {
			specs = append(specs, core.Spec{Type: jt, MaxAttempts: 1, TTL: 60000 * time.Millisecond, Data: []byte(`{"i":1}`)})
			if len(specs) == cap(specs) || i == per-1 {
				if _, _, err := st.Create(ctx, 1, specs); err != nil {
					b.Fatal(err)
				}
				specs = specs[:0]
			}
		}
	}
	total := per * len(types)
	for done := 0; done < total; {
		jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: 2, Types: types, Max: 64, Worker: "w", Token: "tok", TTL: 0})
		if err != nil {
			b.Fatal(err)
		}
		if len(jobs) == 0 {
			b.Fatalf("lease: nothing ready after %d of %d", done, total)
		}
		ops := make([]service.StoreOp, len(jobs))
		for k, j := range jobs {
			ops[k] = service.StoreOp{ID: j.ID, Lease: "tok", Type: j.Type}
		}
		if _, err := st.Apply(ctx, 3, core.OpComplete, ops); err != nil {
			b.Fatal(err)
		}
		done += len(jobs)
	}
	u1 := usec()
	var sum, busiest float64
	for addr, u := range u1 {
		d := u - u0[addr]
		sum += d
		busiest = max(busiest, d)
	}
	b.ReportMetric(sum/float64(total), "redis-µs/job")
	b.ReportMetric(busiest/sum, "busiest-share")
}
