package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// evalUsec is the Redis CPU spent in scripts so far (INFO commandstats).
func evalUsec(rdb *redis.Client) float64 {
	s := rdb.Info(context.Background(), "commandstats").Val()
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "cmdstat_evalsha:") {
			f := strings.Split(l, ",")[1]
			v, _ := strconv.ParseFloat(strings.TrimPrefix(f, "usec="), 64)
			return v
		}
	}
	return 0
}

// BenchmarkRedisCPUPerJob reports the Redis CPU time the scripts spend per
// job in each step of its life: create (bulk), lease (64 at a time) and
// complete (64 per batch; half of them bare, as when nobody listens), and a
// lone create. The jobs are removed as they complete, as kuebus bench's
// and the peers' are (one job per call, as a
// sequential producer sends them). It is what bounds throughput on a shared
// box.
func BenchmarkRedisCPUPerJob(b *testing.B) {
	st, rdb := nodetest.NewStore(b)
	ctx := context.Background()
	n := max(b.N/64*64, 64)
	specs := make([]core.Spec, 0, 1000)
	u0 := evalUsec(rdb)
	for i := range n {
		specs = append(specs, core.Spec{Type: "c", MaxAttempts: 1, TTL: 60000 * time.Millisecond, Data: []byte(`{"i":1}`), RemoveOnComplete: core.RemoveAtOnce})
		if len(specs) == cap(specs) || i == n-1 {
			if _, _, err := st.Create(ctx, 1, specs); err != nil {
				b.Fatal(err)
			}
			specs = specs[:0]
		}
	}
	u1 := evalUsec(rdb)
	var leased []core.Job
	for len(leased) < n {
		jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: 2, Types: []string{"c"}, Max: 64, Worker: "w", Token: "tok", TTL: 0})
		if err != nil {
			b.Fatal(err)
		}
		leased = append(leased, jobs...)
	}
	u2 := evalUsec(rdb)
	// the first half completed as heard (a row back), the second bare
	half := n / 128 * 64
	var u3 float64
	for i := 0; i < n; i += 64 {
		if i == half {
			u3 = evalUsec(rdb)
		}
		ops := make([]service.StoreOp, 64)
		for k := range ops {
			ops[k] = service.StoreOp{ID: leased[i+k].ID, Lease: "tok", Type: "c", Bare: i >= half}
		}
		if _, err := st.Apply(ctx, 3, core.OpComplete, ops); err != nil {
			b.Fatal(err)
		}
	}
	u3b := evalUsec(rdb)
	lone := max(n/10, 1)
	for range lone {
		if _, _, err := st.Create(ctx, 4, []core.Spec{{Type: "l", MaxAttempts: 1, TTL: 60000 * time.Millisecond, Data: []byte(`{"i":1}`)}}); err != nil {
			b.Fatal(err)
		}
	}
	u4 := evalUsec(rdb)
	b.ReportMetric((u1-u0)/float64(n), "create-redis-µs/job")
	b.ReportMetric((u2-u1)/float64(n), "lease-redis-µs/job")
	b.ReportMetric((u3-u2)/float64(half), "complete-redis-µs/job")
	b.ReportMetric((u3b-u3)/float64(n-half), "complete-bare-redis-µs/job")
	b.ReportMetric((u4-u3b)/float64(lone), "create1-redis-µs/job")
}

// BenchmarkRedisCPUPerLease reports the Redis CPU a lease script spends
// per job leased (64 at a time), for a type without a policy and with a
// policy that never binds: a concurrency far above what is leased, and a
// rate of 64 per ms with each lease in a ms of its own (so its log of
// starts is trimmed and added to at each lease). It is what a policy costs
// the hot path (docs/benchmarks.md).
func BenchmarkRedisCPUPerLease(b *testing.B) {
	for _, tc := range []struct {
		name   string
		policy *core.TypePolicy
		groups int // jobs spread over this many groups; 0: none
	}{
		{"policy=none", nil, 0},
		{"policy=concurrency", &core.TypePolicy{Concurrency: core.MaxConcurrency}, 0},
		{"policy=rate", &core.TypePolicy{Rate: &core.Rate{Limit: 64, Per: time.Millisecond}}, 0},
		// 1000 groups, with no group limit and with a group_concurrency
		// that never binds (a slot taken and counted per job)
		{"policy=none/groups=1000", nil, 1000},
		{"policy=group_concurrency/groups=1000", &core.TypePolicy{GroupConcurrency: core.MaxConcurrency}, 1000},
	} {
		b.Run(tc.name, func(b *testing.B) {
			st, rdb := nodetest.NewStore(b)
			ctx := context.Background()
			if tc.policy != nil {
				tc.policy.Type = "c"
				if err := st.SetType(ctx, tc.policy); err != nil {
					b.Fatal(err)
				}
			}
			n := max(b.N/64*64, 64)
			specs := make([]core.Spec, 0, 1000)
			for i := range n {
				sp := core.Spec{Type: "c", MaxAttempts: 1, TTL: time.Minute, Data: []byte(`{"i":1}`)}
				if tc.groups > 0 {
					sp.Group = "g" + strconv.Itoa(i%tc.groups)
				}
				specs = append(specs, sp)
				if len(specs) == cap(specs) || i == n-1 {
					if _, _, err := st.Create(ctx, 1, specs); err != nil {
						b.Fatal(err)
					}
					specs = specs[:0]
				}
			}
			u0 := evalUsec(rdb)
			leased := 0
			for now := int64(2); leased < n; now++ {
				jobs, _, err := st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"c"}, Max: 64, Worker: "w", Token: "tok" + strconv.FormatInt(now, 10)})
				if err != nil {
					b.Fatal(err)
				}
				leased += len(jobs)
			}
			b.ReportMetric((evalUsec(rdb)-u0)/float64(n), "lease-redis-µs/job")
		})
	}
}
