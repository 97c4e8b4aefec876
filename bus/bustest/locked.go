package bustest

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/embedded"
)

// Locked is an embedded server locked with users under the subject prefix
// "t", with core.create and core.remove served by an in-process connection
// of the core role: the fixture of the tests of who may call what (bus's
// client side, bus/embedded's server side). core.create doubles a request's
// "n" into its reply's "twice"; Removes counts the requests core.remove
// reached.
type Locked struct {
	*embedded.Server
	Subjects bus.Subjects
	Removes  atomic.Int32
}

// echo is what Locked's endpoints take and answer (the fields of the
// tests' own echo request and reply).
type echo struct {
	N     int    `json:"n"`
	Word  string `json:"word,omitempty"`
	Twice int    `json:"twice"`
}

// StartLocked starts a Locked server with users; the test's cleanup stops
// it.
func StartLocked(t testing.TB, users ...embedded.User) *Locked {
	t.Helper()
	fail := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("bustest: locked server: %v", err)
		}
	}
	subj, err := bus.NewSubjects("t")
	fail(err)
	e, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:-1", Users: users, Subjects: subj})
	fail(err)
	t.Cleanup(e.Shutdown)
	l := &Locked{Server: e, Subjects: subj}
	coreConn, err := bus.Connect(e.ClientURL(), "core", e.InProcessAs(bus.RoleCore))
	fail(err)
	t.Cleanup(coreConn.Close)
	srv, err := bus.NewServer(coreConn, bus.ServerConfig{Name: bus.CoreServiceName})
	fail(err)
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	fail(bus.Handle(srv, bus.MethodCreate, subj.Core(bus.MethodCreate), func(_ context.Context, r *echo) (*echo, error) {
		return &echo{Twice: 2 * r.N}, nil
	}))
	fail(bus.Handle(srv, bus.MethodRemove, subj.Core(bus.MethodRemove), func(context.Context, *echo) (*echo, error) {
		l.Removes.Add(1)
		return &echo{}, nil
	}))
	fail(srv.Ready())
	return l
}

// ConnectAs connects to l over TCP with auth, as an outside client would;
// the test's cleanup closes the connection.
func (l *Locked) ConnectAs(t testing.TB, auth bus.Auth, extra ...nats.Option) *nats.Conn {
	t.Helper()
	opts, err := auth.Options(l.Subjects)
	if err != nil {
		t.Fatalf("bustest: auth options: %v", err)
	}
	nc, err := bus.Connect(l.ClientURL(), t.Name(), append(opts, extra...)...)
	if err != nil {
		t.Fatalf("bustest: connect as %q: %v", auth.User, err)
	}
	t.Cleanup(nc.Close)
	return nc
}
