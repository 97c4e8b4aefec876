package embedded_test

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/embedded"
)

func TestAPortInUseFailsAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	start := time.Now()
	_, err = embedded.Start(embedded.Config{Listen: ln.Addr().String()})
	require.ErrorContains(t, err, "cannot listen on")
	require.Less(t, time.Since(start), 5*time.Second, "not after the ready timeout")
}

// TestAClusterPortInUseFailsByName: a cluster port in use is an
// error naming it, not a server without routes (which the server would
// only log, and its clustered JetStream would wait for a quorum forever).
func TestAClusterPortInUseFailsByName(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	_, err = embedded.Start(embedded.Config{Listen: "127.0.0.1:-1", ClusterListen: ln.Addr().String()})
	require.ErrorContains(t, err, "cannot listen for its cluster on "+ln.Addr().String())
}

// TestAJetStreamThatCannotStartFailsTheStart: NATS does not start
// when its JetStream cannot, and logs why only to the logs kuebus turns
// off; the error names the likely causes.
func TestAJetStreamThatCannotStartFailsTheStart(t *testing.T) {
	t.Parallel()
	t.Run("a cluster without routes", func(t *testing.T) {
		t.Parallel()
		e, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:-1", ServerName: "alone",
			ClusterListen: "127.0.0.1:-1", JetStreamDir: t.TempDir(), ReadyTimeout: 2 * time.Second})
		if e != nil {
			e.Shutdown()
		}
		require.ErrorContains(t, err, "not ready after 2s (is the port in use? Can JetStream write its store folder")
		require.ErrorContains(t, err, "In a cluster, JetStream also needs routes to the other servers.")
	})
	t.Run("a store folder that is a file", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(file, nil, 0o600))
		e, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:-1", JetStreamDir: file, ReadyTimeout: time.Second})
		if e != nil {
			e.Shutdown()
		}
		require.ErrorContains(t, err, "Can JetStream write its store folder "+file+"?")
	})
}
