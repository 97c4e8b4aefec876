package redisstore_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
)

// TestFailedErrorsGroupsTheNewestFailuresByTheirNormalisedError: the
// failed jobs' errors differ only in what the rule takes out (an address,
// a number), so they are one group with its count, its first and last
// failed_at and the newest job's error as the sample; the keys are
// unchanged (a read).
func TestFailedErrorsGroupsTheNewestFailuresByTheirNormalisedError(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := failedJobs("dial tcp 10.0.0.7:6379: connection refused", "bad input in field \"name\"",
		"dial tcp 10.0.0.9:6380: connection refused")
	st.seed(before)
	reply, err := st.FailedErrors(ctx, "t", 10)
	require.NoError(t, err)
	require.Equal(t, &core.FailedErrorsReply{Failed: 3, Read: 3, Groups: []core.ErrorGroup{
		{Group: "dial tcp <addr>: connection refused", Sample: "dial tcp 10.0.0.9:6380: connection refused",
			Count: 2, FirstAt: 1000, LastAt: 3000, JobID: 3},
		{Group: "bad input in field <str>", Sample: "bad input in field \"name\"", Count: 1, FirstAt: 2000, LastAt: 2000, JobID: 2},
	}}, reply, "groups in the order of their newest failure")
	st.requireKeys(before, "failed_errors writes nothing")

	reply, err = st.FailedErrors(ctx, "t", 1)
	require.NoError(t, err)
	require.Equal(t, int64(3), reply.Failed)
	require.Equal(t, 1, reply.Read, "only the newest failure is read")
	require.Equal(t, []core.ErrorGroup{{Group: "dial tcp <addr>: connection refused",
		Sample: "dial tcp 10.0.0.9:6380: connection refused", Count: 1, FirstAt: 3000, LastAt: 3000, JobID: 3}}, reply.Groups)

	reply, err = st.FailedErrors(ctx, "none", 10)
	require.NoError(t, err)
	require.Equal(t, &core.FailedErrorsReply{Groups: []core.ErrorGroup{}}, reply, "a type without failed jobs has no groups")
}

// TestErrorGroupRule: each step of the rule (lua/includes/error_group.lua,
// docs/triage.md) on one error, read back as the group failed_errors gives.
func TestErrorGroupRule(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, err, group string }{
		{"only the first line counts", "boom\ngoroutine 1 [running]", "boom"},
		{"double, back and single quotes become <str>", `no user "ann" in ` + "`users`" + ` for 'x1'`, "no user <str> in <str> for <str>"},
		{"an apostrophe with blanks between is text", "can't connect, won't retry", "can't connect, won't retry"},
		{"a UUID becomes <id>", "order 6f1c2a4e-0b7d-4c1e-9a3f-2d5e8b7c1a90 gone", "order <id> gone"},
		{"IPv4 with and without port, name:port, IPv6 and 0x are <addr>",
			"10.1.2.3:80 10.1.2.3 redis.local:6379 [::1]:53 at 0xc000123", "<addr> <addr> <addr> <addr> at <addr>"},
		{"a long hex run with a digit is <id>, without digits it is text", "trace 4bf92f3577b34da6 deadbeef", "trace <id> deadbeef"},
		{"numbers and decimals become <n>", "took 12.5s after 3 tries, job42", "took <n>s after <n> tries, job<n>"},
		{"blanks collapse and the ends are trimmed", "  a \t b  ", "a b"},
		{"the cut at 200 bytes splits no character", strings.Repeat("x", 199) + "é and more", strings.Repeat("x", 199)},
		{"a whole character before the cut stays", strings.Repeat("x", 198) + "é and more", strings.Repeat("x", 198) + "é"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := newScriptStore(t, redisstore.Config{})
			st.seed(failedJobs(c.err))
			reply, err := st.FailedErrors(ctx, "t", 10)
			require.NoError(t, err)
			require.Len(t, reply.Groups, 1)
			require.Equal(t, c.group, reply.Groups[0].Group)
		})
	}
}

// TestBulkErrorGroupActsOnTheGroupOnly: a retry with error_group runs the
// jobs whose error is in the group and leaves the other.
func TestBulkErrorGroupActsOnTheGroupOnly(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	st.seed(failedJobs("dial tcp 10.0.0.7:6379: connection refused", "bad input",
		"dial tcp 10.0.0.9:6380: connection refused"))
	res := bulk(t, st, service.BulkQuery{Action: core.BulkRetry, State: core.StateFailed, Type: "t",
		ErrorGroup: "dial tcp <addr>: connection refused", Limit: 10})
	require.Equal(t, 2, res.Matched)
	require.Len(t, res.Jobs, 2)
	require.Equal(t, []int64{1, 3}, []int64{res.Jobs[0].ID, res.Jobs[1].ID})
	reply, err := st.FailedErrors(ctx, "t", 10)
	require.NoError(t, err)
	require.Equal(t, int64(1), reply.Failed, "the other group's job is still failed")
	require.Equal(t, "bad input", reply.Groups[0].Group)
}

// TestSearchByErrorFindsTheJobsOfAGroupOrWithAText: with no q, search's
// error filters alone pick the failed jobs: those whose error contains a
// text, those whose error is in a group.
func TestSearchByErrorFindsTheJobsOfAGroupOrWithAText(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	st.seed(failedJobs("dial tcp 10.0.0.7:6379: connection refused", "bad input",
		"dial tcp 10.0.0.9:6380: connection refused"))
	ids := func(p service.SearchParams) []int64 {
		t.Helper()
		p.Type, p.Limit, p.Budget = "t", 10, 100
		page, err := st.Search(ctx, &p)
		require.NoError(t, err)
		require.Nil(t, page.Next)
		jobs := page.Jobs
		out := []int64{}
		for _, j := range jobs {
			out = append(out, j.ID)
		}
		return out
	}
	require.Equal(t, []int64{1, 3}, ids(service.SearchParams{ErrorGroup: "dial tcp <addr>: connection refused", State: core.StateFailed}))
	require.Equal(t, []int64{3}, ids(service.SearchParams{Error: "10.0.0.9"}))
	require.Equal(t, []int64{2}, ids(service.SearchParams{Error: "input", Query: "2"}), "q and error both must match")
	require.Empty(t, ids(service.SearchParams{Error: "Input"}), "the error text is compared as is, as bulk's")
}
