package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestJobErrorsGroupsAndRetryTakesAGroup: job errors prints the groups of
// a type's failed jobs, the largest first, and the command that retries
// one; retry --all --error-group runs that group only. Bad input is a
// usage error.
func TestJobErrorsGroupsAndRetryTakesAGroup(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	url := c.NATS.ClientURL()
	for range 3 {
		_, err := c.Client.Create(t.Context(), "sync", nil, nil)
		require.NoError(t, err)
	}
	jobs, err := c.Client.Lease(t.Context(), core.LeaseRequest{Types: []string{"sync"}, Max: 3})
	require.NoError(t, err)
	require.Len(t, jobs, 3)
	for i, j := range jobs {
		msg := fmt.Sprintf("dial tcp 10.0.0.%d:443: connection refused", i)
		if i == 2 {
			msg = "quota exceeded"
		}
		_, err := c.Client.Fail(t.Context(), core.LeaseOp{ID: j.ID, Lease: j.Lease, Error: msg})
		require.NoError(t, err)
	}
	r := kuebus(t, "job", "errors", "sync", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 4, r.stdout)
	require.Regexp(t, `^2\s.*dial tcp <addr>: connection refused$`, lines[1])
	require.Regexp(t, `^1\s.*quota exceeded$`, lines[2])
	require.Equal(t, `retry a group: kuebus job retry --all --state failed --type sync --error-group "dial tcp <addr>: connection refused"`, lines[3])

	r = kuebus(t, "job", "retry", "--all", "--state", "failed", "--type", "sync", "--error-group", "dial tcp <addr>: connection refused", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	n, err := c.Client.Count(t.Context(), core.StateFailed, "sync")
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "the quota failure stays failed")

	for _, args := range [][]string{{}, {"a", "b"}, {"sync", "--limit", "0"}, {"sync", "--limit", "10001"}} {
		r := kuebus(t, append([]string{"job", "errors", "--nats-url", url}, args...)...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
	}
	r = kuebus(t, "job", "errors", "a.b", "--nats-url", url)
	require.Equal(t, 1, r.code, "core's invalid")
	require.Contains(t, r.stderr, "type")
}
