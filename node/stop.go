package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
)

// Stop stops what Start started, whatever it reached, in a fixed order,
// and returns what failed, with what ended the node early (see
// Failed). It differs from the start order in one place: the promoter
// goes first, because a graceful leave is what hands leadership over at
// once, and nothing it needs goes away before it (the other nodes' cores
// serve its last calls). Then each step stops a part that nothing still
// running depends on. Stop may be called more than once; it stops once.
func (n *Node) Stop() error {
	n.stopOnce.Do(func() { n.stopErr = n.stop() })
	return n.stopErr
}

func (n *Node) stop() error {
	var errs []error
	// 0. The event stream's replica raiser (events.go), which calls
	// JetStream on core's connection.
	if n.stopRaise != nil {
		n.stopRaise()
		n.raising.Wait()
	}
	// 1. The promoter: step down (its loops are cancelled and awaited),
	// leave the ring, stop serving cluster.status, shut memberlist down.
	if n.stopRing != nil {
		n.stopRing()
		n.running.Wait()
	}
	// 2. HTTP: no new requests; those in flight get shutdown_timeout.
	n.stopHTTP()
	// 3. Core: take no more requests; those in flight may finish within
	// shutdown_timeout, then their context is cancelled.
	if n.svc != nil {
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.ShutdownTimeout)
		if err := n.svc.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("node: stop core: %w", err))
		}
		cancel()
	}
	// 4. Drain the connections: the last events core published are
	// flushed before they close.
	for _, nc := range []*nats.Conn{n.ringConn, n.httpConn, n.coreConn} {
		if nc != nil {
			if err := drain(nc); err != nil {
				errs = append(errs, fmt.Errorf("node: %w", err))
			}
		}
	}
	// 5. The Redis client: nothing uses it any more.
	if n.redis != nil {
		if err := n.redis.Close(); err != nil {
			errs = append(errs, fmt.Errorf("node: close Redis client: %w", err))
		}
	}
	// 6. The embedded NATS server: every connection above went through
	// it. Clients of other processes reconnect to the other servers of
	// the cluster, which they learnt from this one.
	if n.nats != nil {
		n.nats.Shutdown()
	}
	// 7. The managed redis-server last, once its only client, core, is
	// gone: SIGTERM makes it flush its AOF and exit.
	if n.redisChild != nil {
		if err := n.redisChild.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("node: %w", err))
		}
	}
	n.mu.Lock()
	failure := n.failure
	n.mu.Unlock()
	return errors.Join(failure, errors.Join(errs...))
}

// drain drains nc and waits until it is closed, which nats.go does at the
// latest after the DrainTimeout nc was connected with.
func drain(nc *nats.Conn) error {
	if nc.IsClosed() {
		return nil
	}
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	if err := nc.Drain(); err != nil {
		nc.Close()
		return fmt.Errorf("drain NATS connection: %w", err)
	}
	<-closed
	if err := nc.LastError(); errors.Is(err, nats.ErrDrainTimeout) {
		return fmt.Errorf("drain NATS connection: %w", err)
	}
	return nil
}
