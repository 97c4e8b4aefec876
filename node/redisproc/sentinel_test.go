package redisproc

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSentinel starts a master, a replica and 3 Sentinels with a
// password, kills the master with SIGKILL and sees the Sentinels promote
// the replica, brings the killed server back as a replica of the new
// master, and stops everything: every process gone, every folder removed.
func TestSentinel(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const password = `s3n"tinel x`
	startedAt := time.Now()
	s, err := StartSentinel(ctx, SentinelOptions{Password: password})
	t.Logf("started in %s", time.Since(startedAt))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Stop()) })

	require.Equal(t, "kuebus", s.MasterName())
	require.Len(t, s.SentinelAddrs(), 3)
	servers := s.ServerAddrs()
	require.Len(t, servers, 2)
	first, err := s.Master(ctx)
	require.NoError(t, err)
	require.Equal(t, servers[0], first, "the server started as master is the master")
	replica := servers[1]
	info, err := Command(ctx, replica, password, "INFO", "replication")
	require.NoError(t, err)
	require.Contains(t, info, "role:slave")
	require.Contains(t, info, "master_link_status:up")
	_, err = Command(ctx, first, "", "PING")
	require.ErrorContains(t, err, "NOAUTH", "the servers want the password")
	for _, addr := range s.SentinelAddrs() {
		state, err := sentinelState(ctx, addr, "kuebus")
		require.NoError(t, err)
		require.Equal(t, masterState{addr: first, status: "ok", replicas: 1, sentinels: 3}, state, addr)
	}
	require.Nil(t, s.Node("127.0.0.1:1"))

	killedAt := time.Now()
	require.NoError(t, s.Kill(first))
	_, err = Command(ctx, first, "", "PING")
	require.Error(t, err, "the killed master is down")
	// WaitReady needs every running Sentinel to name a running master:
	// the replica, once promoted.
	require.NoError(t, s.WaitReady(ctx))
	t.Logf("the Sentinels promoted the replica %s after the master's kill", time.Since(killedAt).Round(10*time.Millisecond))
	now, err := s.Master(ctx)
	require.NoError(t, err)
	require.Equal(t, replica, now)

	require.NoError(t, s.Restart(ctx, first))
	restartedAt := time.Now()
	require.NoError(t, s.WaitReady(ctx), "the old master came back as a replica")
	t.Logf("restart ready in %s", time.Since(restartedAt))
	info, err = Command(ctx, first, password, "INFO", "replication")
	require.NoError(t, err)
	require.Contains(t, info, "role:slave")
	require.Contains(t, info, "master_port:"+strings.Split(replica, ":")[1])

	pids := []int{}
	for _, addr := range append(s.ServerAddrs(), s.SentinelAddrs()...) {
		pids = append(pids, s.Node(addr).Pid())
	}
	dirs := s.dirs
	require.NoError(t, s.Stop())
	require.NoError(t, s.Stop(), "Stop is idempotent")
	for _, addr := range append(s.ServerAddrs(), s.SentinelAddrs()...) {
		_, err := Command(context.Background(), addr, "", "PING")
		require.Error(t, err, "%s stopped", addr)
	}
	if runtime.GOOS == "linux" {
		for _, pid := range pids {
			_, err := os.Stat("/proc/" + strconv.Itoa(pid))
			require.True(t, os.IsNotExist(err), "pid %d is gone", pid)
		}
	}
	for _, dir := range dirs {
		_, err := os.Stat(dir)
		require.True(t, os.IsNotExist(err), "%s removed", dir)
	}
}

// TestSentinelOptions: a set that could never fail over is refused before
// anything starts.
func TestSentinelOptions(t *testing.T) {
	t.Parallel()
	for _, opts := range []SentinelOptions{
		{Replicas: -1},
		{Sentinels: 3, Quorum: 4},
		{Master: "two words"},
	} {
		_, err := StartSentinel(t.Context(), opts)
		require.Error(t, err, "%+v", opts)
	}
}
