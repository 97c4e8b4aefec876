package nodeexample_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestMain runs the tests against a real Redis (nodetest.Main).
func TestMain(m *testing.M) { os.Exit(nodetest.Main(m)) }

// install is how to get what the tour needs, as scripts/install-deps.sh does.
const install = "apt-get install -y nodejs npm && npm ci --prefix examples/node"

// TestNodeTour runs tour.mjs, a producer, worker and listener written in
// Node.js from docs/protocol.md, against a core with embedded NATS. The
// script asserts every reply and event and exits 1 on the first surprise.
func TestNodeTour(t *testing.T) {
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: %v (install with `%s`)", err, install)
	}
	if _, err := os.Stat(filepath.Join("node_modules", "nats", "package.json")); err != nil {
		t.Fatalf("the tour's dependencies are not installed (%v): run `%s`", err, install)
	}
	c := nodetest.NewCore(t, service.Config{})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, "tour.mjs")
	cmd.Env = append(os.Environ(), "KUEBUS_NATS_URL="+c.NATS.Embedded.ClientURL(), "KUEBUS_TOUR_TYPE=tour")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "node tour.mjs:\n%s", out)
	require.True(t, strings.HasSuffix(string(out), "tour complete\n"), "node tour.mjs:\n%s", out)

	// What the tour did, seen from Go.
	st, err := c.Client.Stats(t.Context())
	require.NoError(t, err)
	require.EqualValues(t, 2, st.Types["tour"].Complete)
	require.EqualValues(t, 1, st.Types["tour"].Failed)
	require.EqualValues(t, 5, st.Types["tour"].Cancelled)
	require.EqualValues(t, 1, st.Types["tour"].Inactive)
	require.Empty(t, st.Paused)
}
