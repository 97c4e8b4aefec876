package service_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// TestRangeAtTheEdgeOfInt64 sends the numbers that once stopped core: a
// range to MaxInt64 is refused by size (To-From+1 wrapped and passed), a
// narrow range near MaxInt64 over several types is refused as past the
// positions such a range reads (it once wrapped to+1 and sliced out of
// bounds), and one of a type answers empty.
func TestRangeAtTheEdgeOfInt64(t *testing.T) {
	c, _ := newCore(t)
	for _, typ := range []string{"a", "b"} {
		_, err := c.Client.Create(ctx, typ, nil, nil)
		require.NoError(t, err)
	}
	raw := bus.NewClient(c.NATS.Conn, 5*time.Second)
	subj := c.Client.Subjects()

	for _, body := range []string{
		`{"from":0,"to":9223372036854775807}`,
		`{"from":0,"to":9223372036854775807,"state":"inactive"}`,
		`{"from":1,"to":9223372036854775807,"type":"a"}`,
	} {
		err := raw.CallRaw(ctx, subj.Core(bus.MethodRange), []byte(body), nil)
		require.ErrorIs(t, err, core.ErrInvalid, body)
		require.ErrorContains(t, err, "to: ", body)
	}
	// Of every type, positions past core.MaxUntypedPosition are refused
	// (issue 25): the cursor pages there.
	for _, body := range []string{
		`{"from":9223372036854775800,"to":9223372036854775807}`,
		`{"from":9223372036854775807,"to":9223372036854775807,"state":"inactive"}`,
		`{"from":9223372036854775000,"to":9223372036854775807,"order":"desc"}`,
	} {
		err := raw.CallRaw(ctx, subj.Core(bus.MethodRange), []byte(body), nil)
		require.ErrorIs(t, err, core.ErrInvalid, body)
		require.ErrorContains(t, err, "from: ", body)
		require.ErrorContains(t, err, "cursor", body)
	}
	for _, body := range []string{
		`{"from":9223372036854775000,"to":9223372036854775807,"type":"a"}`,
		`{"from":9223372036854775807,"to":9223372036854775807,"type":"b","state":"inactive"}`,
	} {
		var reply core.JobsReply
		require.NoError(t, raw.CallRaw(ctx, subj.Core(bus.MethodRange), []byte(body), &reply), body)
		require.Empty(t, reply.Jobs, body)
	}
	require.Len(t, rangeIDs(t, c, core.RangeRequest{To: 999}), 2, "core still serves")
}

// TestProgressOfHugeNumbersIsAPercent: 93e15 of 1e17 is 93%, not the -91
// that complete × 100 wrapped to.
func TestProgressOfHugeNumbersIsAPercent(t *testing.T) {
	c, _ := newCore(t)
	_, err := c.Client.Create(ctx, "p", nil, nil)
	require.NoError(t, err)
	j := lease(t, c, core.LeaseRequest{Types: []string{"p"}})[0]
	for _, tc := range []struct {
		complete, total int64
		want            int
	}{
		{93_000_000_000_000_000, 100_000_000_000_000_000, 93},
		{math.MaxInt64 - 1, math.MaxInt64, 99},
		{math.MaxInt64, math.MaxInt64, 100},
		{math.MaxInt64, 1, 100},
		{0, math.MaxInt64, 0},
	} {
		require.NoError(t, op(t, c, bus.MethodProgress, core.LeaseOp{ID: j.ID, Lease: j.Lease, Complete: ptr(tc.complete), Total: ptr(tc.total)}, nil))
		got, err := c.Client.Get(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, tc.want, got.Progress, "%d of %d", tc.complete, tc.total)
	}
}
