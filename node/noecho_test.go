package node_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node"
	"github.com/kuebus/kuebus/node/nodetest"
)

// Core's connection does not get back the events core publishes (NoEcho):
// they would cost the server a copy and core a read per job. Its own
// waiting leases still wake on its own creates, directly.
func TestCoreGetsNoEchoOfItsEventsAndStillWakesItsLeases(t *testing.T) {
	cfg := devLike(t, nodetest.RedisURL(t))
	cfg.Roles = []string{clusterconfig.RoleNATS, clusterconfig.RoleCore}
	waiting := make(chan struct{}, 1)
	n, err := node.Start(t.Context(), node.Config{Node: cfg, Alone: true,
		Service: func(c *service.Config) {
			c.OnLeaseWait = func([]string) {
				select {
				case waiting <- struct{}{}:
				default:
				}
			}
		}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, n.Stop()) })
	client, err := core.NewClient(bustest.Connect(t, n.Info().NATSURL), nil)
	require.NoError(t, err)

	t.Run("a bulk of 200 creates comes back as no message to core", func(t *testing.T) {
		before := n.CoreConn().Stats().InMsgs
		specs := make([]core.Spec, 200)
		for i := range specs {
			specs[i] = core.Spec{Type: "echo"}
		}
		_, err := client.CreateBulk(t.Context(), specs)
		require.NoError(t, err)
		// Messages to core's connection arrive in order: once core has
		// answered this get, any copy of the 200 enqueue events published
		// before its reply to the bulk would have reached it.
		_, err = client.Exists(t.Context(), 1)
		require.NoError(t, err)
		require.Less(t, n.CoreConn().Stats().InMsgs-before, uint64(10),
			"core received its own events back: only the two requests should have come")
	})

	t.Run("a lease waiting on this core wakes on a create through it", func(t *testing.T) {
		got := make(chan []core.Job, 1)
		go func() {
			jobs, err := client.Lease(t.Context(), core.LeaseRequest{Types: []string{"wake"}, Max: 1, Worker: "w", Wait: waitTimeout.Milliseconds()})
			if err != nil {
				t.Error(err)
			}
			got <- jobs
		}()
		<-waiting
		job, err := client.Create(t.Context(), "wake", nil, nil)
		require.NoError(t, err)
		jobs := <-got
		require.Len(t, jobs, 1, "the waiting lease ended without the job: nothing woke it")
		require.Equal(t, job.ID, jobs[0].ID)
	})
}

// Beside the embedded server, core neither encodes nor sends the events
// nobody would receive; once someone subscribes, they flow.
func TestCoreSendsNoEventNobodyListensTo(t *testing.T) {
	cfg := devLike(t, nodetest.RedisURL(t))
	cfg.Roles = []string{clusterconfig.RoleNATS, clusterconfig.RoleCore}
	n, err := node.Start(t.Context(), node.Config{Node: cfg, Alone: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, n.Stop()) })
	nc := bustest.Connect(t, n.Info().NATSURL)
	client, err := core.NewClient(nc, nil)
	require.NoError(t, err)
	specs := make([]core.Spec, 100)
	for i := range specs {
		specs[i] = core.Spec{Type: "quiet"}
	}

	before := n.CoreConn().Stats().OutMsgs
	_, err = client.CreateBulk(t.Context(), specs)
	require.NoError(t, err)
	require.Less(t, n.CoreConn().Stats().OutMsgs-before, uint64(10),
		"core sent the enqueue events of 100 jobs nobody listens to")

	got := make(chan struct{}, len(specs))
	_, err = client.Subscribe(client.Subjects().JobEventsOf(bus.EventEnqueue, "quiet"), func(*core.Event) { got <- struct{}{} })
	require.NoError(t, err) // Subscribe returns once the server has the subscription
	_, err = client.CreateBulk(t.Context(), specs)
	require.NoError(t, err)
	for range specs {
		select {
		case <-got:
		case <-time.After(waitTimeout):
			t.Fatal("an enqueue event a subscriber listens to did not arrive")
		}
	}
}
