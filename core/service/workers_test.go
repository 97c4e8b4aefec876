package service_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestWorkersListsTheLiveOnes: a heartbeat puts a worker on the list, a
// gone one takes it off; bad heartbeats are invalid and store nothing.
func TestWorkersListsTheLiveOnes(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	ctx := t.Context()
	hb := core.Heartbeat{Worker: "w1", Types: []string{"email", "sms"}, Concurrency: 8, Running: 3, Host: "box", PID: 42, StartedAt: 1}
	require.NoError(t, c.Client.Heartbeat(ctx, hb))
	list, err := c.Client.Workers(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, hb, list[0].Heartbeat)
	require.Positive(t, list[0].SeenAt)

	for _, bad := range []core.Heartbeat{
		{},
		{Worker: "w2", Concurrency: 2, Running: 3},
		{Worker: "w2", Types: []string{"a.b"}},
		{Worker: "w2", Concurrency: -1},
		{Worker: "w2", Concurrency: core.MaxWorkerConcurrency + 1},
		{Worker: "w2", PID: -5},
		{Worker: "w2", PID: core.MaxWorkerPID + 1},
		{Worker: "w2", StartedAt: -1 << 63},
		{Worker: "w2", StartedAt: 1 << 62},
		{Worker: "w2", Instance: strings.Repeat("i", core.MaxInstanceLen+1)},
	} {
		require.ErrorIs(t, c.Client.Heartbeat(ctx, bad), core.ErrInvalid, "%+v", bad)
	}
	require.NoError(t, c.Client.Heartbeat(ctx, core.Heartbeat{Worker: "w1", Gone: true}))
	list, err = c.Client.Workers(ctx)
	require.NoError(t, err)
	require.Empty(t, list, "gone, and the bad ones never came")
}

// TestAWorkerLeavesTheListOnlyByItsOwnGone: a gone heartbeat must carry the
// instance token of the worker's last heartbeat, which the list never
// shows: another process cannot take a worker off the list.
func TestAWorkerLeavesTheListOnlyByItsOwnGone(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	ctx := t.Context()
	hb := core.Heartbeat{Worker: "w1", Types: []string{"email"}, Concurrency: 1, Instance: "secret-of-w1"}
	require.NoError(t, c.Client.Heartbeat(ctx, hb))
	list, err := c.Client.Workers(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Empty(t, list[0].Instance, "the token is never listed")

	for _, forged := range []string{"", "guess"} {
		err := c.Client.Heartbeat(ctx, core.Heartbeat{Worker: "w1", Gone: true, Instance: forged})
		require.ErrorIs(t, err, core.ErrConflict, "instance %q", forged)
	}
	list, err = c.Client.Workers(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1, "still listed")

	require.NoError(t, c.Client.Heartbeat(ctx, core.Heartbeat{Worker: "w1", Gone: true, Instance: "secret-of-w1"}))
	list, err = c.Client.Workers(ctx)
	require.NoError(t, err)
	require.Empty(t, list)
}
