package clusterconfig

import (
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
}

// StreamConfig is the stream's limits and storage in bus's terms.
func (e Events) StreamConfig() bus.EventStreamConfig {
	return bus.EventStreamConfig{MaxAge: e.MaxAge, MaxBytes: int64(e.MaxBytes), Memory: e.Storage == EventStorageMemory}
}

func (e *Events) withDefaults() {
	if !e.Durable {
		return
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
	if v.c.Has(RoleNATS) && e.StoreDir == "" {
		v.fail("events.store_dir", "required with events.durable on the embedded NATS: the folder JetStream keeps its files in")
	}
	if !v.c.Has(RoleNATS) && e.StoreDir != "" {
		v.fail("events.store_dir", "only for the embedded NATS (the nats role): an external NATS has its own")
	}
}
