package bustest

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/embedded"
)

// Server is an embedded NATS server owned by one test.
type Server struct {
	*embedded.Server
	// Conn is a connection to it, closed by the test's cleanup.
	Conn *nats.Conn
}

// NewServer starts an embedded NATS server on a random loopback port and
// connects to it. Both are stopped when the test ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	srv, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatalf("bustest: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	return &Server{Server: srv, Conn: Connect(t, srv.ClientURL())}
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
func ConnectInProcess(t testing.TB, srv *embedded.Server) *nats.Conn {
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
//
// It picks a port below the system's ephemeral range: a port the kernel
// handed out for ":0" may be handed out again, in the moment before the
// server binds it, as the local port of any outgoing connection (the
// suite opens thousands), and the server then cannot listen. Below the
// range only another FreeAddr could take it, one random port of many
// thousands.
func FreeAddr(t testing.TB) string {
	t.Helper()
	low := ephemeralLow()
	for range 200 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freeAddrFloor+rand.IntN(low-freeAddrFloor)))
		if ln, err := net.Listen("tcp", addr); err == nil {
			if err := ln.Close(); err != nil {
				t.Fatalf("bustest: free address: %v", err)
			}
			return addr
		}
	}
	t.Fatalf("bustest: no free port in %d..%d after 200 tries", freeAddrFloor, low-1)
	return ""
}

// freeAddrFloor is the lowest port FreeAddr picks: above the well-known and
// most registered services' ports.
const freeAddrFloor = 20000

// ephemeralLow is the first port of the kernel's ephemeral range (Linux:
// /proc/sys/net/ipv4/ip_local_port_range), 32768 where it cannot be read
// or leaves no room below it.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	low, err := strconv.Atoi(f[0])
	if err != nil || low <= freeAddrFloor+1000 {
		return 32768
	}
	return low
}
