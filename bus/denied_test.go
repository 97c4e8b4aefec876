package bus_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/embedded"
)

// lockedServer starts an embedded server locked with users under the
// prefix "t", with an echo endpoint on core.create and core.remove served
// by an in-process connection of the core role. removes counts the
// requests core.remove reached. (bus/embedded's tests have the same
// fixture for the server's own checks; these are the client's.)
type lockedServer struct {
	*embedded.Server
	subj    bus.Subjects
	removes atomic.Int32
}

func startLocked(t *testing.T, users ...embedded.User) *lockedServer {
	t.Helper()
	subj, err := bus.NewSubjects("t")
	require.NoError(t, err)
	e, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:-1", Users: users, Subjects: subj})
	require.NoError(t, err)
	t.Cleanup(e.Shutdown)
	ls := &lockedServer{Server: e, subj: subj}
	coreConn, err := bus.Connect(e.ClientURL(), "core", e.InProcessAs(bus.RoleCore))
	require.NoError(t, err)
	t.Cleanup(coreConn.Close)
	srv, err := bus.NewServer(coreConn, bus.ServerConfig{Name: bus.CoreServiceName})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	require.NoError(t, bus.Handle(srv, bus.MethodCreate, subj.Core(bus.MethodCreate), func(_ context.Context, r *echoReq) (*echoResp, error) {
		return &echoResp{Twice: 2 * r.N}, nil
	}))
	require.NoError(t, bus.Handle(srv, bus.MethodRemove, subj.Core(bus.MethodRemove), func(context.Context, *echoReq) (*echoResp, error) {
		ls.removes.Add(1)
		return &echoResp{}, nil
	}))
	require.NoError(t, srv.Ready())
	return ls
}

// connectAs connects over TCP with auth, as an outside client would.
func connectAs(t *testing.T, ls *lockedServer, auth bus.Auth, extra ...nats.Option) *nats.Conn {
	t.Helper()
	opts, err := auth.Options(ls.subj)
	require.NoError(t, err)
	nc, err := bus.Connect(ls.ClientURL(), t.Name(), append(opts, extra...)...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

func TestWorkerMayNotCallRemove(t *testing.T) {
	t.Parallel()
	ls := startLocked(t, embedded.User{Name: "w1", Password: "pw", Role: bus.RoleWorker})
	nc := connectAs(t, ls, bus.Auth{User: "w1", Password: "pw"})
	// The refusal ends the call at once, long before its timeout.
	client := bus.NewClient(nc, time.Minute)
	started := time.Now()
	err := client.Call(context.Background(), ls.subj.Core(bus.MethodRemove), echoReq{N: 1}, nil)
	require.ErrorIs(t, err, bus.ErrPermissionDenied)
	require.ErrorContains(t, err, "may not publish to t.core.remove")
	require.Less(t, time.Since(started), 30*time.Second, "the call waited for its timeout")
	// The worker's own methods still pass: the connection is fine.
	var resp echoResp
	require.NoError(t, client.Call(context.Background(), ls.subj.Core(bus.MethodCreate), echoReq{N: 2}, &resp))
	require.Equal(t, int32(0), ls.removes.Load(), "core.remove was reached")
}

func TestARefusalOnAForeignConnectionEndsAtTheTimeout(t *testing.T) {
	t.Parallel()
	ls := startLocked(t, embedded.User{Name: "w1", Password: "pw", Role: bus.RoleWorker})
	opts, err := bus.Auth{User: "w1", Password: "pw"}.Options(ls.subj)
	require.NoError(t, err)
	nc, err := nats.Connect(ls.ClientURL(), opts...) // not bus.Connect: no watch
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	err = bus.NewClient(nc, 200*time.Millisecond).Call(context.Background(), ls.subj.Core(bus.MethodRemove), echoReq{N: 1}, nil)
	require.ErrorIs(t, err, bus.ErrPermissionDenied)
	require.Equal(t, int32(0), ls.removes.Load())
}
