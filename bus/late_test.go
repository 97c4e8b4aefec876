package bus_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
)

// TestALateReplyGoesToTheLateFunc: a call made WithLateReply that gave up
// (its context ended) before the server answered hands the reply, when it
// comes, to its late func; a call answered in time gets its reply and
// calls nothing; a call nobody answers is unavailable at once, as any.
func TestALateReplyGoesToTheLateFunc(t *testing.T) {
	t.Parallel()
	ns := bustest.NewServer(t)
	srv, err := bus.NewServer(ns.Conn, bus.ServerConfig{Name: "late"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	entered, release := make(chan struct{}, 1), make(chan struct{})
	require.NoError(t, bus.HandleWaiting(srv, "slow", "slow", func(ctx context.Context, r *echoReq) (*echoResp, error) {
		if r.Word == "hold" {
			entered <- struct{}{}
			<-release
		}
		return &echoResp{Twice: 2 * r.N}, nil
	}))
	require.NoError(t, srv.Ready())
	client := bus.NewClient(bustest.Connect(t, ns.ClientURL()), time.Minute)

	late := make(chan []byte, 2)
	onLate := func(body []byte) { late <- body }

	var resp echoResp
	require.NoError(t, client.Call(bus.WithLateReply(context.Background(), onLate), "slow", echoReq{N: 1}, &resp))
	require.Equal(t, 2, resp.Twice, "answered in time: the reply is the call's")

	ctx, cancel := context.WithCancel(bus.WithLateReply(context.Background(), onLate))
	done := make(chan error, 1)
	go func() { done <- client.Call(ctx, "slow", echoReq{N: 21, Word: "hold"}, &echoResp{}) }()
	<-entered
	cancel() // the caller gives up while the server still works
	require.ErrorIs(t, <-done, context.Canceled)
	close(release)
	select {
	case body := <-late:
		var got echoResp
		require.NoError(t, json.Unmarshal(body, &got))
		require.Equal(t, 42, got.Twice, "the reply that came late")
	case <-time.After(10 * time.Second):
		t.Fatal("the late reply never reached the late func")
	}
	require.Empty(t, late, "one reply, handed once")

	err = client.Call(bus.WithLateReply(context.Background(), onLate), "nobody", echoReq{}, nil)
	require.ErrorIs(t, err, bus.ErrUnavailable, "no responders")
}
