package service_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// panickyStore panics on Get, as a bug anywhere below a method would.
type panickyStore struct{ service.Store }

func (panickyStore) Get(context.Context, int64) (*core.Job, error) { panic("a bug below get") }

// TestAPanicBelowAMethodDoesNotStopCore: the request answers internal and
// core serves the next ones, over real NATS and Redis.
func TestAPanicBelowAMethodDoesNotStopCore(t *testing.T) {
	t.Parallel()
	ns := bustest.NewServer(t)
	st, _ := nodetest.NewStore(t)
	svc, err := service.New(service.Config{Store: panickyStore{st}, Conn: bustest.Connect(t, ns.ClientURL())})
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Stop(context.Background()) })
	client, err := core.NewClient(bustest.Connect(t, ns.ClientURL()), nil)
	require.NoError(t, err)

	job, err := client.Create(ctx, "email", nil, nil)
	require.NoError(t, err)
	for range 3 {
		_, err = client.Get(ctx, job.ID)
		require.ErrorIs(t, err, core.ErrInternal)
		require.NotContains(t, err.Error(), "a bug below get", "the panic stays in the log")
	}
	n, err := client.Count(ctx, "", "email")
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "core still serves")
}
