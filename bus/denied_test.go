package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/bus/embedded"
)

func TestWorkerMayNotCallRemove(t *testing.T) {
	t.Parallel()
	ls := bustest.StartLocked(t, embedded.User{Name: "w1", Password: "pw", Role: bus.RoleWorker})
	nc := ls.ConnectAs(t, bus.Auth{User: "w1", Password: "pw"})
	// The refusal ends the call at once, long before its timeout.
	client := bus.NewClient(nc, time.Minute)
	started := time.Now()
	err := client.Call(context.Background(), ls.Subjects.Core(bus.MethodRemove), echoReq{N: 1}, nil)
	require.ErrorIs(t, err, bus.ErrPermissionDenied)
	require.ErrorContains(t, err, "may not publish to t.core.remove")
	require.Less(t, time.Since(started), 30*time.Second, "the call waited for its timeout")
	// The worker's own methods still pass: the connection is fine.
	var resp echoResp
	require.NoError(t, client.Call(context.Background(), ls.Subjects.Core(bus.MethodCreate), echoReq{N: 2}, &resp))
	require.Equal(t, int32(0), ls.Removes.Load(), "core.remove was reached")
}

func TestARefusalOnAForeignConnectionEndsAtTheTimeout(t *testing.T) {
	t.Parallel()
	ls := bustest.StartLocked(t, embedded.User{Name: "w1", Password: "pw", Role: bus.RoleWorker})
	opts, err := bus.Auth{User: "w1", Password: "pw"}.Options(ls.Subjects)
	require.NoError(t, err)
	nc, err := nats.Connect(ls.ClientURL(), opts...) // not bus.Connect: no watch
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	err = bus.NewClient(nc, 200*time.Millisecond).Call(context.Background(), ls.Subjects.Core(bus.MethodRemove), echoReq{N: 1}, nil)
	require.ErrorIs(t, err, bus.ErrPermissionDenied)
	require.Equal(t, int32(0), ls.Removes.Load())
}
