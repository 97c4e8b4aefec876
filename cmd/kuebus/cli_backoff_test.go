package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestBackoffFlagFirstWaitsItsDuration: `--backoff exponential:1h` makes
// a job whose first failed attempt waits 1h (as Go's
// core.ExponentialBackoff(time.Hour)), not Kue's 30m, and fixed:1h waits
// 1h; the wait is read from the job core delayed (promote_at − updated_at,
// both set by the one fail script). The help says what D means.
func TestBackoffFlagFirstWaitsItsDuration(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	url := c.NATS.ClientURL()
	firstWait := func(jobType, backoff string) (*core.Backoff, time.Duration) {
		t.Helper()
		r := kuebus(t, "job", "create", jobType, "--nats-url", url, "--attempts", "2", "--backoff", backoff)
		require.Equal(t, 0, r.code, r.stderr)
		var created core.Job
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &created))
		jobs, err := c.Client.Lease(t.Context(), core.LeaseRequest{Types: []string{jobType}})
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		failed, err := c.Client.Fail(t.Context(), core.LeaseOp{ID: created.ID, Lease: jobs[0].Lease, Error: "boom"})
		require.NoError(t, err)
		require.Equal(t, core.StateDelayed, failed.State)
		return created.Backoff, time.Duration(failed.PromoteAt-failed.UpdatedAt) * time.Millisecond
	}
	b, wait := firstWait("exp", "exponential:1h")
	require.Equal(t, time.Hour, wait, "exponential:1h first waits 1h")
	require.Equal(t, core.ExponentialBackoff(time.Hour), b, "as Go's helper sends it (delay 2h on the wire)")
	b, wait = firstWait("fix", "fixed:1h")
	require.Equal(t, time.Hour, wait)
	require.Equal(t, core.FixedBackoff(time.Hour), b)

	r := kuebus(t, "job", "create", "--help")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "exponential:D waits D, then 3D, 7D")
	r = kuebus(t, "type", "set", "--help")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "exponential:D waits D, then 3D, 7D")
}
