package node_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/node/redisproc"
)

// waitTimeout bounds every wait; generous for -race.
const waitTimeout = 15 * time.Second

// devLike is a config with every role on loopback, as `kuebus dev`
// builds one, on the test Redis under a prefix of its own (redisURL "":
// no Redis section, for ManagedRedis).
func devLike(t *testing.T, redisURL string) *clusterconfig.Config {
	t.Helper()
	cfg := &clusterconfig.Config{
		Name:       "n1",
		Roles:      []string{clusterconfig.RoleNATS, clusterconfig.RoleCore, clusterconfig.RolePromoter, clusterconfig.RoleHTTP},
		NATS:       clusterconfig.NATS{Embedded: &clusterconfig.EmbeddedNATS{Listen: "127.0.0.1:0"}},
		Memberlist: clusterconfig.Memberlist{Bind: "127.0.0.1:0", Preset: clusterconfig.PresetLocal},
		HTTP:       clusterconfig.HTTP{Listen: "127.0.0.1:0"},
		Redis:      clusterconfig.Redis{URL: redisURL},
	}
	if redisURL != "" {
		cfg.RedisPrefix = nodetest.Prefix(t, nodetest.NewRedis(t))
	}
	return cfg
}

// waitNoMemberlist waits until memberlist's goroutines are gone: its
// Shutdown does not wait for a probe in flight, which the leak check
// after the tests would report.
func waitNoMemberlist(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		buf := make([]byte, 8<<20)
		return !strings.Contains(string(buf[:runtime.Stack(buf, true)]), "github.com/hashicorp/memberlist.")
	}, waitTimeout, 20*time.Millisecond, "memberlist goroutines remain after the node stopped")
}

func TestANodeWithEveryRoleServesAndStops(t *testing.T) {
	cfg := devLike(t, nodetest.RedisURL(t))
	cfg.Retention = clusterconfig.Retention{"done": {Complete: &clusterconfig.RetentionLimit{Count: 1}}}
	cfg.Types = clusterconfig.Types{"capped": {Concurrency: 2, Defaults: &clusterconfig.TypeDefaults{MaxAttempts: 4}}}
	n, err := node.Start(t.Context(), node.Config{Node: cfg, Alone: true})
	require.NoError(t, err)
	info := n.Info()
	require.Equal(t, "n1", info.Name)
	require.NotEmpty(t, info.RingAddr)
	require.Empty(t, info.RedisURL, "no managed Redis")
	require.True(t, strings.HasPrefix(info.HTTPURL, "http://127.0.0.1:"), info.HTTPURL)
	require.Empty(t, cfg.NATS.Embedded.ClusterName, "Start fills its defaults in a copy")

	t.Run("core answers over TCP, and the ring of one leads and promotes", func(t *testing.T) {
		client, err := core.NewClient(bustest.Connect(t, info.NATSURL), nil)
		require.NoError(t, err)
		job, err := client.Create(t.Context(), "later", nil, &core.CreateOpts{Delay: 50 * time.Millisecond})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			got, err := client.Get(t.Context(), job.ID)
			return err == nil && got.State == core.StateInactive
		}, waitTimeout, 20*time.Millisecond, "the delayed job was not promoted")
		require.Equal(t, "n1", n.Promoter().Status().Leader)
	})

	t.Run("core stored the config's types", func(t *testing.T) {
		client, err := core.NewClient(bustest.Connect(t, info.NATSURL), nil)
		require.NoError(t, err)
		p, err := client.GetType(t.Context(), "capped")
		require.NoError(t, err)
		require.Equal(t, &core.TypePolicy{Type: "capped", Concurrency: 2, Defaults: &core.TypeDefaults{MaxAttempts: 4}}, p)
		job, err := client.Create(t.Context(), "capped", nil, nil)
		require.NoError(t, err)
		require.Equal(t, 4, job.MaxAttempts, "the type's default")
	})

	t.Run("core cleans by the config's retention", func(t *testing.T) {
		client, err := core.NewClient(bustest.Connect(t, info.NATSURL), nil)
		require.NoError(t, err)
		for range 2 {
			_, err := client.Create(t.Context(), "done", nil, nil)
			require.NoError(t, err)
		}
		jobs, err := client.Lease(t.Context(), core.LeaseRequest{Types: []string{"done"}, Max: 2})
		require.NoError(t, err)
		require.Len(t, jobs, 2)
		for _, j := range jobs {
			require.NoError(t, client.Complete(t.Context(), core.LeaseOp{ID: j.ID, Lease: j.Lease, Type: "done"}))
		}
		// The leader's cleaner may have been first; either way one is left.
		_, err = client.Clean(t.Context(), 0)
		require.NoError(t, err)
		n, err := client.Count(t.Context(), core.StateComplete, "done")
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "retention.done.complete.count 1 keeps the newest")
	})

	t.Run("HTTP serves the API", func(t *testing.T) {
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get(info.HTTPURL)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Less(t, resp.StatusCode, 500)
	})

	require.NoError(t, n.Stop())
	require.NoError(t, n.Stop(), "a second Stop stops nothing")
	_, err = net.DialTimeout("tcp", strings.TrimPrefix(info.NATSURL, "nats://"), time.Second)
	require.Error(t, err, "the embedded NATS server is down")
	waitNoMemberlist(t)
}

