package service_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestGetShowsTheErrorHistory: each failed attempt, with the stack its
// worker sent, is in get's errors, newest last; fail's reply, range and
// the failed_attempt event stay without it.
func TestGetShowsTheErrorHistory(t *testing.T) {
	c, clock := newCore(t)
	evs := events(t, c, c.Client.Subjects().JobEventsOf(bus.EventFailedAttempt, "flaky"))
	created, err := c.Client.Create(ctx, "flaky", nil, &core.CreateOpts{MaxAttempts: 3})
	require.NoError(t, err)
	var want []core.AttemptError
	for attempt, stack := range []string{"main.go:1", ""} {
		jobs := lease(t, c, core.LeaseRequest{Types: []string{"flaky"}})
		require.Len(t, jobs, 1)
		after, err := c.Client.Fail(ctx, core.LeaseOp{ID: created.ID, Lease: jobs[0].Lease, Error: "boom", Stack: stack})
		require.NoError(t, err)
		require.Empty(t, after.Errors, "fail's reply stays light")
		require.Empty(t, next(t, evs).Job.Errors, "events stay light")
		want = append(want, core.AttemptError{Attempt: attempt + 1, At: clock.Now().UnixMilli(), Error: "boom", Stack: stack})
	}
	got, err := c.Client.Get(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, want, got.Errors)
	listed, err := c.Client.Range(ctx, core.RangeRequest{To: 9})
	require.NoError(t, err)
	require.Len(t, listed, 1)
	require.Empty(t, listed[0].Errors, "range stays light")
}

// TestAStackOverTheLimitIsInvalidAndStoresNothing: fail's stack is
// bounded, and only fail takes one.
func TestAStackOverTheLimitIsInvalidAndStoresNothing(t *testing.T) {
	c, _ := newCore(t)
	created, err := c.Client.Create(ctx, "t", nil, nil)
	require.NoError(t, err)
	jobs := lease(t, c, core.LeaseRequest{Types: []string{"t"}})
	require.Len(t, jobs, 1)
	o := core.LeaseOp{ID: created.ID, Lease: jobs[0].Lease, Error: "boom", Stack: strings.Repeat("s", core.MaxStackBytes+1)}
	_, err = c.Client.Fail(ctx, o)
	require.Equal(t, bus.CodeInvalid, nodetest.ErrCode(err))
	require.ErrorContains(t, err, "stack: 16385 bytes is over the limit of 16384")
	res, err := c.Client.Batch(ctx, []core.LeaseOp{{Op: core.OpComplete, ID: created.ID, Lease: jobs[0].Lease, Stack: "s"}})
	require.NoError(t, err)
	require.Equal(t, "invalid", res[0].Error.Code)
	err = c.Client.Complete(ctx, core.LeaseOp{ID: created.ID, Lease: jobs[0].Lease, Stack: "s"})
	require.Equal(t, bus.CodeInvalid, nodetest.ErrCode(err))
	require.ErrorContains(t, err, "only fail takes an error, final and a stack")

	got, err := c.Client.Get(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateActive, got.State, "nothing stored")
	require.Empty(t, got.Errors)
}
