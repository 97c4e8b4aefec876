package core_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
)

// TestWaitPercentile: the bound of the bucket that holds the percentile.
func TestWaitPercentile(t *testing.T) {
	t.Parallel()
	n := len(core.WaitBounds) + 1
	hist := func(at map[int]int64) []int64 {
		w := make([]int64, n)
		for i, c := range at {
			w[i] = c
		}
		return w
	}
	for _, c := range []struct {
		name  string
		waits []int64
		want  int64
	}{
		{"no start is 0", hist(nil), 0},
		{"all in the first bucket", hist(map[int]int64{0: 5}), 10},
		{"95 of 100 fast, 5 slow: the 95th is fast", hist(map[int]int64{1: 95, 6: 5}), 25},
		{"94 of 100 fast, 6 slow: the 95th is slow", hist(map[int]int64{1: 94, 6: 6}), 1000},
		{"past the last bound", hist(map[int]int64{n - 1: 1}), core.WaitBounds[len(core.WaitBounds)-1] + 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, core.WaitPercentile(c.waits, 0.95))
		})
	}
}
