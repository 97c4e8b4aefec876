package clusterconfig

import (
	"net/url"
	"time"

	"github.com/kuebus/kuebus/bus"
)

// Event storage kinds: where the durable event stream keeps its events.
const (
	EventStorageFile   = "file"   // on disk: survives a restart of the NATS server
	EventStorageMemory = "memory" // in the server's memory: survives a reader's restart only
)

// Defaults of the events section, used when events.durable is on.
const (
	EventsMaxAgeDefault   = bus.EventMaxAgeDefault   // 24h
	EventsMaxBytesDefault = bus.EventMaxBytesDefault // 1 GiB
	EventsStorageDefault  = EventStorageFile
	// EventsReplicasClusterMax is the default replica count's cap on an
	// embedded NATS cluster: 3 copies survive the loss of one server, and
	// more would slow every event for little.
	EventsReplicasClusterMax = 3
	// EventsReplicasMax is JetStream's own bound on a stream's replicas.
	EventsReplicasMax = 5
)

// Events says whether the events are durable: kept in a JetStream stream
// on job.> and queue.> (bus.EnsureEventStream), which a reader replays
// from a time or a sequence. Every core node creates or updates the
// stream at start; an external NATS must have JetStream.
type Events struct {
	// Durable turns the stream on. Default false: events are plain NATS
	// messages, at most once.
	Durable bool `yaml:"durable"`
	// MaxAge is how long an event is kept. Default 24h.
	MaxAge time.Duration `yaml:"max_age"`
	// MaxBytes bounds the stream's size in bytes; the oldest events go
	// first. Default 1073741824 (1 GiB).
	MaxBytes int `yaml:"max_bytes"`
	// Storage is file or memory. Default file.
	Storage string `yaml:"storage"`
	// StoreDir is the folder the embedded NATS keeps JetStream's files in;
	// required with durable events on the embedded NATS (kuebus dev uses
	// DATA_DIR/nats). An external NATS has its own.
	StoreDir string `yaml:"store_dir"`
	// Replicas is how many NATS servers keep a copy of every event (the
	// stream's JetStream replicas), 1 to 5. Default: on an embedded NATS
	// cluster, as many as it has servers (itself and its routes), at most
	// 3, so that the stream survives the loss of one server of three;
	// otherwise 1 (on an external NATS cluster, set it: e.g. 3). Give every
	// core node the same: each sets the stream's replicas at start.
	Replicas int `yaml:"replicas"`
}

// StreamConfig is the stream's limits and storage in bus's terms.
func (e Events) StreamConfig() bus.EventStreamConfig {
	return bus.EventStreamConfig{MaxAge: e.MaxAge, MaxBytes: int64(e.MaxBytes), Memory: e.Storage == EventStorageMemory, Replicas: e.Replicas}
}

// withDefaults fills the section in; servers is how many servers the
// node's embedded NATS cluster has (0: no embedded NATS).
func (e *Events) withDefaults(servers int) {
	if !e.Durable {
		return
	}
	if e.Replicas == 0 {
		e.Replicas = min(max(servers, 1), EventsReplicasClusterMax)
	}
	if e.MaxAge == 0 {
		e.MaxAge = EventsMaxAgeDefault
	}
	if e.MaxBytes == 0 {
		e.MaxBytes = EventsMaxBytesDefault
	}
	if e.Storage == "" {
		e.Storage = EventsStorageDefault
	}
}

// events checks the events section when durable events are on.
func (v *validator) events() {
	e := v.c.Events
	if !e.Durable {
		return
	}
	if e.MaxAge < 0 {
		v.fail("events.max_age", "%s is negative: give how long an event is kept, e.g. 24h", e.MaxAge)
	} else if e.MaxAge < time.Second {
		v.fail("events.max_age", "%s is under a second: events would go before a reader could replay them", e.MaxAge)
	}
	if e.MaxBytes < 0 {
		v.fail("events.max_bytes", "%d is negative: give the stream's size in bytes, e.g. 1073741824", e.MaxBytes)
	} else if e.MaxBytes < 1<<20 {
		v.fail("events.max_bytes", "%d is under 1 MiB (1048576): too small to keep a useful history", e.MaxBytes)
	}
	if e.Storage != EventStorageFile && e.Storage != EventStorageMemory {
		v.fail("events.storage", "%q is not %s or %s", e.Storage, EventStorageFile, EventStorageMemory)
	}
	if servers := v.c.embeddedServers(); e.Replicas < 1 || e.Replicas > EventsReplicasMax {
		v.fail("events.replicas", "%d is not from 1 to %d: give how many NATS servers keep a copy of each event", e.Replicas, EventsReplicasMax)
	} else if servers > 0 && e.Replicas > servers {
		v.fail("events.replicas", "%d is more than the %d NATS server(s) of this node's cluster (itself and nats.embedded.routes): JetStream could not place the copies", e.Replicas, servers)
	}
	if n := v.c.NATS.Embedded; v.c.Has(RoleNATS) && n != nil && n.ClusterListen != "" && len(n.Routes) == 0 {
		v.fail("nats.embedded.routes", "required with events.durable on a NATS cluster: JetStream counts its servers from the routes (give each server routes to all the others)")
	}
	if v.c.Has(RoleNATS) && e.StoreDir == "" {
		v.fail("events.store_dir", "required with events.durable on the embedded NATS: the folder JetStream keeps its files in")
	}
	if !v.c.Has(RoleNATS) && e.StoreDir != "" {
		v.fail("events.store_dir", "only for the embedded NATS (the nats role): an external NATS has its own")
	}
}

// embeddedServers is how many servers the node's embedded NATS cluster
// has: itself and each route to another (a route to its own
// cluster_listen, which NATS allows, is not another); 0 without the nats
// role.
func (c *Config) embeddedServers() int {
	e := c.NATS.Embedded
	if !c.Has(RoleNATS) || e == nil {
		return 0
	}
	n := 1
	for _, r := range e.Routes {
		if u, err := url.Parse(r); err != nil || u.Host != e.ClusterListen {
			n++
		}
	}
	return n
}
