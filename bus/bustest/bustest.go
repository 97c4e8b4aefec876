package bustest

import (
	"net"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
)

// Server is an embedded NATS server owned by one test.
type Server struct {
	*bus.Embedded
	// Conn is a connection to it, closed by the test's cleanup.
	Conn *nats.Conn
}

// NewServer starts an embedded NATS server on a random loopback port and
// connects to it. Both are stopped when the test ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	srv, err := bus.StartEmbedded(bus.EmbeddedConfig{Listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatalf("bustest: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	return &Server{Embedded: srv, Conn: Connect(t, srv.ClientURL())}
}

// Connect opens a connection that the test's cleanup closes.
func Connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := bus.Connect(url, t.Name())
	if err != nil {
		t.Fatalf("bustest: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// ConnectInProcess opens an in-process connection to an embedded server,
// closed by the test's cleanup.
func ConnectInProcess(t testing.TB, srv *bus.Embedded) *nats.Conn {
	t.Helper()
	nc, err := bus.Connect(srv.InProcessURL(), t.Name(), srv.InProcess())
	if err != nil {
		t.Fatalf("bustest: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// FreeAddr is a loopback HOST:PORT nothing listened on a moment ago, for
// an address that must be known before the server that binds it starts
// (cluster routes naming each other, a memberlist bind).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("bustest: free address: %v", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatalf("bustest: free address: %v", err)
	}
	return addr
}
