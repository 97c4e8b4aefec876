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
	require.Equal(t, clusterconfig.Events{Durable: true, MaxAge: 24 * time.Hour, MaxBytes: 1 << 30, Storage: "file"}, c.Events)
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
	}))
	require.NoError(t, err)
	require.Equal(t, clusterconfig.Events{Durable: true, MaxAge: 10 * time.Minute, MaxBytes: 2 << 20, Storage: "memory"}, c.Events)
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
