package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
)

// ownRetentionField is the field of a type's stats hash that is "1" once a
// job of the type was created with a retention of its own (true or
// {age, count})
// (lua/create_jobs.lua sets it); cursorField is where lua/clean.lua keeps
// its place in a state's index.
const ownRetentionField = "own_retention"

func cursorField(state core.State) string { return "clean_" + string(state) }

// Clean removes up to limit finished jobs of one type in one state
// (complete, failed or cancelled) that their retention no longer keeps:
// their own remove_on_complete / remove_on_fail, else rule, the type's
// default (zero: none); a cancelled job has no rule of its own, only the
// default. It returns how many it removed, and more when it stopped short of
// the newest job having removed some: a call at once may remove more.
//
// It reads at most limit candidates from where the last call stopped (the
// cursor in the type's stats), and lua/clean.lua decides and removes. A
// type with no default and no job with a retention of its own is not read
// at all, so that kept jobs cost the cleaner nothing; nor are the cancelled
// jobs of a type with no default for them.
func (s *Store) Clean(ctx context.Context, p *service.CleanParams) (removed int, more bool, err error) {
	now, jobType, state, rule, limit := p.Now, p.Type, p.State, p.Rule, p.Limit
	if state != core.StateComplete && state != core.StateFailed && state != core.StateCancelled {
		return 0, false, core.Invalidf("state", "%q is not complete, failed or cancelled", state)
	}
	if rule.AtOnce || limit <= 0 {
		return 0, false, fmt.Errorf("redisstore: clean %s %s: rule %+v, limit %d: a default is {age, count} and the limit positive", jobType, state, rule, limit)
	}
	// A type whose Redis failed a moment ago is not tried (shards.go).
	failed := typeErrs{}
	tried, started := s.down.skip(now, []string{jobType}, failed)
	if len(tried) == 0 {
		return 0, false, failed[jobType]
	}
	removed, more, err = s.clean(ctx, now, jobType, state, rule, limit)
	if err != nil {
		if ctx.Err() != nil {
			return removed, more, err
		}
		failed[jobType] = err
	}
	s.down.note(now, tried, failed, time.Since(started))
	return removed, more, err
}

// clean is Clean once its arguments are checked.
func (s *Store) clean(ctx context.Context, now int64, jobType string, state core.State, rule core.Retention, limit int) (removed int, more bool, err error) {
	tk := s.keys.ofType(jobType)
	index := indexOf(tk, state)
	pipe := s.rdb.Pipeline()
	fields := pipe.HMGet(ctx, tk.stats(), ownRetentionField, cursorField(state))
	size := pipe.ZCard(ctx, index)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, false, s.fail("clean: read the index", err)
	}
	f := fields.Val()
	// own retention: a job's remove_on_complete / remove_on_fail; none
	// holds for cancelled jobs.
	own := f[0] == "1" && state != core.StateCancelled
	if size.Val() == 0 || (!rule.Limited() && !own) {
		return 0, false, nil
	}
	cursor := num(f[1])
	if cursor >= size.Val() {
		cursor = 0 // jobs removed by other means since: start again
	}
	ids, err := s.rdb.ZRange(ctx, index, cursor, cursor+int64(limit)-1).Result()
	if err != nil {
		return 0, false, s.fail("clean: read candidates", err)
	}
	atEnd := cursor+int64(len(ids)) >= size.Val()
	gone, err := s.runClean(ctx, tk, now, state, rule, cursor, atEnd, ids)
	if err != nil {
		return 0, false, s.fail("clean", err)
	}
	return len(gone), !atEnd && len(gone) > 0, nil
}

// rescoreBatch is how many jobs one lua/jobs_rescore.lua call looks at: a
// few ms of Redis, and within what Lua's unpack takes.
const rescoreBatch = 1000

// RescoreJobs gives up to rescoreBatch jobs of one type that an earlier
// version entered in its jobs index by id their place in creation order
// (lua/jobs_rescore.lua): how many moved, and more when a call at once may
// move more. The leader's cleaner runs it for every type with each clean:
// once every old job has moved, it costs a ZRANGEBYSCORE that finds none.
func (s *Store) RescoreJobs(ctx context.Context, jobType string) (moved int, more bool, err error) {
	tk := s.keys.ofType(jobType)
	res, err := s.eval(ctx, jobsRescore, append(tk.fixed(), tk.job(0)), rescoreBatch).Int64Slice()
	if err != nil {
		return 0, false, s.fail("rescore jobs", err)
	}
	if len(res) != 2 {
		return 0, false, fmt.Errorf("redisstore: jobs_rescore: reply %v", res)
	}
	return int(res[0]), res[0] > 0 && res[1] == rescoreBatch, nil
}
