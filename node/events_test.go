package node_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/bus/embedded"
	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/node"
	"github.com/kuebus/kuebus/node/nodetest"
)

// coreOn is a core node on an external NATS, with durable events.
func coreOn(t *testing.T, natsURL string, events clusterconfig.Events) node.Config {
	return node.Config{Node: &clusterconfig.Config{
		Name:        "n",
		Roles:       []string{clusterconfig.RoleCore},
		RedisPrefix: nodetest.Prefix(t, nodetest.NewRedis(t)),
		NATS:        clusterconfig.NATS{External: &clusterconfig.ExternalNATS{URLs: []string{natsURL}}},
		Redis:       clusterconfig.Redis{URL: nodetest.RedisURL(t)},
		Events:      events,
	}}
}

func TestDurableEventsOnAnExternalNATSWithoutJetStreamFailTheStart(t *testing.T) {
	t.Parallel()
	srv := bustest.NewServer(t) // no JetStream
	n, err := node.Start(context.Background(), coreOn(t, srv.ClientURL(), clusterconfig.Events{Durable: true}))
	require.NoError(t, n.Stop())
	require.ErrorContains(t, err, "node: events.durable: bus: event stream KUEBUS_EVENTS: the NATS server has no JetStream")
}

func TestDurableEventsOnAnExternalNATSMakeTheStreamWithTheLimits(t *testing.T) {
	t.Parallel()
	srv, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:-1", JetStreamDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	events := clusterconfig.Events{Durable: true, MaxAge: time.Hour, MaxBytes: 8 << 20, Storage: clusterconfig.EventStorageMemory}
	n, err := node.Start(context.Background(), coreOn(t, srv.ClientURL(), events))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, n.Stop()) })

	js, err := jetstream.New(bustest.Connect(t, srv.ClientURL()))
	require.NoError(t, err)
	st, err := js.Stream(context.Background(), "KUEBUS_EVENTS")
	require.NoError(t, err)
	cfg := st.CachedInfo().Config
	require.Equal(t, time.Hour, cfg.MaxAge)
	require.Equal(t, int64(8<<20), cfg.MaxBytes)
	require.Equal(t, jetstream.MemoryStorage, cfg.Storage)
	require.Equal(t, []string{"job.>", "queue.>"}, cfg.Subjects)
}
