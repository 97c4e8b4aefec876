package redisstore

import (
	"context"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
)

// Search looks, type by type (sorted by name) and within a type in id
// order, from the cursor on, for jobs whose id, unique key or data contains
// q (lua/search.lua), of one type and one state when given, and whose
// error passes p's error filters. It looks at no
// more than budget jobs and stops at limit matches; next is where to go on
// (after the last job looked at), nil when every type has been searched.
// Jobs come without their data.
func (s *Store) Search(ctx context.Context, p *service.SearchParams) ([]core.Job, *core.IDsCursor, error) {
	jobType, from, limit, budget := p.Type, p.From, p.Limit, p.Budget
	types := []string{jobType}
	if jobType == "" {
		var err error
		if types, err = s.Types(ctx); err != nil {
			return nil, nil, err
		}
	}
	after := from.Position
	i, found := slices.BinarySearch(types, from.Type)
	if !found { // "" or a type that is gone: the next type from its start
		after = 0
	}
	jobs := []core.Job{}
	for _, t := range types[i:] {
		tk := s.keys.ofType(t)
		for {
			if budget == 0 || len(jobs) == limit {
				return jobs, &core.IDsCursor{Type: t, Position: after}, nil
			}
			ids, err := s.rdb.ZRangeByScore(ctx, tk.jobs(), &redis.ZRangeBy{
				Min: "(" + strconv.FormatInt(after, 10), Max: "+inf", Count: int64(budget)}).Result()
			if err != nil {
				return nil, nil, s.fail("search: read ids", err)
			}
			if len(ids) == 0 {
				break
			}
			last, found, err := s.runSearch(ctx, tk, p, limit-len(jobs), ids)
			if err != nil {
				return nil, nil, s.fail("search", err)
			}
			jobs = append(jobs, found...)
			budget -= slices.Index(ids, strconv.FormatInt(last, 10)) + 1
			after = last
		}
		after = 0
	}
	return jobs, nil, nil
}

// runSearch runs lua/search.lua over ids of one type: the last id it
// looked at and the jobs that match.
func (s *Store) runSearch(ctx context.Context, tk typeKeys, p *service.SearchParams, limit int, ids []string) (int64, []core.Job, error) {
	keys := tk.fixed()
	args := make([]any, 0, 5+len(ids))
	args = append(args, p.Query, string(p.State), limit, p.Error, p.ErrorGroup)
	for _, id := range ids {
		n, _ := strconv.ParseInt(id, 10, 64)
		keys = append(keys, tk.job(n))
		args = append(args, id)
	}
	res, err := s.evalNoWait(ctx, searchJobs, keys, args...).Slice()
	if err != nil {
		return 0, nil, err
	}
	return num(res[0]), decodeRows(res[1:]), nil
}
