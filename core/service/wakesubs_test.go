package service_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestAWaitingLeaseWakesOnAnotherCoresEnqueue: the job is stored behind
// this core's back and only the job.enqueue event another core would
// publish reaches this one: the lease's type subscription, made when the
// lease began to wait, wakes it.
func TestAWaitingLeaseWakesOnAnotherCoresEnqueue(t *testing.T) {
	t.Parallel()
	parked := make(chan struct{}, 10)
	c := nodetest.NewCore(t, service.Config{OnLeaseWait: func([]string) { parked <- struct{}{} }})
	got := make(chan []core.Job, 1)
	go func() {
		jobs, _ := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"other"}, Wait: 60_000})
		got <- jobs
	}()
	waitFor(t, parked, "the lease waits")
	jobs, _, err := c.Store.Create(ctx, time.Now().UnixMilli(), []core.Spec{{Type: "other", Priority: core.PriorityNormal}})
	require.NoError(t, err)
	ev, err := json.Marshal(core.Event{Event: bus.EventEnqueue, ID: jobs[0].ID, Type: "other", At: 1})
	require.NoError(t, err)
	require.NoError(t, c.NATS.Conn.Publish(c.Client.Subjects().Job(bus.EventEnqueue, jobs[0].ID, "other"), ev))
	select {
	case leased := <-got:
		require.Len(t, leased, 1)
		require.Equal(t, jobs[0].ID, leased[0].ID)
	case <-time.After(10 * time.Second):
		t.Fatal("job.enqueue from another core did not wake the waiting lease (wait was 60 s)")
	}
}
