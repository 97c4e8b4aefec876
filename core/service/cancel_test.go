package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// TestCancelEachStateThatMayRun: a delayed, an inactive and an active job
// are cancelled; each reply is the job in cancelled, each publishes
// job.cancel.<id>.<type> with the reason, after which the job reads
// cancelled; counts and ids know the state.
func TestCancelEachStateThatMayRun(t *testing.T) {
	c, clock := newCore(t)
	delayed, err := c.Client.Create(ctx, "t", nil, &core.CreateOpts{Delay: time.Minute})
	require.NoError(t, err)
	inactive, err := c.Client.Create(ctx, "t", nil, nil)
	require.NoError(t, err)
	active := lease(t, c, core.LeaseRequest{Types: []string{"t"}, Max: 1})[0]
	require.Equal(t, inactive.ID, active.ID)
	inactive, err = c.Client.Create(ctx, "t", nil, nil)
	require.NoError(t, err)

	evs := events(t, c, c.Client.Subjects().JobEventsOf(bus.EventCancel, ""))
	for _, j := range []core.Job{*delayed, *inactive, active} {
		got, err := c.Client.Cancel(ctx, j.ID, "not needed")
		require.NoError(t, err, "from %s", j.State)
		require.Equal(t, core.StateCancelled, got.State)
		ev := next(t, evs)
		require.Equal(t, bus.EventCancel, ev.Event)
		require.Equal(t, j.ID, ev.ID)
		require.Equal(t, "not needed", ev.Reason)
		require.Equal(t, clock.Now().UnixMilli(), ev.At)
		require.Equal(t, core.StateCancelled, ev.Job.State)
		stored, err := c.Client.Get(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, core.StateCancelled, stored.State, "stored before the event")
	}
	n, err := c.Client.Count(ctx, core.StateCancelled, "t")
	require.NoError(t, err)
	require.Equal(t, int64(3), n)
	body, code := raw(t, c, bus.MethodIDs, `{"state":"cancelled"}`)
	require.Empty(t, code)
	require.Contains(t, body, `"ids":[`)
	st, err := c.Client.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(3), st.Cancelled)

	err = c.Client.Complete(ctx, core.LeaseOp{ID: active.ID, Lease: active.Lease})
	require.ErrorIs(t, err, core.ErrConflict, "the worker's ack after the cancel")
	require.Empty(t, lease(t, c, core.LeaseRequest{Types: []string{"t"}, Max: 10}), "nothing left to lease")
}

// TestCancelOfAFinishedJobIsAConflict: a complete, a failed and a cancelled
// job answer conflict, stay as they were and publish nothing; an unknown id
// is not found.
func TestCancelOfAFinishedJobIsAConflict(t *testing.T) {
	c, _ := newCore(t)
	for range 2 {
		_, err := c.Client.Create(ctx, "t", nil, nil)
		require.NoError(t, err)
	}
	jobs := lease(t, c, core.LeaseRequest{Types: []string{"t"}, Max: 2})
	require.NoError(t, c.Client.Complete(ctx, core.LeaseOp{ID: jobs[0].ID, Lease: jobs[0].Lease}))
	_, err := c.Client.Fail(ctx, core.LeaseOp{ID: jobs[1].ID, Lease: jobs[1].Lease, Error: "e"})
	require.NoError(t, err)
	third, err := c.Client.Create(ctx, "t", nil, nil)
	require.NoError(t, err)
	_, err = c.Client.Cancel(ctx, third.ID, "")
	require.NoError(t, err)

	evs := events(t, c, c.Client.Subjects().AllJobEvents())
	for _, id := range []int64{jobs[0].ID, jobs[1].ID, third.ID} {
		before, err := c.Client.Get(ctx, id)
		require.NoError(t, err)
		_, err = c.Client.Cancel(ctx, id, "")
		require.ErrorIs(t, err, core.ErrConflict)
		require.Contains(t, err.Error(), string(before.State)+" already")
		after, err := c.Client.Get(ctx, id)
		require.NoError(t, err)
		require.Equal(t, before, after)
	}
	require.Empty(t, evs, "nothing published")
	_, err = c.Client.Cancel(ctx, 999_999, "")
	require.ErrorIs(t, err, core.ErrNotFound)
}

// TestCancelRefusesBadInputAndStoresNothing: a missing, zero or negative
// id, an unknown field, a reason that is not a string or is too long, a
// body that is not JSON: each is invalid and the job stays inactive. A
// set_state to cancelled is invalid too (cancel tells the worker).
func TestCancelRefusesBadInputAndStoresNothing(t *testing.T) {
	c, _ := newCore(t)
	j, err := c.Client.Create(ctx, "t", nil, nil)
	require.NoError(t, err)
	id := `"id":` + itoa(j.ID)
	long := strings.Repeat("x", 70_000)
	for _, body := range []string{`{}`, `{"id":0}`, `{"id":-1}`, `{` + id + `,"why":"x"}`,
		`{` + id + `,"reason":7}`, `{` + id + `,"reason":["x"]}`, `{` + id + `,"reason":"` + long + `"}`, `nope`} {
		reply, code := raw(t, c, bus.MethodCancel, body)
		require.Equal(t, "invalid", code, "%.80s: %s", body, reply)
	}
	_, code := raw(t, c, bus.MethodSetState, `{`+id+`,"state":"cancelled"}`)
	require.Equal(t, "invalid", code)
	got, err := c.Client.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, got.State, "nothing stored")
}
