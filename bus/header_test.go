package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
)

// TestHeadersOfTheContextReachTheHandler: the headers a caller's context
// carries (WithHeader) go out with the call, and the handler reads them
// from its own (RequestHeader); a call without any sends none, and a
// context's headers are its own: a child's header does not change its
// parent's.
func TestHeadersOfTheContextReachTheHandler(t *testing.T) {
	ns := bustest.NewServer(t)
	subj, _ := bus.NewSubjects("")
	srv, err := bus.NewServer(ns.Conn, bus.ServerConfig{Name: "echo"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	got := make(chan []string, 1)
	err = bus.Handle(srv, "echo", subj.Core("echo"), func(ctx context.Context, _ *struct{}) (*struct{}, error) {
		h := bus.RequestHeader(ctx)
		got <- []string{h.Get(bus.HeaderTraceparent), h.Get(bus.HeaderTracestate)}
		return &struct{}{}, nil
	})
	require.NoError(t, err)
	require.NoError(t, srv.Ready())
	client := bus.NewClient(bustest.Connect(t, ns.ClientURL()), 5*time.Second)

	parent := bus.WithHeader(context.Background(), bus.HeaderTraceparent, "tp")
	child := bus.WithHeader(parent, bus.HeaderTracestate, "ts")
	require.NoError(t, client.Call(child, subj.Core("echo"), struct{}{}, nil))
	require.Equal(t, []string{"tp", "ts"}, <-got)
	require.NoError(t, client.Call(parent, subj.Core("echo"), struct{}{}, nil))
	require.Equal(t, []string{"tp", ""}, <-got, "the parent's headers are unchanged")
	require.NoError(t, client.Call(context.Background(), subj.Core("echo"), struct{}{}, nil))
	require.Equal(t, []string{"", ""}, <-got)
}
