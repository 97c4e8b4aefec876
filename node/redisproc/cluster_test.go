package redisproc

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCluster starts 3 masters with a replica each, checks that they form
// one cluster, kills a master and sees its replica take over (the cluster
// is ok again without it), then brings the killed node back as a member.
func TestCluster(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c, err := StartCluster(ctx, ClusterOptions{Masters: 3, Replicas: 1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Stop()) })

	addrs := c.Addrs()
	require.Len(t, addrs, 6)
	for _, addr := range addrs {
		info, err := Command(ctx, addr, "", "CLUSTER", "INFO")
		require.NoError(t, err)
		require.Contains(t, info, "cluster_state:ok", addr)
		require.Contains(t, info, "cluster_known_nodes:6", addr)
		require.Contains(t, info, "cluster_size:3", addr, "3 masters with slots")
	}

	master := addrs[0] // redis-cli gives the first Masters nodes the slots
	role, err := Command(ctx, master, "", "INFO", "replication")
	require.NoError(t, err)
	require.Contains(t, role, "role:master")
	require.Nil(t, c.Node("127.0.0.1:1"))

	require.NoError(t, c.Kill(master))
	require.NoError(t, c.WaitReady(ctx), "a replica took over the killed master's slots")
	_, err = Command(ctx, master, "", "PING")
	require.Error(t, err, "the killed node is down")

	require.NoError(t, c.Restart(ctx, master))
	require.NoError(t, c.WaitReady(ctx))
	nodes, err := Command(ctx, master, "", "CLUSTER", "MYID")
	require.NoError(t, err)
	require.NotEmpty(t, nodes)
	info, err := Command(ctx, master, "", "CLUSTER", "INFO")
	require.NoError(t, err)
	require.Contains(t, info, "cluster_known_nodes:6", "the node rejoined with its nodes.conf")

	require.NoError(t, c.Stop())
	require.NoError(t, c.Stop(), "Stop is idempotent")
	for _, addr := range addrs {
		_, err := Command(context.Background(), addr, "", "PING")
		require.Error(t, err, "%s stopped", addr)
	}
}

// TestClusterNeedsThreeMasters: redis-cli refuses fewer, so StartCluster
// says why before it starts anything.
func TestClusterNeedsThreeMasters(t *testing.T) {
	t.Parallel()
	_, err := StartCluster(t.Context(), ClusterOptions{Masters: 2})
	require.ErrorContains(t, err, "at least 3 masters")
}

// TestClusterWithoutRedisCLI fails with the install hint.
func TestClusterWithoutRedisCLI(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := StartCluster(t.Context(), ClusterOptions{Binary: "/usr/bin/true"})
	require.ErrorIs(t, err, ErrNoRedisCLI)
	require.True(t, strings.Contains(err.Error(), "redis-tools"))
}
