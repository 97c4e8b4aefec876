package service

import (
	"testing"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// FuzzScheduleSet: schedule_set's checks (the fuzz harness of
// fuzz_test.go). An accepted schedule has a name token, exactly one of cron
// and every, every at or over the minimum, a spec create would take, and a
// next tick after now; and the tick the leader would fire from it later is
// neither after that time nor before the first.
func FuzzScheduleSet(f *testing.F) {
	s := fuzzChecks()
	const now = int64(1795432556666)
	seeds := append([]string{
		`{"name":"s","every":1000,"spec":{"type":"t"}}`,
		`{"name":"s","every":999,"spec":{"type":"t"}}`,
		`{"name":"s","every":9223372036854775807,"spec":{"type":"t"}}`,
		`{"name":"s","every":-1,"spec":{"type":"t"}}`,
		`{"name":"s","cron":"*/5 * * * *","spec":{"type":"t"}}`,
		`{"name":"s","cron":"0 30 2 * * 1-5","tz":"America/New_York","spec":{"type":"t","delay":5}}`,
		`{"name":"s","cron":"@yearly","spec":{"type":"t"}}`,
		`{"name":"s","cron":"0 0 29 2 *","spec":{"type":"t"}}`,
		`{"name":"s","cron":"0 0 31 4 *","spec":{"type":"t"}}`,
		`{"name":"s","cron":"@every 1s","spec":{"type":"t"}}`,
		`{"name":"s","cron":"TZ=UTC * * * * *","spec":{"type":"t"}}`,
		`{"name":"s","cron":"* * * * * * *","spec":{"type":"t"}}`,
		`{"name":"s","cron":"1-0/0 * * * *","spec":{"type":"t"}}`,
		`{"name":"s","cron":"* * * * *","tz":"../../etc/passwd","spec":{"type":"t"}}`,
		`{"name":"a.b","every":1000,"spec":{"type":"t"}}`,
		`{"name":"s","every":1000,"spec":{"type":"t","priority":"urgent"}}`,
	}, edgeSeeds...)
	fuzzRequest(f, seeds, func(req *core.ScheduleSetRequest) error {
		_, err := s.checkScheduleSet(req, now)
		return err
	}, func(t *testing.T, req *core.ScheduleSetRequest) {
		require(t, bus.ValidToken(req.Name) == nil, "name %q", req.Name)
		require(t, (req.Cron == "") != (req.Every == nil), "cron %q, every %v", req.Cron, req.Every)
		if req.Every != nil {
			require(t, *req.Every >= core.MinEvery && *req.Every <= core.MaxDelay*time.Millisecond, "every %s", *req.Every)
		}
		specHolds(t, &req.Spec, s.cfg.MaxDataBytes)
		var every *int64
		if req.Every != nil {
			every = new(req.Every.Milliseconds())
		}
		tm, err := parseTiming(req.Cron, every, req.TZ, now)
		require(t, err == nil, "accepted, then refused: %v", err)
		first := tm.after(now)
		require(t, first > now, "first tick %d is not after now %d", first, now)
		later := first + 3_600_000
		tick := latestTick(tm, first, later)
		require(t, tick >= first && tick <= later, "latest tick %d outside %d..%d", tick, first, later)
		require(t, tm.after(tick) > later || tm.after(tick) <= 0, "a tick after %d is still at or before %d", tick, later)
	})
}
