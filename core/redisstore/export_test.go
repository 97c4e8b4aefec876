package redisstore

import (
	"context"
	"testing"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
)

// ReplyCode names a script's reply code for the tests of package
// redisstore_test, which run scripts directly.
func ReplyCode(lua string) int64 {
	for _, c := range replyCodes {
		if c.lua == lua {
			return int64(c.code)
		}
	}
	panic("redisstore: no reply code " + lua)
}

// CompleteStepOne runs the complete script alone for a job leased under
// lease, as core would before it finishes its hand-overs (which it does
// not): the one hand-over the script recorded.
func CompleteStepOne(ctx context.Context, t *testing.T, s *Store, jobType string, id int64, lease string, now int64) string {
	t.Helper()
	res, err := s.runOps(ctx, opScripts[core.OpComplete], s.keys.ofType(jobType), now,
		[]*service.StoreOp{{ID: id, Lease: lease, Type: jobType}})
	if err != nil || len(res) != 1 || res[0].handed != 1 {
		t.Fatalf("complete step one: %v %+v", err, res)
	}
	entries, err := s.rdb.ZRange(ctx, s.keys.ofType(jobType).handover(), 0, -1).Result()
	if err != nil || len(entries) != 1 {
		t.Fatalf("complete step one: hand-overs %v %v", entries, err)
	}
	return entries[0]
}

// DepSettle runs dep_settle.lua for one hand-over: job id of jobType takes
// note that dep completed ("c") or failed ("f").
func DepSettle(ctx context.Context, s *Store, jobType string, now, id, dep int64, outcome string) ([]core.Job, int64, error) {
	return s.runDepSettle(ctx, s.keys.ofType(jobType), now, []settleItem{{id: id, dep: dep, outcome: outcome}})
}
