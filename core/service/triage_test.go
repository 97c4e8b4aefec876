package service_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// TestFailedErrorsGroupsAndBulkRetriesAGroup: five jobs fail, three with
// "connection refused" from different addresses and two with a bad input
// naming different fields; failed_errors gives the two groups, the larger
// first, and a bulk retry of one group runs only its jobs again.
func TestFailedErrorsGroupsAndBulkRetriesAGroup(t *testing.T) {
	c, _ := newCore(t)
	for range 5 {
		_, err := c.Client.Create(ctx, "a", nil, nil)
		require.NoError(t, err)
	}
	jobs := lease(t, c, core.LeaseRequest{Types: []string{"a"}, Max: 5})
	require.Len(t, jobs, 5)
	for i, j := range jobs {
		msg := fmt.Sprintf("dial tcp 10.0.0.%d:6379: connection refused", i)
		if i%2 == 1 {
			msg = fmt.Sprintf("bad input: field %q", fmt.Sprint("f", i))
		}
		_, err := c.Client.Fail(ctx, core.LeaseOp{ID: j.ID, Lease: j.Lease, Error: msg})
		require.NoError(t, err)
	}
	reply, err := c.Client.FailedErrors(ctx, core.FailedErrorsRequest{Type: "a"})
	require.NoError(t, err)
	require.Equal(t, int64(5), reply.Failed)
	require.Equal(t, 5, reply.Read)
	require.Len(t, reply.Groups, 2)
	require.Equal(t, "dial tcp <addr>: connection refused", reply.Groups[0].Group)
	require.Equal(t, 3, reply.Groups[0].Count)
	require.Equal(t, "bad input: field <str>", reply.Groups[1].Group)
	require.Equal(t, 2, reply.Groups[1].Count)
	require.LessOrEqual(t, reply.Groups[0].FirstAt, reply.Groups[0].LastAt)

	done, err := c.Client.BulkAll(ctx, core.BulkActionRequest{Action: core.BulkRetry, State: core.StateFailed, Type: "a",
		ErrorGroup: reply.Groups[0].Group}, nil)
	require.NoError(t, err)
	require.Equal(t, 3, done.Done)
	reply, err = c.Client.FailedErrors(ctx, core.FailedErrorsRequest{Type: "a"})
	require.NoError(t, err)
	require.Equal(t, int64(2), reply.Failed)
	require.Len(t, reply.Groups, 1)
	require.Equal(t, "bad input: field <str>", reply.Groups[0].Group)
}

// TestFailedErrorsRefusesBadInput: each bad request is invalid, and so
// is a search with no q and no error filter, or an error filter too long.
func TestFailedErrorsRefusesBadInput(t *testing.T) {
	c, _ := newCore(t)
	for _, body := range []string{
		`{}`,
		`{"type":""}`,
		`{"type":"a.b"}`,
		`{"type":"a","limit":-1}`,
		`{"type":"a","limit":10001}`,
		`{"type":"a","limit":"many"}`,
		`{"type":"a","what":1}`,
		`nope`,
	} {
		reply, code := raw(t, c, bus.MethodFailedErrors, body)
		require.Equal(t, "invalid", code, "%s: %s", body, reply)
	}
	for _, body := range []string{
		`{"q":"","state":"failed"}`,
		`{"error":"` + strings.Repeat("x", 257) + `"}`,
		`{"error_group":"` + strings.Repeat("x", 201) + `"}`,
	} {
		reply, code := raw(t, c, bus.MethodSearch, body)
		require.Equal(t, "invalid", code, "%s: %s", body, reply)
	}
}
