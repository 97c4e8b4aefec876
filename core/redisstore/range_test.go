package redisstore_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/node/redisproc"
)

// TestARangePastTheEndReadsNoIndex: over several types, a range at
// positions near MaxInt64 answers empty after counting, without reading
// every type's index into memory to merge it.
func TestARangePastTheEndReadsNoIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, err := redisproc.Start(ctx, redisproc.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	rdb, err := redisstore.Dial(srv.URL())
	require.NoError(t, err)
	t.Cleanup(func() { _ = rdb.Close() })
	st, err := redisstore.New(redisstore.Config{Client: rdb, Prefix: "past"})
	require.NoError(t, err)
	for _, typ := range []string{"a", "b"} {
		_, _, err = st.Create(ctx, 1, []core.Spec{{Type: typ, MaxAttempts: 1, TTL: 1000 * time.Millisecond}, {Type: typ, MaxAttempts: 1, TTL: 1000 * time.Millisecond}})
		require.NoError(t, err)
	}
	zranges := func() string {
		info, err := rdb.Info(ctx, "commandstats").Result()
		require.NoError(t, err)
		for _, line := range strings.Split(info, "\n") {
			if strings.HasPrefix(line, "cmdstat_zrange:") {
				calls, _, _ := strings.Cut(strings.TrimPrefix(line, "cmdstat_zrange:"), ",")
				return calls
			}
		}
		return "calls=0"
	}
	before := zranges()
	for _, state := range []core.State{"", core.StateInactive} {
		page, err := st.Range(ctx, &service.RangeParams{State: state, From: math.MaxInt64 - 999, To: math.MaxInt64})
		require.NoError(t, err)
		require.Empty(t, page.Jobs)
	}
	require.Equal(t, before, zranges(), "no index was read")

	page, err := st.Range(ctx, &service.RangeParams{From: 3, To: math.MaxInt64})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1, "the last of four jobs")
}

// TestARangeByCursorFindsItsPlaceAmongTies: over two types whose ready
// indexes hold one priority (every member of equal score), pages by cursor
// list the merged index as one read by position does, from a place whose
// member is in neither index too; after SCRIPT FLUSH the script is loaded
// again and the read repeated.
func TestARangeByCursorFindsItsPlaceAmongTies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, rdb := nodetest.NewStore(t)
	var specs []core.Spec
	for i := range 50 {
		specs = append(specs, core.Spec{Type: []string{"a", "b"}[i%2], MaxAttempts: 1, TTL: 1000 * time.Millisecond})
	}
	_, _, err := st.Create(ctx, 1, specs)
	require.NoError(t, err)
	whole, err := st.Range(ctx, &service.RangeParams{State: core.StateInactive, To: 999})
	require.NoError(t, err)
	require.Len(t, whole.Jobs, 50)
	require.NoError(t, rdb.ScriptFlush(ctx).Err())

	var got []core.Job
	p := &service.RangeParams{State: core.StateInactive, Limit: 6}
	for {
		page, err := st.Range(ctx, p)
		require.NoError(t, err)
		got = append(got, page.Jobs...)
		if !page.More {
			break
		}
		p.After = &page.Places[len(page.Places)-1]
	}
	require.Equal(t, whole.Jobs, got)

	// A place between two members, held by no job: the member just after
	// the 10th's, which sorts before the 11th's.
	place := whole.Places[9]
	place.Member += "0"
	page, err := st.Range(ctx, &service.RangeParams{State: core.StateInactive, Limit: 3, After: &place})
	require.NoError(t, err)
	require.Equal(t, whole.Jobs[10:13], page.Jobs)
	page, err = st.Range(ctx, &service.RangeParams{State: core.StateInactive, Limit: 3, After: &place, Desc: true})
	require.NoError(t, err)
	require.Equal(t, []core.Job{whole.Jobs[9], whole.Jobs[8], whole.Jobs[7]}, page.Jobs)
}
