package nodeexample_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
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
	cmd.Env = append(os.Environ(), "KUEBUS_NATS_URL="+c.NATS.ClientURL(), "KUEBUS_TOUR_TYPE=tour")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "node tour.mjs:\n%s", out)
	require.True(t, strings.HasSuffix(string(out), "tour complete\n"), "node tour.mjs:\n%s", out)

	// What the tour did, seen from Go.
	st, err := c.Client.Stats(t.Context())
	require.NoError(t, err)
	require.EqualValues(t, 2, st.Types["tour"].Complete)
	require.EqualValues(t, 1, st.Types["tour"].Failed)
	require.EqualValues(t, 2, st.Types["tour"].Cancelled)
	require.EqualValues(t, 1, st.Types["tour"].Inactive)
	require.EqualValues(t, 3, st.Types["tour-bulk"].Cancelled)
	require.Empty(t, st.Paused)
}

// TestNodeWorker runs worker.mjs, the worker of docs/workers.md, against a
// core: it completes and fails jobs as their data asks, its handler of a
// cancelled job is aborted and the job stays cancelled, and on SIGTERM it
// releases the job still running past the grace period (no attempt used)
// and exits 0.
func TestNodeWorker(t *testing.T) {
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: %v (install with `%s`)", err, install)
	}
	c := nodetest.NewCore(t, service.Config{})
	events := make(chan *core.Event, 64)
	sub, err := c.Client.Subscribe(c.Client.Subjects().JobEventsOf("", "nodework"), func(ev *core.Event) { events <- ev })
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	var seen []*core.Event // every event so far: jobs run concurrently, in any order
	until := func(event string, id int64) *core.Event {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for i := 0; ; i++ {
			for ; i < len(seen); i++ {
				if seen[i].Event == event && seen[i].ID == id {
					return seen[i]
				}
			}
			select {
			case ev := <-events:
				seen = append(seen, ev)
				i--
			case <-timeout:
				t.Fatalf("no %s event of job %d", event, id)
			}
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, "worker.mjs", "nodework")
	cmd.Env = append(os.Environ(), "KUEBUS_NATS_URL="+c.NATS.ClientURL(), "KUEBUS_GRACE_MS=300")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())

	create := func(data string, attempts int) int64 {
		t.Helper()
		job, err := c.Client.Create(t.Context(), "nodework", json.RawMessage(data), &core.CreateOpts{MaxAttempts: attempts})
		require.NoError(t, err)
		return job.ID
	}
	ok := create(`{"ms":10}`, 1)
	// It said it runs before its first lease: the workers list has it.
	until(bus.EventComplete, ok)
	workers, err := c.Client.Workers(t.Context())
	require.NoError(t, err)
	require.Len(t, workers, 1)
	require.Equal(t, []string{"nodework"}, workers[0].Types)
	bad := create(`{"fail":true}`, 1)
	until(bus.EventComplete, ok)
	require.Equal(t, "demo failure of job "+strconv.FormatInt(bad, 10), until(bus.EventFailed, bad).Error)

	doomed := create(`{"ms":60000}`, 1)
	until(bus.EventStart, doomed)
	_, err = c.Client.Cancel(t.Context(), doomed, "changed my mind")
	require.NoError(t, err)
	until(bus.EventCancel, doomed)

	long := create(`{"ms":60000}`, 2)
	until(bus.EventStart, long)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), "worker.mjs:\n%s", out.String())
	require.Contains(t, out.String(), "released "+strconv.FormatInt(long, 10))
	workers, err = c.Client.Workers(t.Context())
	require.NoError(t, err)
	require.Empty(t, workers, "gone as it stopped")

	got, err := c.Client.Get(t.Context(), long)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, got.State, "released, to run again")
	require.Zero(t, got.Attempts, "no attempt used")
	got, err = c.Client.Get(t.Context(), doomed)
	require.NoError(t, err)
	require.Equal(t, core.StateCancelled, got.State, "the aborted handler's fail changed nothing")
}
