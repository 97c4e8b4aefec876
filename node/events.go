package node

import (
	"context"
	"fmt"
	"time"

	"github.com/kuebus/kuebus/bus"
)

// eventStreamTimeout bounds creating or updating the event stream at start.
const eventStreamTimeout = 10 * time.Second

// ensureEventStream creates or updates the durable event stream
// (events.durable) on core's connection, whose role may do exactly that;
// without durable events it does nothing. An external NATS without
// JetStream fails the start here, by name.
func (n *Node) ensureEventStream(ctx context.Context) error {
	ev := n.cfg.Events
	if !ev.Durable {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, eventStreamTimeout)
	defer cancel()
	info, err := bus.EnsureEventStream(ctx, n.coreConn, n.subj, ev.StreamConfig())
	if err != nil {
		return fmt.Errorf("node: events.durable: %w", err)
	}
	n.log.Info("durable events", "stream", info.Config.Name, "max_age", info.Config.MaxAge.String(), "max_bytes", info.Config.MaxBytes,
		"storage", info.Config.Storage.String(), "events", info.State.Msgs)
	return nil
}
