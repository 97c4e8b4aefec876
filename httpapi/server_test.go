package httpapi_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/httpapi"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestServeStopsWithOpenStreams runs the server as a binary does: Serve
// until the context ends. Event streams never finish by themselves, so a
// clean stop must end them.
func TestServeStopsWithOpenStreams(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	srv, err := httpapi.New(httpapi.Config{Conn: bustest.Connect(t, c.NATS.ClientURL()), ShutdownTimeout: waitTimeout})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	e := &env{t: t, core: c, srv: srv, url: "http://" + ln.Addr().String(), header: http.Header{}, tr: tr}
	st := e.events("")
	job := e.create(map[string]any{"type": "email"})
	st.until(bus.EventEnqueue, job.ID)

	stop()
	select {
	case err := <-served:
		require.NoError(t, err, "a clean stop")
	case <-time.After(waitTimeout):
		t.Fatal("Serve did not return after its context ended")
	}
	for range st.events {
	}
	_, err = e.send("GET", "/stats", nil)
	require.Error(t, err, "the listener is closed")
	require.EqualError(t, srv.Start(), "httpapi: start: the server is closed")
}
