package service_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestFailWaitsTheRetryDelayItWasGiven: fail's delay replaces the job's
// backoff, alone and in a batch; 0 retries at once; the last attempt fails
// for good whatever the delay.
func TestFailWaitsTheRetryDelayItWasGiven(t *testing.T) {
	c, clock := newCore(t)
	evs := events(t, c, c.Client.Subjects().AllJobEvents())
	created, err := c.Client.Create(ctx, "flaky", nil, &core.CreateOpts{MaxAttempts: 3,
		Backoff: &core.Backoff{Type: core.BackoffExponential, Delay: 1000 * time.Millisecond}})
	require.NoError(t, err)
	require.Equal(t, "enqueue", next(t, evs).Event)

	// Attempt 1, by fail: 250 ms, not the backoff's 500.
	j := lease(t, c, core.LeaseRequest{Types: []string{"flaky"}})[0]
	require.Equal(t, "start", next(t, evs).Event)
	var after core.Job
	require.NoError(t, op(t, c, bus.MethodFail, core.LeaseOp{ID: j.ID, Lease: j.Lease, Error: "boom", Delay: new(int64(250))}, &after))
	require.Equal(t, core.StateDelayed, after.State)
	require.Equal(t, clock.Now().UnixMilli()+250, after.PromoteAt, "the retry delay, not the backoff")
	ev := next(t, evs)
	require.Equal(t, "failed_attempt", ev.Event)
	require.Equal(t, clock.Now().UnixMilli()+250, ev.Job.PromoteAt)
	clock.Advance(250 * time.Millisecond)
	mv, err := c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 1, mv.Moved)
	require.Equal(t, "promotion", next(t, evs).Event)

	// Attempt 2, in a batch: 0 is at once, though the backoff says 1500.
	j = lease(t, c, core.LeaseRequest{Types: []string{"flaky"}})[0]
	require.Equal(t, "start", next(t, evs).Event)
	res, err := c.Client.Batch(ctx, []core.LeaseOp{{Op: core.OpFail, ID: j.ID, Lease: j.Lease, Type: j.Type, Error: "boom", Delay: new(int64(0))}})
	require.NoError(t, err)
	require.Nil(t, res[0].Error)
	require.Equal(t, core.StateInactive, res[0].State)
	require.Equal(t, "failed_attempt", next(t, evs).Event)

	// Attempt 3, the last: failed for good.
	j = lease(t, c, core.LeaseRequest{Types: []string{"flaky"}})[0]
	require.Equal(t, "start", next(t, evs).Event)
	require.NoError(t, op(t, c, bus.MethodFail, core.LeaseOp{ID: j.ID, Lease: j.Lease, Error: "boom", Delay: new(int64(250))}, &after))
	require.Equal(t, core.StateFailed, after.State)
	require.Equal(t, 3, after.Attempts)
	require.Equal(t, "failed", next(t, evs).Event)
	got, err := c.Client.Get(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateFailed, got.State)
}

// TestFailRefusesABadDelayAndStoresNothing: a delay that is negative, not
// an integer, past core.MaxDelay, or given to an operation that takes
// none answers invalid naming delay, alone or in a batch, and the job is
// still held by its lease as it was.
func TestFailRefusesABadDelayAndStoresNothing(t *testing.T) {
	c, _ := newCore(t)
	_, err := c.Client.Create(ctx, "f", nil, &core.CreateOpts{MaxAttempts: 5})
	require.NoError(t, err)
	j := lease(t, c, core.LeaseRequest{Types: []string{"f"}})[0]
	raw := bus.NewClient(c.NATS.Conn, 5*time.Second)
	subj := c.Client.Subjects()
	holder := fmt.Sprintf(`"id":%d,"lease":%q`, j.ID, j.Lease)
	for _, tc := range []struct{ name, method, body, want string }{
		{"negative", "fail", `{` + holder + `,"error":"e","delay":-1}`, "delay: -1 ms is outside 0..315360000000"},
		{"past MaxDelay", "fail", `{` + holder + `,"error":"e","delay":315360000001}`, "delay: 315360000001 ms is outside"},
		{"a fraction", "fail", `{` + holder + `,"error":"e","delay":1.5}`, "delay"},
		{"a string", "fail", `{` + holder + `,"error":"e","delay":"1s"}`, "delay"},
		{"given to complete", "complete", `{` + holder + `,"delay":10}`, "delay: only rejoin and fail take a delay"},
		{"given to touch, even 0", "touch", `{` + holder + `,"delay":0}`, "delay: only rejoin and fail take a delay"},
		{"in a batch", "batch", `{"ops":[{"op":"fail",` + holder + `,"error":"e","delay":-3}]}`, "delay: -3 ms is outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reply core.BatchReply
			err := raw.CallRaw(ctx, subj.Core(tc.method), []byte(tc.body), &reply)
			if tc.method == "batch" {
				require.NoError(t, err)
				require.Len(t, reply.Results, 1)
				require.NotNil(t, reply.Results[0].Error)
				require.Equal(t, "invalid", reply.Results[0].Error.Code)
				require.Contains(t, reply.Results[0].Error.Message, tc.want)
			} else {
				require.Error(t, err)
				require.Equal(t, bus.CodeInvalid, nodetest.ErrCode(err), err.Error())
				require.ErrorContains(t, err, tc.want)
			}
			got, err := c.Client.Get(ctx, j.ID)
			require.NoError(t, err)
			require.Equal(t, core.StateActive, got.State, "nothing stored")
			require.Zero(t, got.Attempts)
			require.Empty(t, got.Error)
		})
	}
	// The lease still holds: the job fails as asked.
	var after core.Job
	require.NoError(t, op(t, c, bus.MethodFail, core.LeaseOp{ID: j.ID, Lease: j.Lease, Error: "e", Delay: new(int64(core.MaxDelay))}, &after))
	require.Equal(t, core.StateDelayed, after.State)
}
