package service

import (
	"testing"
	"time"
)

// TestLatestTickIsTheLastTickAtOrBeforeNow: for every and cron timings,
// from a tick long past (a leader gone for a year) or just past, the
// latest tick at or before now, a tick exactly at now included.
func TestLatestTickIsTheLastTickAtOrBeforeNow(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	year := int64(365 * 24 * 3600 * 1000)
	every := int64(1000)
	secondly, err := parseTiming("* * * * * *", nil, "", 0)
	require(t, err == nil, "secondly: %v", err)
	daily, err := parseTiming("30 4 * * *", nil, "Europe/Paris", 0)
	require(t, err == nil, "daily: %v", err)
	for _, tc := range []struct {
		name           string
		tm             timing
		from, now, out int64
	}{
		{"every, now on a tick", everyTiming{anchor: t0, every: every}, t0, t0 + 5000, t0 + 5000},
		{"every, between ticks", everyTiming{anchor: t0, every: every}, t0, t0 + 5999, t0 + 5000},
		{"every, a year later", everyTiming{anchor: t0, every: every}, t0, t0 + year + 1, t0 + year},
		{"cron each second, a year later", secondly, t0, t0 + year + 1500, t0 + year + 1000},
		{"cron each second, from now", secondly, t0, t0, t0},
		// 04:30 in Paris is 03:30 UTC in winter
		{"daily in Paris, days later", daily, t0 + 3*3600*1000 + 30*60*1000, t0 + 10*24*3600*1000, t0 + 9*24*3600*1000 + 3*3600*1000 + 30*60*1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := latestTick(tc.tm, tc.from, tc.now)
			require(t, got == tc.out, "latest tick %v, want %v", time.UnixMilli(got).UTC(), time.UnixMilli(tc.out).UTC())
		})
	}
}
