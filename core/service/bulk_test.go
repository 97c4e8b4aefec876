package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// TestBulkActionsMoveJobsAndPublishAsTheirSingleJobMethods: retry of failed
// jobs (enqueue), promote of delayed (promotion), cancel of inactive
// (cancel), remove of cancelled (remove); each reply counts the jobs, and
// each job's event goes out.
func TestBulkActionsMoveJobsAndPublishAsTheirSingleJobMethods(t *testing.T) {
	c, _ := newCore(t)
	for range 3 {
		_, err := c.Client.Create(ctx, "a", nil, nil)
		require.NoError(t, err)
	}
	jobs := lease(t, c, core.LeaseRequest{Types: []string{"a"}, Max: 3})
	for _, j := range jobs {
		_, err := c.Client.Fail(ctx, core.LeaseOp{ID: j.ID, Lease: j.Lease, Error: "boom"})
		require.NoError(t, err)
	}
	for range 2 {
		_, err := c.Client.Create(ctx, "b", nil, &core.CreateOpts{Delay: time.Hour})
		require.NoError(t, err)
	}
	evs := events(t, c, c.Client.Subjects().AllJobEvents())
	step := func(req core.BulkActionRequest, n int, event string) {
		t.Helper()
		reply, err := c.Client.Bulk(ctx, req)
		require.NoError(t, err)
		require.Equal(t, &core.BulkActionReply{Matched: n, Done: n}, reply)
		for range n {
			ev := next(t, evs)
			require.Equal(t, event, ev.Event, "%+v", req)
		}
	}
	step(core.BulkActionRequest{Action: core.BulkRetry, State: core.StateFailed, Type: "a", Error: "boom"}, 3, bus.EventEnqueue)
	st, err := c.Client.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(3), st.Types["a"].Inactive)
	require.Equal(t, int64(0), st.Types["a"].Failed)

	step(core.BulkActionRequest{Action: core.BulkPromote, State: core.StateDelayed}, 2, bus.EventPromotion)
	step(core.BulkActionRequest{Action: core.BulkCancel, State: core.StateInactive, Type: "a"}, 3, bus.EventCancel)
	step(core.BulkActionRequest{Action: core.BulkRemove, State: core.StateCancelled}, 3, bus.EventRemove)
	st, err = c.Client.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, core.StateCounts{Inactive: 2}, st.StateCounts, "b's two jobs, promoted; a's removed")
}

// TestBulkIsBoundedByItsLimit: five failed jobs of two types, limit 2: the
// calls go on from each other's cursor, say more while jobs may remain,
// and retry each job once.
func TestBulkIsBoundedByItsLimit(t *testing.T) {
	c, _ := newCore(t)
	for _, typ := range []string{"a", "a", "a", "b", "b"} {
		j, err := c.Client.Create(ctx, typ, nil, nil)
		require.NoError(t, err)
		_, err = c.Client.SetState(ctx, j.ID, core.StateFailed)
		require.NoError(t, err)
	}
	req := core.BulkActionRequest{Action: core.BulkRetry, State: core.StateFailed, Limit: 2}
	var dones []int
	for {
		reply, err := c.Client.Bulk(ctx, req)
		require.NoError(t, err)
		require.LessOrEqual(t, reply.Done, 2)
		dones = append(dones, reply.Done)
		if !reply.More {
			break
		}
		req.Cursor = reply.Cursor
	}
	require.Equal(t, []int{2, 2, 1}, dones)
	n, err := c.Client.Count(ctx, core.StateInactive, "")
	require.NoError(t, err)
	require.Equal(t, int64(5), n)

	total, err := c.Client.BulkAll(ctx, core.BulkActionRequest{Action: core.BulkRemove, State: core.StateInactive, Limit: 2}, nil)
	require.NoError(t, err)
	require.Equal(t, &core.BulkActionReply{Matched: 5, Done: 5}, total)
}

// TestBulkRefusesBadInputAndChangesNothing: each bad request is invalid,
// and the failed job stays failed.
func TestBulkRefusesBadInputAndChangesNothing(t *testing.T) {
	c, _ := newCore(t)
	j, err := c.Client.Create(ctx, "a", nil, nil)
	require.NoError(t, err)
	_, err = c.Client.SetState(ctx, j.ID, core.StateFailed)
	require.NoError(t, err)
	for _, body := range []string{
		`{}`,
		`{"state":"failed"}`,
		`{"action":"explode","state":"failed"}`,
		`{"action":"retry"}`,
		`{"action":"retry","state":"done"}`,
		`{"action":"retry","state":"inactive"}`,
		`{"action":"promote","state":"failed"}`,
		`{"action":"cancel","state":"complete"}`,
		`{"action":"retry","state":"failed","type":"a.b"}`,
		`{"action":"retry","state":"failed","before":-1}`,
		`{"action":"retry","state":"failed","limit":-1}`,
		`{"action":"retry","state":"failed","limit":10001}`,
		`{"action":"retry","state":"failed","cursor":"nope"}`,
		`{"action":"retry","state":"failed","type":"a","cursor":"b:0"}`,
		`{"action":"retry","state":"failed","error":7}`,
		`{"action":"retry","state":"failed","error_group":"` + strings.Repeat("x", 201) + `"}`,
		`{"action":"retry","state":"failed","what":1}`,
		`nope`,
	} {
		reply, code := raw(t, c, bus.MethodBulk, body)
		require.Equal(t, "invalid", code, "%s: %s", body, reply)
	}
	got, err := c.Client.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateFailed, got.State, "nothing changed")
}
