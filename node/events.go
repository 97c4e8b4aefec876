package node

import (
	"context"
	"fmt"
	"time"

	"github.com/kuebus/kuebus/bus"
)

// eventStreamWait bounds creating or updating the event stream at start.
// Most of it is for a JetStream cluster: its first servers to start have
// no meta leader, and so no stream, until a quorum of them (2 of 3) is up,
// and `kuebus node` × 3 started by hand, or by a supervisor one after the
// other, may take a while. A single server or an external NATS with
// JetStream answers at once, and one without JetStream fails at once.
const eventStreamWait = time.Minute

// eventStreamLogEvery spaces the "waiting for JetStream" lines.
const eventStreamLogEvery = 5 * time.Second

// ensureEventStream creates or updates the durable event stream
// (events.durable) on core's connection, whose role may do exactly that;
// without durable events it does nothing. While JetStream is not ready
// (a cluster without its quorum) it waits, logging why, up to
// eventStreamWait; an external NATS without JetStream fails the start
// here, by name.
func (n *Node) ensureEventStream(ctx context.Context) error {
	ev := n.cfg.Events
	if !ev.Durable {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, eventStreamWait)
	defer cancel()
	sc := ev.StreamConfig()
	var logged time.Time
	sc.WaitFunc = func(err error) {
		if time.Since(logged) < eventStreamLogEvery {
			return
		}
		logged = time.Now()
		n.log.InfoContext(ctx, "durable events: waiting for JetStream (a cluster serves once 2 of 3 servers are up)",
			"replicas", sc.Replicas, "wait_max", eventStreamWait.String(), "why", err.Error())
	}
	// With its quorum a cluster serves before all its servers are up: the
	// stream starts with the replicas it can place, and raiseReplicas
	// gives it the rest when their servers come.
	sc.FewerReplicas = true
	info, err := bus.EnsureEventStream(ctx, n.coreConn, n.subj, sc)
	if err != nil {
		return fmt.Errorf("node: events.durable: %w", err)
	}
	n.log.Info("durable events", "stream", info.Config.Name, "max_age", info.Config.MaxAge.String(), "max_bytes", info.Config.MaxBytes,
		"storage", info.Config.Storage.String(), "replicas", info.Config.Replicas, "events", info.State.Msgs)
	if got := info.Config.Replicas; got < sc.Replicas {
		n.log.Warn("durable events: fewer replicas than events.replicas, until more NATS servers are up; raising them in the background",
			"replicas", got, "events_replicas", sc.Replicas)
		rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		n.stopRaise = stop
		n.raising.Go(func() { n.raiseReplicas(rctx, sc) })
	}
	return nil
}

// raiseReplicasEvery spaces raiseReplicas's attempts.
const raiseReplicasEvery = 2 * time.Second

// raiseReplicas sets the stream's replicas to events.replicas once the
// cluster can place them (each node's start does it too), trying every
// raiseReplicasEvery until it succeeds or ctx ends (Stop).
func (n *Node) raiseReplicas(ctx context.Context, sc bus.EventStreamConfig) {
	sc.FewerReplicas, sc.WaitFunc = false, nil
	var logged time.Time
	t := time.NewTicker(raiseReplicasEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		actx, cancel := context.WithTimeout(ctx, eventStreamLogEvery)
		info, err := bus.EnsureEventStream(actx, n.coreConn, n.subj, sc)
		cancel()
		switch {
		case err == nil:
			n.log.Info("durable events: the stream has its replicas", "replicas", info.Config.Replicas)
			return
		case ctx.Err() != nil:
			return
		case time.Since(logged) > time.Minute:
			logged = time.Now()
			n.log.Warn("durable events: cannot raise the stream's replicas yet", "events_replicas", sc.Replicas, "err", err)
		}
	}
}
