package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/bus/embedded"
)

// TestEnsureEventStreamWaitsForAJetStreamClusterWithoutQuorum: the first
// server of a cluster of three has JetStream on but no meta leader, and
// answers the stream's creation with silence. EnsureEventStream tries
// again, saying each time that it waits, until its context ends; its
// error says JetStream is not ready, not that there is none.
func TestEnsureEventStreamWaitsForAJetStreamClusterWithoutQuorum(t *testing.T) {
	t.Parallel()
	e, err := embedded.Start(embedded.Config{
		Listen: "127.0.0.1:-1", ServerName: "first", ClusterListen: "127.0.0.1:-1",
		Routes:       []string{"nats-route://" + bustest.FreeAddr(t), "nats-route://" + bustest.FreeAddr(t)},
		JetStreamDir: t.TempDir(),
	})
	require.NoError(t, err)
	t.Cleanup(e.Shutdown)
	nc := bustest.Connect(t, e.ClientURL())

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	var waits []error
	_, err = bus.EnsureEventStream(ctx, nc, bus.Subjects{}, bus.EventStreamConfig{Replicas: 3, FewerReplicas: true,
		WaitFunc: func(err error) { waits = append(waits, err) }})
	require.ErrorIs(t, err, bus.ErrJetStreamNotReady)
	require.NotErrorIs(t, err, bus.ErrNoJetStream)
	require.ErrorContains(t, err, "bus: event stream KUEBUS_EVENTS: JetStream not ready after")
	require.ErrorContains(t, err, "no meta leader yet? (a clustered JetStream has none until a quorum, more than half of its servers, is up and routed: 2 of 3)")
	require.NotEmpty(t, waits, "it said it waits")
	require.ErrorIs(t, waits[0], bus.ErrJetStreamNotReady)
}
