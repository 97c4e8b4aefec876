package httpapi

import (
	"time"

	"github.com/kuebus/kuebus/core"
)

// Metrics is what a metrics backend gets from the server: every event it
// receives from the bus, and every call it makes to core. httpapi/prom is the
// Prometheus backend. Both methods are called concurrently and must not block.
type Metrics interface {
	// Event is called once for each job and queue event, as published by
	// core (or by the promoter: queue.leader).
	Event(ev *core.Event)
	// RPC is called after each call to core.<method>, with its latency and
	// its error (nil on success).
	RPC(method string, took time.Duration, err error)
}

type nopMetrics struct{}

func (nopMetrics) Event(*core.Event)                {}
func (nopMetrics) RPC(string, time.Duration, error) {}

var _ Metrics = nopMetrics{}
