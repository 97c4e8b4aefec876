package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core/service"
)

// lowerParts are what a node runs beneath its promoter and HTTP, stopped
// once those are stopped.
type lowerParts struct {
	svc     *service.Service
	conns   []*nats.Conn // drained in this order
	rdb     redis.UniversalClient
	nats    *bus.Embedded // nil with external NATS
	timeout time.Duration // how long core's requests in flight may run on
}

// stop stops them in a fixed order (STYLE §6), whatever was started, and
// returns what failed, each error prefixed with who.
func (p lowerParts) stop(who string) []error {
	var errs []error
	// Core: take no more requests; those in flight may finish within the
	// timeout, then their context is cancelled.
	if p.svc != nil {
		ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
		if err := p.svc.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: stop core: %w", who, err))
		}
		cancel()
	}
	// Drain the connections: the last events core published are flushed
	// before they close.
	for _, nc := range p.conns {
		if nc != nil {
			if err := drain(nc); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", who, err))
			}
		}
	}
	// The Redis client: nothing uses it any more.
	if p.rdb != nil {
		if err := p.rdb.Close(); err != nil {
			errs = append(errs, fmt.Errorf("%s: close Redis client: %w", who, err))
		}
	}
	// The embedded NATS server last: every connection above went through
	// it. Clients of other processes reconnect to the other servers of the
	// cluster, which they learnt from this one.
	if p.nats != nil {
		p.nats.Shutdown()
	}
	return errs
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
