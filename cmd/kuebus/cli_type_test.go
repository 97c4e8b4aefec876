package main

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestTypeSetGetLsFromTheCommandLine: set prints the policy its flags
// make, get reads it back, ls lists it; bad flags are usage errors (exit
// 2) and a bound only core knows is core's invalid (exit 1), both storing
// nothing.
func TestTypeSetGetLsFromTheCommandLine(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	url := c.NATS.ClientURL()

	r := kuebus(t, "type", "set", "email", "--nats-url", url, "--concurrency", "5", "--rate", "100/1s",
		"--group-concurrency", "1", "--group-rate", "10/1s", "--aging", "1s", "--attempts", "3", "--ttl", "2m")
	require.Equal(t, 0, r.code, r.stderr)
	want := core.TypePolicy{Type: "email", Concurrency: 5, Rate: &core.Rate{Limit: 100, Per: time.Second},
		GroupConcurrency: 1, GroupRate: &core.Rate{Limit: 10, Per: time.Second}, Aging: &core.Aging{Per: time.Second},
		Defaults: &core.TypeDefaults{MaxAttempts: 3, TTL: 2 * time.Minute}}
	var got core.TypePolicy
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Equal(t, want, got)

	r = kuebus(t, "type", "get", "email", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	got = core.TypePolicy{}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Equal(t, want, got)

	r = kuebus(t, "type", "ls", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^TYPE\s+CONCURRENCY\s+RATE\s+GROUP CONCURRENCY\s+GROUP RATE\s+AGING\s+DEFAULTS$`, r.stdout)
	require.Regexp(t, `(?m)^email\s+5\s+100/1s\s+1\s+10/1s\s+1s\s+\{"max_attempts":3,"ttl":120000\}$`, r.stdout)

	for _, args := range [][]string{
		{"type", "set", "a.b", "--concurrency", "1"},
		{"type", "set", "t", "--rate", "100"},
		{"type", "set", "t", "--rate", "0/1s"},
		{"type", "set", "t", "--rate", "5/soon"},
		{"type", "set", "t", "--aging", "-1s"},
		{"type", "set", "t", "--priority", "urgent"},
		{"type", "set", "t", "--stall-limit", "-1"},
		{"type", "get"},
		{"type", "ls", "extra"},
	} {
		r := kuebus(t, append(args, "--nats-url", url)...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
	}
	r = kuebus(t, "type", "set", "t", "--nats-url", url, "--concurrency", "-1")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "concurrency")
	r = kuebus(t, "type", "get", "t", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `{"type":"t"}`, r.stdout, "nothing stored")
}

// TestJobWhyFromTheCommandLine: job why prints the reason and its detail,
// --json the reply; a bad id is a usage error, an unknown one not found.
func TestJobWhyFromTheCommandLine(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	url := c.NATS.ClientURL()
	job, err := c.Client.Create(t.Context(), "orphan", nil, nil)
	require.NoError(t, err)
	id := strconv.FormatInt(job.ID, 10)

	r := kuebus(t, "job", "why", id, "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "no_worker (inactive): no live worker asks for type orphan\n", r.stdout)
	r = kuebus(t, "job", "why", id, "--json", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	var ex core.Explanation
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &ex))
	require.Equal(t, core.ReasonNoWorker, ex.Reason)

	require.Equal(t, 2, kuebus(t, "job", "why", "x", "--nats-url", url).code)
	r = kuebus(t, "job", "why", "999999", "--nats-url", url)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "not found")
}
