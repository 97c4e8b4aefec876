package redisstore_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/node/redisproc"
)

// TestWaitReadyWaitsForARedisThatComesUp: a Redis that does not answer
// yet (a Cluster master failing over, a server still starting) is waited
// for until ctx ends, where one ping fails; a refused password ends the
// wait at once.
func TestWaitReadyWaitsForARedisThatComesUp(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	r, err := redisstore.Open(redisstore.Conn{URL: "redis://" + ln.Addr().String()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	require.Error(t, r.Ping(t.Context()), "nothing answers on the port yet")

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	waited := make(chan error, 1)
	go func() { waited <- r.WaitReady(ctx) }()
	srv, err := redisproc.Start(ctx, redisproc.Options{Dir: t.TempDir(), Port: port})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	require.NoError(t, <-waited, "the Redis that came up answered")

	locked, err := redisproc.Start(ctx, redisproc.Options{Dir: t.TempDir(), Password: "right"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = locked.Stop() })
	wrong, err := redisstore.Open(redisstore.Conn{URL: "redis://:wrong@" + locked.Addr()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = wrong.Close() })
	err = wrong.WaitReady(ctx)
	require.ErrorContains(t, err, "WRONGPASS")
	require.NoError(t, ctx.Err(), "a refused password is final: no wait for ctx")
}
