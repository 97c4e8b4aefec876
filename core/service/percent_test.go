package service

import (
	"math"
	"testing"
)

// TestPercentIsWithin0And100ForEveryInt64 (require is fuzz_test.go's).
func TestPercentIsWithin0And100ForEveryInt64(t *testing.T) {
	edges := []int64{math.MinInt64, -1, 0, 1, 99, 100, 101, 1 << 53, math.MaxInt64 / 100, math.MaxInt64/100 + 1, math.MaxInt64 - 1, math.MaxInt64}
	for _, c := range edges {
		for _, total := range edges {
			p := percent(c, total)
			require(t, p >= 0 && p <= 100, "%d of %d gave %d", c, total, p)
		}
	}
	for _, tc := range [][3]int64{{93_000_000_000_000_000, 100_000_000_000_000_000, 93}, {3, 8, 37}} {
		got := percent(tc[0], tc[1])
		require(t, got == tc[2], "%d of %d gave %d, not %d", tc[0], tc[1], got, tc[2])
	}
}
