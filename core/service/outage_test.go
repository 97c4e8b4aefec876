package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/redisproc"
)

// TestRedisDownIsUnavailableAndCoreRecovers stops the Redis under a running
// core: calls fail with unavailable (not internal, not a hang), and once
// Redis is back the same core serves again, jobs stored before intact.
func TestRedisDownIsUnavailableAndCoreRecovers(t *testing.T) {
	t.Parallel()
	// appendfsync always: with everysec, Redis may answer a write before
	// it has written it to the file while an fsync is slow (a loaded CI
	// disk), and the kill -9 below would lose the job the test reads back.
	srv, err := redisproc.Start(ctx, redisproc.Options{Dir: t.TempDir(), AppendOnly: true,
		ExtraArgs: []string{"--appendfsync", "always"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })

	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	st, err := redisstore.New(redisstore.Config{Client: rdb, Prefix: "outage"})
	require.NoError(t, err)
	ns := bustest.NewServer(t)
	svc, err := service.New(service.Config{Store: st, Conn: ns.Conn})
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Stop(context.Background()) })
	client, err := core.NewClient(bustest.Connect(t, ns.ClientURL()), &core.ClientOptions{Timeout: 5 * time.Second})
	require.NoError(t, err)

	before, err := client.Create(ctx, "email", "kept", nil)
	require.NoError(t, err)

	require.NoError(t, srv.Kill())
	_, err = client.Create(ctx, "email", "lost", nil)
	require.ErrorIs(t, err, core.ErrUnavailable)
	_, err = client.Get(ctx, before.ID)
	require.ErrorIs(t, err, core.ErrUnavailable)
	_, err = client.Stats(ctx)
	require.ErrorIs(t, err, core.ErrUnavailable)

	require.NoError(t, srv.Restart(ctx))
	// go-redis redials on the next command; the first one after the restart
	// may still meet a connection that died with the old process.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := client.Get(ctx, before.ID)
		assert.NoError(c, err)
	}, 10*time.Second, 20*time.Millisecond)
	got, err := client.Get(ctx, before.ID)
	require.NoError(t, err)
	require.JSONEq(t, `"kept"`, string(got.Data), "the AOF kept the job")
	after, err := client.Create(ctx, "email", "new", nil)
	require.NoError(t, err)
	require.Greater(t, after.ID, before.ID)
}
