package service_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestGroupConcurrencyGivesOneJobPerGroup: over NATS, with
// group_concurrency 1, 3 groups of 5 jobs and a leaser asking for 10 get
// exactly one job per group; stats say the other 12 are inactive, held by
// group_concurrency; a waiting lease wakes when a completion frees a
// group, and gets that group's next job.
func TestGroupConcurrencyGivesOneJobPerGroup(t *testing.T) {
	t.Parallel()
	waiting := make(chan struct{}, 8)
	c := nodetest.NewCore(t, service.Config{OnLeaseWait: func([]string) { waiting <- struct{}{} }})
	_, err := c.Client.SetType(ctx, &core.TypePolicy{Type: "tenant", GroupConcurrency: 1})
	require.NoError(t, err)
	var specs []core.Spec
	for _, g := range []string{"a", "b", "c"} {
		for range 5 {
			specs = append(specs, core.Spec{Type: "tenant", Group: g})
		}
	}
	_, err = c.Client.CreateBulk(ctx, specs)
	require.NoError(t, err)

	first := lease(t, c, core.LeaseRequest{Types: []string{"tenant"}, Max: 10})
	groups := []string{}
	for _, j := range first {
		groups = append(groups, j.Group)
	}
	slices.Sort(groups)
	require.Equal(t, []string{"a", "b", "c"}, groups, "one job per group")

	st, err := c.Client.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(12), st.Types["tenant"].Inactive, "the parked jobs are still inactive")
	require.Equal(t, core.TypeLimits{GroupConcurrency: 1, Held: 12, HeldBy: core.ReasonGroupConcurrency}, st.Limits["tenant"])

	reply := make(chan []core.Job, 1)
	go func() {
		jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"tenant"}, Max: 5, Wait: core.MaxLeaseWait})
		if err != nil {
			t.Error(err)
		}
		reply <- jobs
	}()
	waitFor(t, waiting, "the lease waits, every group at its limit")
	done := first[1]
	require.NoError(t, c.Client.Complete(ctx, core.LeaseOp{ID: done.ID, Lease: done.Lease, Type: "tenant"}))
	select {
	case jobs := <-reply:
		require.Len(t, jobs, 1, "the completion freed one group's slot")
		require.Equal(t, done.Group, jobs[0].Group)
	case <-time.After(10 * time.Second):
		t.Fatal("the completion did not wake the waiting lease")
	}
}

// TestGroupRateHoldsInEveryWindow: over NATS, with a group rate of 2 per
// second and 3 groups, leases over three seconds of core's clock never
// start more than 2 jobs of one group in any window of 1000 ms (checked
// on the jobs' started_at), and every group goes on starting.
func TestGroupRateHoldsInEveryWindow(t *testing.T) {
	t.Parallel()
	clock := nodetest.NewClock(t0)
	c := nodetest.NewCore(t, service.Config{Now: clock.Now})
	_, err := c.Client.SetType(ctx, &core.TypePolicy{Type: "api", GroupRate: &core.Rate{Limit: 2, Per: time.Second}})
	require.NoError(t, err)
	var specs []core.Spec
	for i := range 60 {
		specs = append(specs, core.Spec{Type: "api", Group: fmt.Sprint("g", i%3)})
	}
	_, err = c.Client.CreateBulk(ctx, specs)
	require.NoError(t, err)
	starts := map[string][]int64{}
	for range 30 {
		for _, j := range lease(t, c, core.LeaseRequest{Types: []string{"api"}, Max: 4}) {
			starts[j.Group] = append(starts[j.Group], j.StartedAt)
		}
		clock.Advance(100 * time.Millisecond)
	}
	require.Len(t, starts, 3)
	for g, at := range starts {
		require.Len(t, at, 6, "group %s: 2 in each of 3 seconds", g)
		for i, s := range at {
			in := 0
			for _, o := range at[i:] {
				if o < s+1000 {
					in++
				}
			}
			require.LessOrEqual(t, in, 2, "group %s: the window from %d holds %d starts", g, s, in)
		}
	}
}

// TestExplainGivesTheGroupReasons: a job held by its group's concurrency
// is explained group_concurrency with the group's active jobs and limit;
// one held by its group's rate, group_rate with when the next may start.
func TestExplainGivesTheGroupReasons(t *testing.T) {
	c, _ := newCore(t)
	_, err := c.Client.SetType(ctx, &core.TypePolicy{Type: "gc", GroupConcurrency: 1})
	require.NoError(t, err)
	_, err = c.Client.SetType(ctx, &core.TypePolicy{Type: "gr", GroupRate: &core.Rate{Limit: 1, Per: time.Minute}})
	require.NoError(t, err)
	var held [2]*core.Job
	for i, jobType := range []string{"gc", "gr"} {
		for range 2 {
			held[i], err = c.Client.Create(ctx, jobType, nil, &core.CreateOpts{Group: "acme"})
			require.NoError(t, err)
		}
	}
	require.Len(t, lease(t, c, core.LeaseRequest{Types: []string{"gc"}, Max: 2}), 1)
	started := lease(t, c, core.LeaseRequest{Types: []string{"gr"}, Max: 2})
	require.Len(t, started, 1)

	ex, err := c.Client.Explain(ctx, held[0].ID)
	require.NoError(t, err)
	require.Equal(t, core.ReasonGroupConcurrency, ex.Reason)
	require.Equal(t, [2]int64{1, 1}, [2]int64{ex.Active, ex.Limit})
	require.Contains(t, ex.Detail, `"acme"`)
	ex, err = c.Client.Explain(ctx, held[1].ID)
	require.NoError(t, err)
	require.Equal(t, core.ReasonGroupRate, ex.Reason)
	require.Equal(t, started[0].StartedAt+60_000, ex.Until)
}

// TestGroupLimitsHoldAcrossTwoCores: two cores on one Redis, 8 leasers
// (spread over both by NATS) asking for 5 each: with group_concurrency 2
// and 3 groups, 6 jobs start in all, at most 2 of each group; several
// types in one lease (lease.lua) hold the limit too.
func TestGroupLimitsHoldAcrossTwoCores(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	nodetest.AddCore(t, c, service.Config{})
	_, err := c.Client.SetType(ctx, &core.TypePolicy{Type: "db", GroupConcurrency: 2})
	require.NoError(t, err)
	var specs []core.Spec
	for i := range 30 {
		specs = append(specs, core.Spec{Type: "db", Group: fmt.Sprint("g", i%3)}, core.Spec{Type: "other"})
	}
	_, err = c.Client.CreateBulk(ctx, specs)
	require.NoError(t, err)

	var mu sync.Mutex
	byGroup := map[string]int{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			types := []string{"db"}
			if i%2 == 1 {
				types = []string{"db", "other"}
			}
			jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: types, Max: 5})
			require.NoError(t, err)
			mu.Lock()
			for _, j := range jobs {
				if j.Type == "db" {
					byGroup[j.Group]++
				}
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	require.Equal(t, map[string]int{"g0": 2, "g1": 2, "g2": 2}, byGroup)
}
