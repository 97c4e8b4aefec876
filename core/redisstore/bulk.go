package redisstore

import (
	"context"
	"slices"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
)

// Bulk applies an action to the jobs of a state (lua/bulk.lua), type by
// type in name order from q.From, reading at most q.Limit candidates in
// all. Per type: one read of the next candidates of the state's index,
// then one script that checks each again, filters and acts. Every job acted
// on leaves the state's index, so the cursor of a type goes on at its
// position plus the candidates that stayed (those the filters left).
func (s *Store) Bulk(ctx context.Context, now int64, q *service.BulkQuery) (*service.BulkResult, error) {
	types := []string{q.Type}
	if q.Type == "" {
		var err error
		if types, err = s.Types(ctx); err != nil {
			return nil, err
		}
	}
	start := q.From.Position
	i, found := slices.BinarySearch(types, q.From.Type)
	if !found {
		start = 0
	}
	types = types[i:]
	sizes, err := s.sizes(ctx, types, q.State)
	if err != nil {
		return nil, err
	}
	res := &service.BulkResult{}
	budget := int64(q.Limit)
	for n, t := range types {
		pos := int64(0)
		if n == 0 {
			pos = start
		}
		if sizes[n] <= pos {
			continue
		}
		tk := s.keys.ofType(t)
		members, err := s.rdb.ZRange(ctx, indexOf(tk, q.State), pos, pos+budget-1).Result()
		if err != nil {
			return nil, s.fail("bulk: read "+string(q.State), err)
		}
		if len(members) == 0 {
			continue
		}
		ids := make([]int64, len(members))
		for k, m := range members {
			ids[k] = memberID(m)
		}
		matched, jobs, err := s.runBulk(ctx, tk, now, q, ids)
		if err != nil {
			return nil, s.fail("bulk", err)
		}
		res.Matched += matched
		res.Jobs = append(res.Jobs, jobs...)
		if matched > 0 && q.Action == core.BulkCancel {
			s.settleAfter(ctx, now, t) // those waiting for them take them as failed
		}
		budget -= int64(len(members))
		if budget == 0 {
			next := pos + int64(len(members)) - int64(matched)
			if next < sizes[n]-int64(matched) || slices.ContainsFunc(sizes[n+1:], func(k int64) bool { return k > 0 }) {
				res.Next = &core.IDsCursor{Type: t, Position: next}
			}
			break
		}
	}
	return res, nil
}

// runBulk runs bulk.lua on candidates of one type: how many matched, and
// the jobs acted on.
func (s *Store) runBulk(ctx context.Context, tk typeKeys, now int64, q *service.BulkQuery, ids []int64) (int, []core.Job, error) {
	keys := tk.fixed()
	args := make([]any, 0, 6+len(ids))
	args = append(args, now, string(q.Action), string(q.State), q.Error, q.Before, q.ErrorGroup)
	for _, id := range ids {
		keys = append(keys, tk.job(id), tk.log(id), tk.errors(id))
		args = append(args, id)
	}
	res, err := s.eval(ctx, bulkJobs, keys, args...).Slice()
	if err != nil {
		return 0, nil, err
	}
	return int(num(res[0])), decodeRows(res[1:]), nil
}

// FailedErrors groups the errors of the newest limit failed jobs of a
// type in one script (lua/failed_errors.lua), a read.
func (s *Store) FailedErrors(ctx context.Context, jobType string, limit int) (*core.FailedErrorsReply, error) {
	tk := s.keys.ofType(jobType)
	res, err := s.evalNoWait(ctx, failedErrors, append(tk.fixed(), tk.job(0)), limit).Slice()
	if err != nil {
		return nil, s.fail("failed_errors", err)
	}
	reply := &core.FailedErrorsReply{Failed: num(res[0]), Read: int(num(res[1])), Groups: make([]core.ErrorGroup, 0, len(res)-2)}
	for _, g := range res[2:] {
		f := g.([]any)
		reply.Groups = append(reply.Groups, core.ErrorGroup{Group: str(f[0]), Sample: str(f[1]), Count: int(num(f[2])),
			FirstAt: num(f[3]), LastAt: num(f[4]), JobID: num(f[5])})
	}
	return reply, nil
}
