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

// TestPauseAndResumeATypeFromTheCommandLine: pause and resume say what they
// did, stats lists the paused type, and a bad TYPE is a usage error (exit
// 2, one line) that reaches no core.
func TestPauseAndResumeATypeFromTheCommandLine(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	url := c.NATS.ClientURL()
	_, err := c.Client.Create(t.Context(), "email", nil, nil)
	require.NoError(t, err)

	require.Equal(t, result{code: 0, stdout: "paused email\n"}, kuebus(t, "pause", "email", "--nats-url", url))
	require.Equal(t, result{code: 0, stdout: "paused sms\n"}, kuebus(t, "pause", "sms", "--nats-url", url),
		"a type with no jobs yet")
	r := kuebus(t, "stats", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^paused\s+email sms$`, r.stdout)
	require.Regexp(t, `(?m)^email\s+0\s+1\s+0\s+0\s+0\s+0\s+0$`, r.stdout, "the jobs of a paused type are kept")

	require.Equal(t, result{code: 0, stdout: "resumed email\n"}, kuebus(t, "resume", "email", "--nats-url", url))
	require.Equal(t, result{code: 0, stdout: "resumed sms\n"}, kuebus(t, "resume", "sms", "--nats-url", url))
	r = kuebus(t, "stats", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	require.NotRegexp(t, `(?m)^paused`, r.stdout)

	for _, args := range [][]string{{"pause"}, {"pause", "a.b"}, {"resume", "a b"}, {"pause", "a", "b"}} {
		r := kuebus(t, append(args, "--nats-url", url)...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
		require.Empty(t, r.stdout)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
	}
	types, err := c.Client.Types(t.Context())
	require.NoError(t, err)
	require.Equal(t, []string{"email", "sms"}, types, "bad input stored nothing")
}

// TestJobGetByKeyAndItsErrorHistory: `job get --type --key` prints the job
// holding the key, with its error history; a key no job holds is not
// found (exit 1); a half or mixed lookup is a usage error that reaches no
// core (exit 2).
func TestJobGetByKeyAndItsErrorHistory(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	url := c.NATS.ClientURL()
	created, err := c.Client.Create(t.Context(), "invoice", nil, &core.CreateOpts{UniqueKey: "INV-42", MaxAttempts: 2})
	require.NoError(t, err)
	jobs, err := c.Client.Lease(t.Context(), core.LeaseRequest{Types: []string{"invoice"}})
	require.NoError(t, err)
	_, err = c.Client.Fail(t.Context(), core.LeaseOp{ID: created.ID, Lease: jobs[0].Lease, Error: "boom", Stack: "main.go:7"})
	require.NoError(t, err)

	r := kuebus(t, "job", "get", "--type", "invoice", "--key", "INV-42", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	var job core.Job
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &job))
	require.Equal(t, created.ID, job.ID)
	require.Len(t, job.Errors, 1)
	require.Equal(t, "main.go:7", job.Errors[0].Stack)

	r = kuebus(t, "job", "get", "--type", "invoice", "--key", "INV-43", "--nats-url", url)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `no unfinished invoice job holds unique_key "INV-43"`)
	for _, args := range [][]string{{"--type", "invoice"}, {"--key", "k"}, {"1", "--type", "t", "--key", "k"}, {}} {
		r := kuebus(t, append([]string{"job", "get", "--nats-url", url}, args...)...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
		require.Empty(t, r.stdout)
	}
}

// TestJobSearchListsWhatItFinds: by text in the data, following core's
// cursor; --limit stops early and prints how to go on; a bad flag is a
// usage error.
func TestJobSearchListsWhatItFinds(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	url := c.NATS.ClientURL()
	var want []string
	for i := range 3 {
		j, err := c.Client.Create(t.Context(), "order", map[string]any{"customer": "ACME", "n": i}, nil)
		require.NoError(t, err)
		want = append(want, strconv.FormatInt(j.ID, 10))
	}
	_, err := c.Client.Create(t.Context(), "order", map[string]any{"customer": "other"}, nil)
	require.NoError(t, err)
	first := func(r result) []string {
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
			if !strings.HasPrefix(l, "more:") {
				got = append(got, strings.Fields(l)[0])
			}
		}
		return got
	}
	r := kuebus(t, "job", "search", "acme", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, want, first(r))
	require.NotContains(t, r.stdout, "more:")
	r = kuebus(t, "job", "search", "acme", "--limit", "2", "--type", "order", "--state", "inactive", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, want[:2], first(r))
	require.Regexp(t, `more: add --cursor order:\d+:`+want[1]+"\n", r.stdout, "the place of the last job looked at")
	for _, args := range [][]string{{}, {"a", "--state", "done"}, {"a", "--limit", "0"}} {
		r := kuebus(t, append([]string{"job", "search", "--nats-url", url}, args...)...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
	}
}

// TestJobLsPagesEveryTypeByCursor: --limit starts a page by cursor and the
// last line says how to go on; following it lists what one list by
// position lists. A deep position over every type is refused by core,
// naming the cursor; positions beside a cursor are a usage error.
func TestJobLsPagesEveryTypeByCursor(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	url := c.NATS.ClientURL()
	for i := range 5 {
		_, err := c.Client.Create(t.Context(), []string{"a", "b"}[i%2], nil, nil)
		require.NoError(t, err)
	}
	rows := func(r result) (ids []string, more string) {
		t.Helper()
		require.Equal(t, 0, r.code, r.stderr)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		for _, l := range lines[1:] {
			if after, ok := strings.CutPrefix(l, "more: add --cursor "); ok {
				more = after
				continue
			}
			ids = append(ids, strings.Fields(l)[0])
		}
		return ids, more
	}
	whole, more := rows(kuebus(t, "job", "ls", "--nats-url", url))
	require.Len(t, whole, 5)
	require.Empty(t, more, "a list by position prints no cursor")

	var got []string
	args := []string{"job", "ls", "--nats-url", url, "--limit", "2"}
	for range 5 {
		ids, more := rows(kuebus(t, args...))
		got = append(got, ids...)
		if more == "" {
			break
		}
		args = []string{"job", "ls", "--nats-url", url, "--limit", "2", "--cursor", more}
	}
	require.Equal(t, whole, got)

	r := kuebus(t, "job", "ls", "--nats-url", url, "--from", "5000", "--to", "5019")
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "from: 5000..5019 of every type is past position 999")
	require.Contains(t, r.stderr, "cursor")

	r = kuebus(t, "job", "ls", "--nats-url", url, "--from", "1", "--limit", "2")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "--from, --to")
}