func TestAManagedRedisStartsFirstAndStopsLast(t *testing.T) {
	cfg := devLike(t, "")
	cfg.Roles = []string{clusterconfig.RoleNATS, clusterconfig.RoleCore}
	n, err := node.Start(t.Context(), node.Config{Node: cfg, ManagedRedis: &redisproc.Options{}})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(n.Info().RedisURL, "redis://"), n.Info().RedisURL)
	client, err := core.NewClient(bustest.Connect(t, n.Info().NATSURL), nil)
	require.NoError(t, err)
	_, err = client.Create(t.Context(), "email", nil, nil)
	require.NoError(t, err)

	child := n.RedisChild()
	require.NoError(t, n.Stop())
	_, err = net.DialTimeout("tcp", child.Addr(), time.Second)
	require.Error(t, err, "the child stopped with the node")
}

func TestStartRefusesWhatTheConfigGetsWrong(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(*clusterconfig.Config)
		managed bool
		want    string
	}{
		{"a field Validate refuses", func(c *clusterconfig.Config) { c.RedisPrefix = "a{b" }, false,
			`node: config: redis_prefix: "a{b" must not contain braces or spaces`},
		{"an HTTP API open to other machines without auth", func(c *clusterconfig.Config) { c.HTTP.Listen = "0.0.0.0:0" }, false,
			`node: config: http.listen: "0.0.0.0:0" reaches other machines and there is no auth`},
		{"a Redis section beside a managed Redis", func(c *clusterconfig.Config) { c.Redis.URL = "redis://127.0.0.1:1" }, true,
			"node: config: redis: the node manages its own redis-server"},
		{"a Redis URL go-redis cannot read", func(c *clusterconfig.Config) { c.Redis.URL = "redis://127.0.0.1:6379/notadb" }, false,
			"node: config: redis.url:"},
		{"replicas to wait for without a timeout", func(c *clusterconfig.Config) { c.Redis.WaitReplicas = 1 }, false,
			"node: config: redis.wait_timeout: required with redis.wait_replicas 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := devLike(t, nodetest.RedisURL(t))
			cfg.Roles = []string{clusterconfig.RoleNATS, clusterconfig.RoleCore, clusterconfig.RoleHTTP}
			var managed *redisproc.Options
			if tc.managed {
				managed = &redisproc.Options{}
			}
			tc.edit(cfg)
			n, err := node.Start(t.Context(), node.Config{Node: cfg, ManagedRedis: managed})
			require.NoError(t, n.Stop())
			_, ok := errors.AsType[*node.ConfigError](err)
			require.True(t, ok, "%T: %v", err, err)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestAStartThatFailsStopsWhatItStarted(t *testing.T) {
	// A port nothing listens on: Redis does not answer, after NATS started.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	cfg := devLike(t, "redis://"+addr)
	cfg.Roles = []string{clusterconfig.RoleNATS, clusterconfig.RoleCore}
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	n, err := node.Start(ctx, node.Config{Node: cfg})
	require.ErrorContains(t, err, "node: Redis at redis://"+addr+" does not answer")
	require.NotNil(t, n.NATS(), "NATS started before core")
	require.NoError(t, n.Stop())
	require.Nil(t, n.Service())
}

// redis.wait_replicas reaches the store: on the test Redis, which has no
// replica, a create is answered unavailable, with the reason. (It stored
// nothing: the type's first id block was reserved on the master but not
// acknowledged, so the store does not use its ids.)
func TestANodeWaitsForTheReplicasItIsToldTo(t *testing.T) {
	cfg := devLike(t, nodetest.RedisURL(t))
	cfg.Roles = []string{clusterconfig.RoleNATS, clusterconfig.RoleCore}
	cfg.Redis.WaitReplicas, cfg.Redis.WaitTimeout = 1, 20*time.Millisecond
	n, err := node.Start(t.Context(), node.Config{Node: cfg, Alone: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, n.Stop()) })
	client, err := core.NewClient(bustest.Connect(t, n.Info().NATSURL), nil)
	require.NoError(t, err)
	_, err = client.Create(t.Context(), "waited", nil, &core.CreateOpts{UniqueKey: "w1"})
	require.ErrorIs(t, err, core.ErrUnavailable)
	require.ErrorContains(t, err, "only 0 of 1 replicas acknowledged it within 20ms")
}
