package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestBroadcastFromTheCommandLine: `kuebus broadcast TYPE --data --delay`
// prints the broadcast job; `kuebus events 'job.broadcast.>'` prints it,
// data and all, once the promoter's promote finds it due; bad flags are
// usage errors that reach no core.
func TestBroadcastFromTheCommandLine(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts NATS and uses Redis")
	}
	t.Parallel()
	clock := nodetest.NewClock(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	c := nodetest.NewCore(t, service.Config{Now: clock.Now})
	url := c.NATS.ClientURL()
	events := start(t, context.Background(), "events", "job.broadcast.>", "--nats-url", url)
	events.stderr.waitFor(t, "listening on job.broadcast.>")

	r := kuebus(t, "broadcast", "prices", "--data", `{"do":"reload"}`, "--delay", "2s", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	var job core.Job
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &job), r.stdout)
	require.True(t, job.Broadcast)
	require.Equal(t, core.StateDelayed, job.State)
	require.Equal(t, int64(2000), job.Delay)

	clock.Advance(2 * time.Second)
	mv, err := c.Client.Promote(t.Context(), 0)
	require.NoError(t, err)
	require.Equal(t, 1, mv.Moved)
	events.stdout.waitFor(t, fmt.Sprintf(`job.broadcast.%d.prices {"event":"broadcast"`, job.ID))
	events.stdout.waitFor(t, `"data":{"do":"reload"}`)

	for _, args := range [][]string{
		{"broadcast"},
		{"broadcast", "prices", "--data", "{nope"},
		{"broadcast", "prices", "--delay", "soon"},
	} {
		r := kuebus(t, append(args, "--nats-url", url)...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
		require.Empty(t, r.stdout)
	}
	n, err := c.Client.Count(t.Context(), "", "prices")
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "the bad ones stored nothing")

	// --broadcast is a job flag: job create and schedule set take it.
	r = kuebus(t, "job", "create", "prices", "--broadcast", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &job), r.stdout)
	require.True(t, job.Broadcast)
	r = kuebus(t, "schedule", "set", "reload", "--every", "1m", "--type", "prices", "--broadcast", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	var sc core.Schedule
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sc), r.stdout)
	require.True(t, sc.Spec.Broadcast)
}
