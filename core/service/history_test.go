package service_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestHistoryCountsEachMinute: the jobs created, started (with their wait
// p95), completed and failed for good, and the waiting jobs sampled, per
// minute and per hour, as a core adds them to Redis; a type, or all
// summed; bad input is invalid. The counts are the same whether anyone hears the
// events or nobody does (then core builds none).
func TestHistoryCountsEachMinute(t *testing.T) {
	t.Parallel()
	for _, heard := range []bool{true, false} {
		t.Run(map[bool]string{true: "heard", false: "unheard"}[heard], func(t *testing.T) {
			t.Parallel()
			historyCountsEachMinute(t, func(string) bool { return heard })
		})
	}
}

func historyCountsEachMinute(t *testing.T, listening func(string) bool) {
	c := nodetest.NewCore(t, service.Config{Listening: listening})
	ctx := t.Context()
	for range 3 {
		_, err := c.Client.Create(ctx, "email", nil, nil)
		require.NoError(t, err)
	}
	_, err := c.Client.Create(ctx, "sms", nil, nil)
	require.NoError(t, err)
	leased, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"email"}, Max: 2, Worker: "w"})
	require.NoError(t, err)
	require.Len(t, leased, 2)
	require.NoError(t, c.Client.Complete(ctx, core.LeaseOp{ID: leased[0].ID, Lease: leased[0].Lease, Type: "email"}))
	_, err = c.Client.Fail(ctx, core.LeaseOp{ID: leased[1].ID, Lease: leased[1].Lease, Type: "email", Error: "no"})
	require.NoError(t, err)
	c.Service.FlushHistory(ctx)

	email, err := c.Client.History(ctx, core.HistoryRequest{Type: "email", Minutes: 5})
	require.NoError(t, err)
	require.Len(t, email.Minutes, 5)
	require.Equal(t, int64(60000), email.Step)
	last := email.Minutes[4]
	require.Contains(t, core.WaitBounds, last.WaitP95, "the two starts' wait, as a bucket's bound")
	require.Equal(t, core.MinuteCounts{At: last.At, Created: 3, Completed: 1, Failed: 1, Started: 2, WaitP95: last.WaitP95, Waiting: 1}, last,
		"this minute: one email job is still waiting")
	require.Zero(t, email.Minutes[0].Created, "minutes without jobs are zeros")
	require.Equal(t, int64(60000), email.Minutes[4].At-email.Minutes[3].At)

	all, err := c.Client.History(ctx, core.HistoryRequest{})
	require.NoError(t, err)
	require.Len(t, all.Minutes, core.HistoryMinutesDefault)
	require.EqualValues(t, 4, all.Minutes[len(all.Minutes)-1].Created, "all types summed")

	hours, err := c.Client.History(ctx, core.HistoryRequest{Type: "email", Hours: 2})
	require.NoError(t, err)
	require.Equal(t, int64(3_600_000), hours.Step)
	require.Len(t, hours.Minutes, 2)
	require.EqualValues(t, 3, hours.Minutes[1].Created, "this hour")
	require.EqualValues(t, 2, hours.Minutes[1].Started)

	for _, bad := range []core.HistoryRequest{{Minutes: -1}, {Minutes: core.MaxHistoryMinutes + 1}, {Type: "a.b"},
		{Hours: -1}, {Hours: core.MaxHistoryHours + 1}, {Minutes: 5, Hours: 1}} {
		_, err := c.Client.History(ctx, bad)
		require.ErrorIs(t, err, core.ErrInvalid, "%+v", bad)
	}
}
