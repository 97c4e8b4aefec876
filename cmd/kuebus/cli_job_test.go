package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestJobLsListsTheWholeWindowOfLargeJobs: three jobs of 400 KB do not fit
// one core reply, so core answers in parts; `job ls` follows them and lists
// every job of the window it was asked for, not only the first part.
func TestJobLsListsTheWholeWindowOfLargeJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts NATS and uses Redis")
	}
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	data := json.RawMessage(`"` + strings.Repeat("x", 400<<10) + `"`)
	var want []string
	for range 4 {
		j, err := c.Client.Create(t.Context(), "big", data, nil)
		require.NoError(t, err)
		want = append(want, strconv.FormatInt(j.ID, 10))
	}
	page, err := c.Client.RangePage(t.Context(), core.RangeRequest{Type: "big", To: 9})
	require.NoError(t, err)
	require.NotZero(t, page.Next, "the test needs a range that core cuts")

	ids := func(args ...string) []string {
		t.Helper()
		r := kuebus(t, append([]string{"job", "ls", "--nats-url", c.NATS.ClientURL(), "--type", "big"}, args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Empty(t, r.stderr)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		var got []string
		for _, l := range lines[1:] {
			got = append(got, strings.Fields(l)[0])
		}
		return got
	}
	require.Equal(t, want, ids("--to", "9"), "every job, past core's first part")
	require.Equal(t, want[1:3], ids("--from", "1", "--to", "2"), "the window, and nothing after it")
	require.Equal(t, want[3:], ids("--from", "3"), "a window that starts past core's first part")
}
