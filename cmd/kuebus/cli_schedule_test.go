package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestScheduleSetLsRmFromTheCommandLine: set prints the schedule with the
// job flags in its spec, ls lists it, rm removes it and a second rm is
// not found (exit 1); bad flags are usage errors (exit 2, one line) that
// store nothing, and a bad cron is core's invalid (exit 1).
func TestScheduleSetLsRmFromTheCommandLine(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	url := c.NATS.ClientURL()

	r := kuebus(t, "schedule", "set", "nightly", "--nats-url", url, "--cron", "30 2 * * *", "--tz", "Europe/Paris",
		"--type", "report", "--data", `{"kind":"daily"}`, "--priority", "high", "--attempts", "3")
	require.Equal(t, 0, r.code, r.stderr)
	var sc core.Schedule
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sc))
	require.Equal(t, "nightly", sc.Name)
	require.Equal(t, "Europe/Paris", sc.TZ)
	require.JSONEq(t, `{"kind":"daily"}`, string(sc.Spec.Data))
	sc.Spec.Data = nil
	require.Equal(t, core.Spec{Type: "report", Priority: core.PriorityHigh, MaxAttempts: 3, TTL: core.TTLDefault * time.Millisecond}, sc.Spec)
	require.Positive(t, sc.NextAt)
	r = kuebus(t, "schedule", "set", "often", "--nats-url", url, "--every", "90s", "--type", "ping", "--paused")
	require.Equal(t, 0, r.code, r.stderr)

	r = kuebus(t, "schedule", "ls", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^NAME\s+TYPE\s+WHEN\s+NEXT\s+LAST$`, r.stdout)
	require.Regexp(t, `(?m)^nightly\s+report\s+30 2 \* \* \* \(Europe/Paris\)\s+\S+T\S+\s+-$`, r.stdout)
	require.Regexp(t, `(?m)^often\s+ping\s+every 1m30s\s+paused\s+-$`, r.stdout)

	require.Equal(t, result{code: 0, stdout: "removed schedule often\n"}, kuebus(t, "schedule", "rm", "often", "--nats-url", url))
	r = kuebus(t, "schedule", "rm", "often", "--nats-url", url)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "not found")

	for _, args := range [][]string{
		{"schedule", "set", "s", "--type", "t"},
		{"schedule", "set", "s", "--type", "t", "--cron", "* * * * *", "--every", "5s"},
		{"schedule", "set", "s", "--every", "5s"},
		{"schedule", "set", "a.b", "--type", "t", "--every", "5s"},
		{"schedule", "set", "s", "--type", "t", "--every", "-5s"},
		{"schedule", "set", "s", "--type", "t", "--every", "5s", "--data", "{"},
		{"schedule", "rm", "a b"},
		{"schedule", "ls", "extra"},
	} {
		r := kuebus(t, append(args, "--nats-url", url)...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
		require.Empty(t, r.stdout)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
	}
	r = kuebus(t, "schedule", "set", "s", "--nats-url", url, "--type", "t", "--cron", "61 * * * *")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "cron")
	list, err := c.Client.Schedules(t.Context())
	require.NoError(t, err)
	require.Len(t, list, 1, "only nightly is left; bad input stored nothing")
}
