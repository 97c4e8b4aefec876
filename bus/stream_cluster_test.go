package bus_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
)

// TestEnsureEventStreamWaitsForAJetStreamClusterWithoutQuorum: the first
// server of a cluster of three has JetStream on but no meta leader, and
// answers the stream's creation with silence. EnsureEventStream tries
// again, saying each time that it waits, until its context ends; its
// error says JetStream is not ready, not that there is none.
func TestEnsureEventStreamWaitsForAJetStreamClusterWithoutQuorum(t *testing.T) {
	t.Parallel()
	e, err := bus.StartEmbedded(bus.EmbeddedConfig{
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

// TestEmbeddedJetStreamThatCannotStartFailsTheStart: NATS does not start
// when its JetStream cannot, and logs why only to the logs kuebus turns
// off; the error names the likely causes.
func TestEmbeddedJetStreamThatCannotStartFailsTheStart(t *testing.T) {
	t.Parallel()
	t.Run("a cluster without routes", func(t *testing.T) {
		t.Parallel()
		e, err := bus.StartEmbedded(bus.EmbeddedConfig{Listen: "127.0.0.1:-1", ServerName: "alone",
			ClusterListen: "127.0.0.1:-1", JetStreamDir: t.TempDir(), ReadyTimeout: 2 * time.Second})
		if e != nil {
			e.Shutdown()
		}
		require.ErrorContains(t, err, "not ready after 2s (is the port in use? Can JetStream write its store folder")
		require.ErrorContains(t, err, "In a cluster, JetStream also needs routes to the other servers.")
	})
	t.Run("a store folder that is a file", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(file, nil, 0o600))
		e, err := bus.StartEmbedded(bus.EmbeddedConfig{Listen: "127.0.0.1:-1", JetStreamDir: file, ReadyTimeout: time.Second})
		if e != nil {
			e.Shutdown()
		}
		require.ErrorContains(t, err, "Can JetStream write its store folder "+file+"?")
	})
}
