package service_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestSameMillisecondDelayedJobsRunInCreationOrder: 20 jobs of one
// create_bulk with one delay fall due at the same millisecond. Promoted 7
// at a time (the limit cuts the group) and leased, they come in creation
// order, not in the text order of their ids ([1 10 11 … 19 2 20 3 …]).
func TestSameMillisecondDelayedJobsRunInCreationOrder(t *testing.T) {
	c, clock := newCore(t)
	specs := make([]core.Spec, 20)
	for i := range specs {
		specs[i] = core.Spec{Type: "due", Delay: 1000 * time.Millisecond}
	}
	jobs, err := c.Client.CreateBulk(ctx, specs)
	require.NoError(t, err)
	created := make([]int64, len(jobs))
	for i, j := range jobs {
		created[i] = j.ID
	}
	clock.Advance(time.Second)
	for moved := 0; moved < len(jobs); {
		mv, err := c.Client.Promote(ctx, 7)
		require.NoError(t, err)
		require.Positive(t, mv.Moved)
		moved += mv.Moved
	}
	var leased []int64
	for _, j := range lease(t, c, core.LeaseRequest{Types: []string{"due"}, Max: 20}) {
		leased = append(leased, j.ID)
	}
	require.Equal(t, created, leased)
}

// TestALeaseTooLateForItsAskerLeasesNothing: a waiting lease whose wait
// plus half of LeaseReplyMargin has passed (by core's clock; a core that
// stalled) leases nothing more: its asker has given up, and jobs in a
// reply nobody reads would sit leased until their ttl and count a stall.
func TestALeaseTooLateForItsAskerLeasesNothing(t *testing.T) {
	t.Parallel()
	clock := nodetest.NewClock(t0)
	waiting := make(chan struct{}, 4)
	c := nodetest.NewCore(t, service.Config{Now: clock.Now, OnLeaseWait: func([]string) { waiting <- struct{}{} }})
	reply := make(chan []core.Job, 1)
	go func() {
		jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"late"}, Wait: 1000})
		if err != nil {
			t.Error(err)
		}
		reply <- jobs
	}()
	<-waiting
	clock.Advance(time.Second + core.LeaseReplyMargin) // core stalled past the asker's patience
	job, err := c.Client.Create(ctx, "late", nil, nil)
	require.NoError(t, err)
	select {
	case r := <-reply:
		require.Empty(t, r, "nothing leased for an asker that gave up")
	case <-time.After(10 * time.Second):
		t.Fatal("no reply to the waiting lease")
	}
	got, err := c.Client.Get(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, got.State)
	require.Zero(t, got.Stalls)
	require.Equal(t, job.ID, lease(t, c, core.LeaseRequest{Types: []string{"late"}})[0].ID, "the next lease takes it")
}
