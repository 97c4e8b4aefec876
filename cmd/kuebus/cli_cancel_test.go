package main

import (
	"strconv"
	"strings"
	"testing"

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
