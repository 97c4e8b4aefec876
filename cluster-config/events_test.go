package clusterconfig_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	clusterconfig "github.com/kuebus/kuebus/cluster-config"
)

// durableBase is a core node on external NATS, to which each case adds an
// events section.
const durableBase = "name: n\nroles: [core]\nnats: {external: {urls: [nats://n:4222]}}\nredis: {url: redis://r:6379}\n"

func TestDurableEventsHaveDefaults(t *testing.T) {
	t.Parallel()
	c, err := clusterconfig.Parse([]byte(durableBase+"events: {durable: true}\n"), "node.yaml", nil)
	require.NoError(t, err)
	require.Equal(t, clusterconfig.Events{Durable: true, MaxAge: 24 * time.Hour, MaxBytes: 1 << 30, Storage: "file", Replicas: 1}, c.Events)
	require.False(t, c.Events.StreamConfig().Memory)

	c, err = clusterconfig.Parse([]byte(durableBase), "node.yaml", nil)
	require.NoError(t, err)
	require.Equal(t, clusterconfig.Events{}, c.Events, "off by default")
}

func TestDurableEventsFromTheEnvironment(t *testing.T) {
	t.Parallel()
	c, err := clusterconfig.Parse([]byte(durableBase), "node.yaml", env(map[string]string{
		"KUEBUS_EVENTS_DURABLE":   "true",
		"KUEBUS_EVENTS_MAX_AGE":   "10m",
		"KUEBUS_EVENTS_MAX_BYTES": "2097152",
		"KUEBUS_EVENTS_STORAGE":   "memory",
		"KUEBUS_EVENTS_REPLICAS":  "3",
	}))
	require.NoError(t, err)
	require.Equal(t, clusterconfig.Events{Durable: true, MaxAge: 10 * time.Minute, MaxBytes: 2 << 20, Storage: "memory", Replicas: 3}, c.Events)
	require.Equal(t, 3, c.Events.StreamConfig().Replicas)
	require.True(t, c.Events.StreamConfig().Memory)

	_, err = clusterconfig.Parse([]byte(durableBase), "node.yaml", env(map[string]string{"KUEBUS_EVENTS_DURABLE": "yes please"}))
	require.ErrorContains(t, err, `$KUEBUS_EVENTS_DURABLE (events.durable): "yes please" is not true or false`)
	_, err = clusterconfig.Parse([]byte(durableBase), "node.yaml", env(map[string]string{"KUEBUS_EVENTS_DURABLE": "1", "KUEBUS_EVENTS_MAX_AGE": "-1h"}))
	require.ErrorContains(t, err, "config: events.max_age ($KUEBUS_EVENTS_MAX_AGE): -1h0m0s is negative")
}

func TestBadDurableEventsNameTheField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, yaml, want string }{
		{"a negative age", durableBase + "events: {durable: true, max_age: -1s}", "config: events.max_age: -1s is negative"},
		{"an age under a second", durableBase + "events: {durable: true, max_age: 10ms}", "config: events.max_age: 10ms is under a second"},
		{"a negative size", durableBase + "events: {durable: true, max_bytes: -5}", "config: events.max_bytes: -5 is negative"},
		{"a tiny size", durableBase + "events: {durable: true, max_bytes: 1000}", "config: events.max_bytes: 1000 is under 1 MiB"},
		{"an unknown storage", durableBase + "events: {durable: true, storage: tape}", `config: events.storage: "tape" is not file or memory`},
		{"a store dir for external NATS", durableBase + "events: {durable: true, store_dir: /d}", "config: events.store_dir: only for the embedded NATS"},
		{"embedded NATS without a store dir", "name: a\nroles: [nats]\nevents: {durable: true}", "config: events.store_dir: required with events.durable on the embedded NATS"},
		{"a size that is not a number", durableBase + "events: {durable: true, max_bytes: 1GiB}", "node.yaml:5:"},
		{"negative replicas", durableBase + "events: {durable: true, replicas: -1}", "config: events.replicas: -1 is not from 1 to 5"},
		{"more replicas than JetStream keeps", durableBase + "events: {durable: true, replicas: 6}", "config: events.replicas: 6 is not from 1 to 5"},
		{"more replicas than the embedded cluster has servers", embeddedCluster + "  replicas: 4\n",
			"config: events.replicas: 4 is more than the 3 NATS server(s) of this node's cluster"},
		{"a cluster listen address without routes", "name: a\nroles: [nats]\nnats: {embedded: {cluster_listen: 127.0.0.1:6222}}\nevents: {durable: true, store_dir: /d}",
			"config: nats.embedded.routes: required with events.durable on a NATS cluster"},
		{"replicas on a single embedded server", "name: a\nroles: [nats]\nevents: {durable: true, store_dir: /d, replicas: 2}",
			"config: events.replicas: 2 is more than the 1 NATS server(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := clusterconfig.Parse([]byte(tc.yaml), "node.yaml", nil)
			require.ErrorContains(t, err, tc.want)
		})
	}
	// Limits without durable events are not checked: they are not used.
	_, err := clusterconfig.Parse([]byte(durableBase+"events: {max_age: -1s}"), "node.yaml", nil)
	require.NoError(t, err)
}

// embeddedCluster is node-a of an embedded NATS cluster of three, with
// durable events; a case may add to its events section.
const embeddedCluster = `name: a
roles: [nats]
nats:
  embedded:
    cluster_listen: 127.0.0.1:6222
    routes: [nats-route://127.0.0.1:6223, nats-route://127.0.0.1:6224]
events:
  durable: true
  store_dir: /d
`

func TestDurableEventsOnAnEmbeddedClusterKeepACopyOnEachOfThreeServers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		routes string
		want   int
	}{
		{"a cluster of two keeps two", "[nats-route://127.0.0.1:6223]", 2},
		{"a cluster of three keeps three", "[nats-route://127.0.0.1:6223, nats-route://127.0.0.1:6224]", 3},
		{"a route to the server itself is not another server", "[nats-route://127.0.0.1:6222, nats-route://127.0.0.1:6223, nats-route://127.0.0.1:6224]", 3},
		{"a cluster of five keeps three", "[nats-route://h:1, nats-route://h:2, nats-route://h:3, nats-route://h:4]", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yaml := "name: a\nroles: [nats]\nnats: {embedded: {cluster_listen: 127.0.0.1:6222, routes: " + tc.routes + "}}\nevents: {durable: true, store_dir: /d}\n"
			c, err := clusterconfig.Parse([]byte(yaml), "node.yaml", nil)
			require.NoError(t, err)
			require.Equal(t, tc.want, c.Events.Replicas)
		})
	}
	c, err := clusterconfig.Parse([]byte("name: a\nroles: [nats]\nevents: {durable: true, store_dir: /d}\n"), "node.yaml", nil)
	require.NoError(t, err)
	require.Equal(t, 1, c.Events.Replicas, "a single server keeps one")
	c, err = clusterconfig.Parse([]byte(embeddedCluster+"  replicas: 2\n"), "node.yaml", nil)
	require.NoError(t, err)
	require.Equal(t, 2, c.Events.Replicas, "a number given is kept")
}
