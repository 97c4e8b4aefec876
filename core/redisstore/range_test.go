package redisstore_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
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
		_, _, err = st.Create(ctx, 1, []core.Spec{{Type: typ, MaxAttempts: 1, TTL: 1000}, {Type: typ, MaxAttempts: 1, TTL: 1000}})
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
		jobs, err := st.Range(ctx, core.RangeRequest{State: state, From: math.MaxInt64 - 999, To: math.MaxInt64})
		require.NoError(t, err)
		require.Empty(t, jobs)
	}
	require.Equal(t, before, zranges(), "no index was read")

	jobs, err := st.Range(ctx, core.RangeRequest{From: 3, To: math.MaxInt64})
	require.NoError(t, err)
	require.Len(t, jobs, 1, "the last of four jobs")
}
