package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node"
	"github.com/kuebus/kuebus/node/nodetest"
)

// startOutboxNode starts a ring member with the outbox role on the queue
// of c, its relay the test's kuebus-outbox on d; the test stops it.
func startOutboxNode(t *testing.T, name string, c *nodetest.Core, d *testDB, seeds ...string) *node.Node {
	t.Helper()
	n, err := node.Start(context.Background(), node.Config{Node: &clusterconfig.Config{
		Name:       name,
		Roles:      []string{clusterconfig.RolePromoter, clusterconfig.RoleOutbox},
		NATS:       clusterconfig.NATS{External: &clusterconfig.ExternalNATS{URLs: []string{c.NATS.ClientURL()}}},
		Memberlist: clusterconfig.Memberlist{Bind: "127.0.0.1:0", Preset: clusterconfig.PresetLocal, Seeds: seeds},
		Outbox: clusterconfig.Outbox{Driver: d.dialect.String(), DSN: d.dsn, Binary: relayBinary(t),
			Args: []string{"--poll-interval", "20ms"}},
	}})
	t.Cleanup(func() { _ = n.Stop() })
	require.NoError(t, err)
	return n
}

func TestTheRingsLeaderRunsTheRelayAndTheNextLeaderTakesOver(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a relay binary and runs a ring")
	}
	d := newSQLiteDB(t)
	c := nodetest.NewCore(t, service.Config{})
	ob := d.outbox(t)
	ctx := context.Background()
	count := func() int64 {
		n, err := c.Client.Count(ctx, "", "role")
		require.NoError(t, err)
		return n
	}
	batch := func(from int) []core.Spec {
		specs := make([]core.Spec, 10)
		for i := range specs {
			specs[i] = spec("role", from+i)
		}
		return specs
	}

	a := startOutboxNode(t, "a", c, d)
	enqueue(t, d.db, ob, true, batch(0)...)
	require.Eventually(t, func() bool { return count() == 10 }, 60*time.Second, 5*time.Millisecond,
		"the leader, a, runs the relay")

	startOutboxNode(t, "b", c, d, a.Info().RingAddr)
	require.NoError(t, a.Stop(), "a stops its relay with itself")
	enqueue(t, d.db, ob, true, batch(10)...)
	// The table empties after the jobs exist: the relay deletes a batch's
	// rows once core has made its jobs.
	require.Eventually(t, func() bool { return d.rows(t, "kuebus_outbox") == 0 }, 60*time.Second, 5*time.Millisecond,
		"b leads once a has left, and runs the relay")
	require.Equal(t, int64(20), count())
}
