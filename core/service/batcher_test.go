package service_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
)

// TestConcurrentCreatesAreStoredIndependently: concurrent creates share
// batches in core; each still gets its own job, ids never repeat, and
// unique keys hold across calls that share a batch.
func TestConcurrentCreatesAreStoredIndependently(t *testing.T) {
	c, _ := newCore(t)
	const calls = 200
	type result struct {
		job *core.Job
		err error
	}
	results := make([]result, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			opts := &core.CreateOpts{}
			if i%4 == 0 {
				opts.UniqueKey = fmt.Sprintf("k%d", i%20) // five calls per key
			}
			job, err := c.Client.Create(ctx, []string{"a", "b"}[i%2], i, opts)
			results[i] = result{job, err}
		})
	}
	wg.Wait()
	ids := map[int64]int{}
	for i, r := range results {
		require.NoError(t, r.err)
		if i%4 != 0 {
			require.JSONEq(t, fmt.Sprint(i), string(r.job.Data), "call %d got its own job", i)
		}
		ids[r.job.ID]++
	}
	// The 50 keyed calls (every fourth, all of type "a") share 5 keys, ten
	// calls each: 150 plain jobs and 5 keyed ones, and every keyed call got
	// the holder of its key.
	n, err := c.Client.Count(ctx, "", "")
	require.NoError(t, err)
	require.Equal(t, int64(len(ids)), n)
	require.Equal(t, int64(150+5), n)
	for i, r := range results {
		if i%4 == 0 {
			require.Equal(t, 10, ids[r.job.ID], "key k%d: the calls sharing it got one job", i%20)
		}
	}
}
