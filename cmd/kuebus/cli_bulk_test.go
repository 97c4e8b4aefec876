package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestCancelAJobFromTheCommandLine: job cancel ends an inactive job; a
// second cancel is core's conflict (exit 1, one line); a bad or missing ID
// is a usage error that calls nothing.
func TestCancelAJobFromTheCommandLine(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	url := c.NATS.ClientURL()
	j, err := c.Client.Create(t.Context(), "email", nil, nil)
	require.NoError(t, err)
	id := strconv.FormatInt(j.ID, 10)

	require.Equal(t, result{code: 0, stdout: "job " + id + " is cancelled\n"},
		kuebus(t, "job", "cancel", id, "--reason", "sent by hand", "--nats-url", url))
	got, err := c.Client.Get(t.Context(), j.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateCancelled, got.State)

	r := kuebus(t, "job", "cancel", id, "--nats-url", url)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "cancelled already")
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)

	for _, args := range [][]string{{"job", "cancel"}, {"job", "cancel", "x"}, {"job", "cancel", "0"}, {"job", "cancel", "1", "2"}} {
		r := kuebus(t, append(args, "--nats-url", url)...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
		require.Empty(t, r.stdout)
	}
	r = kuebus(t, "job", "ls", "--state", "cancelled", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^`+id+`\s+email\s+cancelled\s`, r.stdout)
}

// TestBulkActionsFromTheCommandLine: --all loops core's bulk until no more
// (here with --limit 1, so over several calls) and prints the totals;
// without an ID and without --all, or with bad selection flags, the
// command refuses before any call (exit 2, one line).
func TestBulkActionsFromTheCommandLine(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	url := c.NATS.ClientURL()
	for _, typ := range []string{"a", "a", "a", "b"} {
		j, err := c.Client.Create(t.Context(), typ, nil, nil)
		require.NoError(t, err)
		_, err = c.Client.SetState(t.Context(), j.ID, core.StateFailed)
		require.NoError(t, err)
	}
	_, err := c.Client.Create(t.Context(), "a", nil, &core.CreateOpts{Delay: time.Hour})
	require.NoError(t, err)

	require.Equal(t, result{code: 0, stdout: "retry: 0 failed jobs done (0 matched)\n"},
		kuebus(t, "job", "retry", "--state", "failed", "--type", "a", "--before", "1h", "--all", "--nats-url", url),
		"--before 1h: jobs last updated more than an hour ago; none is")
	require.Equal(t, result{code: 0, stdout: "retry: 3 failed jobs done (3 matched)\n"},
		kuebus(t, "job", "retry", "--state", "failed", "--type", "a", "--limit", "1", "--all", "--nats-url", url))
	require.Equal(t, result{code: 0, stdout: "promote: 1 delayed jobs done (1 matched)\n"},
		kuebus(t, "job", "promote", "--all", "--nats-url", url), "promote's state is delayed by default")
	require.Equal(t, result{code: 0, stdout: "cancel: 4 inactive jobs done (4 matched)\n"},
		kuebus(t, "job", "cancel", "--state", "inactive", "--all", "--nats-url", url))
	require.Equal(t, result{code: 0, stdout: "remove: 4 cancelled jobs done (4 matched)\n"},
		kuebus(t, "job", "rm", "--state", "cancelled", "--all", "--nats-url", url))
	st, err := c.Client.Stats(t.Context())
	require.NoError(t, err)
	require.Equal(t, core.StateCounts{Failed: 1}, st.StateCounts, "b's failed job is left")

	for _, args := range [][]string{
		{"job", "retry"},
		{"job", "retry", "--state", "failed"},
		{"job", "retry", "1", "--all"},
		{"job", "retry", "1", "--state", "failed"},
		{"job", "retry", "--all"},
		{"job", "retry", "--state", "inactive", "--all"},
		{"job", "retry", "--state", "done", "--all"},
		{"job", "retry", "--state", "failed", "--limit", "10001", "--all"},
		{"job", "retry", "--state", "failed", "--limit", "-1", "--all"},
		{"job", "retry", "--state", "failed", "--before", "-5", "--all"},
		{"job", "retry", "--state", "failed", "--before", "yesterday", "--all"},
		{"job", "cancel", "--state", "inactive", "--reason", "x", "--all"},
		{"job", "rm"},
	} {
		r := kuebus(t, append(args, "--nats-url", url)...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
		require.Empty(t, r.stdout)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
	}
	r := kuebus(t, "job", "retry", "--nats-url", url)
	require.Contains(t, r.stderr, "give an ID, or --all with --state")
}
