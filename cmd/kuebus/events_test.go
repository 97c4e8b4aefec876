package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
)

// TestDevEventsDurable: with --events-durable, `kuebus events --since`
// prints the events stored before it started, in order, then the live
// ones; --from-seq starts at a sequence.
func TestDevEventsDurable(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts NATS and redis-server")
	}
	t.Parallel()
	dataDir := t.TempDir()
	dev := startDev(t, "--data-dir", dataDir, "--nats-listen", "127.0.0.1:0", "--events-durable")
	url := dev.info.NATSURL
	create := func() core.Job {
		t.Helper()
		r := kuebus(t, "job", "create", "ping", "--nats-url", url)
		require.Equal(t, 0, r.code, r.stderr)
		var job core.Job
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &job), r.stdout)
		return job
	}
	a, b := create(), create()
	line := func(j core.Job) string { return fmt.Sprintf("job.enqueue.%d.ping {", j.ID) }

	events := start(t, context.Background(), "events", "--since", "10m", "--nats-url", url)
	events.stderr.waitFor(t, "replaying job.>, queue.> from ")
	events.stdout.waitFor(t, line(b))
	require.Less(t, strings.Index(events.stdout.String(), line(a)), strings.Index(events.stdout.String(), line(b)), "in order")
	c := create()
	events.stdout.waitFor(t, line(c))
	require.Equal(t, 0, events.stop(t))

	one := start(t, context.Background(), "events", "--from-seq", "1", "job.enqueue.*.ping", "--nats-url", url)
	one.stdout.waitFor(t, line(c))
	out := one.stdout.String()
	require.True(t, strings.HasPrefix(out, line(a)), "the first stored enqueue comes first:\n%s", out)
	require.Equal(t, 3, strings.Count(out, "job.enqueue."), "each once, and nothing else:\n%s", out)
	require.Equal(t, 0, one.stop(t))

	_, err := os.Stat(filepath.Join(dataDir, "nats", "jetstream"))
	require.NoError(t, err, "the stream is kept beside Redis's data")
}

func TestEventsReplayFlagsAreChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"events", "--since", "yesterday"}, `--since: "yesterday" is neither a duration`},
		{[]string{"events", "--since", "-5m"}, "--since: -5m is not a positive duration"},
		{[]string{"events", "--since", "5m", "--from-seq", "3"}, "--since and --from-seq exclude each other"},
	} {
		r := kuebus(t, append(tc.args, "--nats-url", "nats://127.0.0.1:1")...)
		require.Equal(t, 2, r.code, "%v: %s", tc.args, r.stderr)
		require.Contains(t, r.stderr, tc.want)
	}
	at, err := parseSince("2026-01-02T15:04:05Z", time.Now())
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC), at)
}
