package service_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestWaitingLeasesAreBoundedPerCore: with MaxWaitingLeases waiting, one
// more lease that would wait answers unavailable at once and says why; a
// lease that finds a job ready, or does not wait, is served as before; and
// a freed place can be taken again.
func TestWaitingLeasesAreBoundedPerCore(t *testing.T) {
	t.Parallel()
	parked := make(chan struct{}, 10)
	c := nodetest.NewCore(t, service.Config{MaxWaitingLeases: 2, OnLeaseWait: func([]string) { parked <- struct{}{} }})
	got := make(chan []core.Job, 3)
	wait := func() {
		go func() {
			jobs, _ := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"slow"}, Wait: 60_000})
			got <- jobs
		}()
		select {
		case <-parked:
		case <-time.After(10 * time.Second):
			t.Fatal("the lease never waited")
		}
	}
	wait()
	wait()

	start := time.Now()
	_, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"slow"}, Wait: 60_000})
	require.ErrorIs(t, err, core.ErrUnavailable)
	require.ErrorContains(t, err, "wait: 2 leases already wait on this core, its limit")
	require.Less(t, time.Since(start), 30*time.Second, "at once, not after the wait")

	require.Empty(t, lease(t, c, core.LeaseRequest{Types: []string{"slow"}}), "no wait: served")
	ready, err := c.Client.Create(ctx, "ready", nil, nil)
	require.NoError(t, err)
	jobs := lease(t, c, core.LeaseRequest{Types: []string{"ready"}, Wait: 60_000})
	require.Len(t, jobs, 1, "a ready job needs no place in the wait room")
	require.Equal(t, ready.ID, jobs[0].ID)

	_, err = c.Client.Create(ctx, "slow", nil, nil)
	require.NoError(t, err)
	require.Len(t, <-got, 1, "one waiter took the job and left")
	wait() // its place is free again
	for range 2 {
		_, err = c.Client.Create(ctx, "slow", nil, nil)
		require.NoError(t, err)
		require.Len(t, <-got, 1)
	}
}

func TestNegativeMaxWaitingLeasesIsRefused(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	_, err := service.New(service.Config{Store: c.Store, Conn: c.NATS.Conn, MaxWaitingLeases: -1})
	require.ErrorContains(t, err, "MaxWaitingLeases: -1 is negative")
}
