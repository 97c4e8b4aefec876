package core

import (
	"context"

	"github.com/kuebus/kuebus/bus"
)

// Heartbeat is heartbeat's request: a worker says it is alive and what it
// does, every HeartbeatEvery while it runs, and Gone when it stops.
type Heartbeat struct {
	Worker      string   `json:"worker"`
	Types       []string `json:"types"`
	Concurrency int      `json:"concurrency"`
	// Running is how many handlers run now.
	Running int `json:"running"`
	// Host and PID say where the worker runs. Optional.
	Host string `json:"host,omitempty"`
	PID  int    `json:"pid,omitempty"`
	// StartedAt is when the worker started (unix ms).
	StartedAt int64 `json:"started_at"`
	// Gone: the worker stops, and leaves the list at once.
	Gone bool `json:"gone,omitempty"`
	// Instance is a random token of this worker process, the same in each
	// of its heartbeats and never listed: a gone heartbeat must carry the
	// token the worker's last heartbeat did, so that another process
	// cannot take the worker off the list. Optional; a heartbeat without
	// one replaces the token.
	Instance string `json:"instance,omitempty"`
}

// Bounds of a heartbeat's numbers.
const (
	MaxWorkerConcurrency = 1 << 20
	MaxWorkerPID         = 1 << 22 // Linux's pid_max
	MaxInstanceLen       = 64
)

// Heartbeat timing (docs/protocol.md §3.37), in ms. Workers beat every
// HeartbeatEvery. A worker not heard from for WorkerSilentAfter is silent
// (killed, hung, cut off): the leader's rescue ends the leases of its
// active jobs, whatever their ttl, and they run again elsewhere, within
// about WorkerSilentAfter of its last beat. A worker paused for less than
// WorkerSilentAfter - HeartbeatEvery (2.5 s) keeps its jobs; one that
// comes back later finds its leases spent and cancels those handlers.
// workers lists the workers heard from within WorkerSeenWithin.
const (
	HeartbeatEvery    = 200
	WorkerSilentAfter = 2700
	WorkerSeenWithin  = 15000
)

// WorkerInfo is a worker as workers lists it: its last heartbeat and when
// it was heard (SeenAt, unix ms, core's clock).
type WorkerInfo struct {
	Heartbeat
	SeenAt int64 `json:"seen_at"`
}

// WorkersReply is workers' reply: the workers heard from lately, by id.
type WorkersReply struct {
	Workers []WorkerInfo `json:"workers"`
}

// Heartbeat tells core that a worker is alive (the worker package sends it).
func (c *Client) Heartbeat(ctx context.Context, hb Heartbeat) error {
	return c.call(ctx, bus.MethodHeartbeat, hb, nil)
}

// Workers lists the workers heard from within WorkerSeenWithin.
func (c *Client) Workers(ctx context.Context) ([]WorkerInfo, error) {
	var reply WorkersReply
	if err := c.call(ctx, bus.MethodWorkers, Empty{}, &reply); err != nil {
		return nil, err
	}
	return reply.Workers, nil
}
