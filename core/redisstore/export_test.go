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

// MarkSilent runs mark_silent.lua: workers (id → seen score) found silent.
func MarkSilent(ctx context.Context, s *Store, workers map[string]float64) error {
	return s.markSilent(ctx, workers)
}

// JobsPlace is a place in a type's jobs index, as aging_rerank.lua says
// where to go on: a score and a member ("" "": the start).
type JobsPlace struct{ Score, Member string }

// RunAgingRerank runs aging_rerank.lua once over a type's jobs after the
// place after (nil: from the first), looking at limit of them: the place
// to go on after, nil at the end.
func RunAgingRerank(ctx context.Context, s *Store, jobType string, after *JobsPlace, limit int) (*JobsPlace, error) {
	var from *jobsPlace
	if after != nil {
		from = &jobsPlace{score: after.Score, member: after.Member}
	}
	next, err := s.runAgingRerank(ctx, s.keys.ofType(jobType), from, limit)
	if next == nil {
		return nil, err
	}
	return &JobsPlace{Score: next.score, Member: next.member}, err
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

// DepLink runs dep_link.lua for links of members to job dep of jobType;
// the dependency's state.
func DepLink(ctx context.Context, s *Store, jobType string, dep int64, members ...string) (core.State, error) {
	items := make([]linkItem, len(members))
	for i, m := range members {
		items[i] = linkItem{dep: dep, member: m}
	}
	st, err := s.runDepLink(ctx, s.keys.ofType(jobType), items)
	if err != nil || len(st) != len(members) {
		return "", err
	}
	return st[0], nil
}

// HandoverDone runs handover_done.lua on jobType's slot.
func HandoverDone(ctx context.Context, s *Store, jobType string, entries ...string) error {
	return s.runHandoverDone(ctx, s.keys.ofType(jobType), entries)
}

// CreateStepOne stores specs, some of which wait, as Create would, but
// does not finish the hand-overs their scripts recorded (as a core that
// died right after): the jobs.
func CreateStepOne(ctx context.Context, s *Store, now int64, specs []core.Spec) ([]core.Job, error) {
	jobs, _, _, err := s.storeWaiting(ctx, now, specs)
	return jobs, err
}
