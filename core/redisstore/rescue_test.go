package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestRescueJudgesEachJobByItsStallLimit runs rescueExpired through its
// wrapper: a job with its own limit 0 turns its first stall into a failed
// attempt (retried at once, then failed for good), and a job stored without
// a limit (before the field existed) is judged by the node's.
func TestRescueJudgesEachJobByItsStallLimit(t *testing.T) {
	t.Parallel()
	_, rdb := nodetest.NewStore(t)
	prefix := nodetest.Prefix(t, rdb)
	st, err := redisstore.New(redisstore.Config{Client: rdb, Prefix: prefix})
	require.NoError(t, err)
	ctx := context.Background()
	zero := 0
	jobs, _, err := st.Create(ctx, 1000, []core.Spec{
		{Type: "r", MaxAttempts: 2, TTL: 100 * time.Millisecond, StallLimit: &zero},
		{Type: "r", MaxAttempts: 1, TTL: 100 * time.Millisecond},
	})
	require.NoError(t, err)
	strict, old := jobs[0].ID, jobs[1].ID
	require.NoError(t, rdb.HDel(ctx, prefix+":{r}:job:"+strconv.FormatInt(old, 10), "stall_limit").Err())

	leaseAndExpire := func(now int64) map[int64]core.Job {
		t.Helper()
		_, _, err := st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"r"}, Max: 10, Worker: "w", Token: "tok", TTL: 0})
		require.NoError(t, err)
		moved, _, err := st.Rescue(ctx, now+100, 100, 2)
		require.NoError(t, err)
		byID := map[int64]core.Job{}
		for _, j := range moved {
			byID[j.ID] = j
		}
		return byID
	}

	first := leaseAndExpire(1000)
	require.Len(t, first, 2)
	s := first[strict]
	require.Equal(t, core.StateInactive, s.State, "a failed attempt, retried at once (no backoff)")
	require.Equal(t, 1, s.Attempts)
	require.Equal(t, "lease expired: ran past its ttl of 100 ms", s.Error)
	require.Equal(t, 1, s.Stalls)
	require.Zero(t, s.StallLimit)
	o := first[old]
	require.Equal(t, core.StateInactive, o.State, "a free stall: the node's limit is 2")
	require.Zero(t, o.Attempts)
	require.Equal(t, 2, o.StallLimit, "judged by the node's limit")

	second := leaseAndExpire(2000)
	require.Equal(t, core.StateFailed, second[strict].State, "no attempt left")
	require.Equal(t, 2, second[strict].Attempts)
	require.Equal(t, core.StateInactive, second[old].State, "second free stall")

	third := leaseAndExpire(3000)
	require.Len(t, third, 1)
	require.Equal(t, core.StateFailed, third[old].State, "past the node's limit, its only attempt")
	require.Equal(t, 1, third[old].Attempts)
}
