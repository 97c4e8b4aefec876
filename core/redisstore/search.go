package redisstore

import (
	"context"
	"slices"
	"strconv"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
)

// Search looks, type by type (sorted by name) and within a type in
// creation order (its jobs index, lua/includes/jobs_order.lua), after the
// cursor's place, for jobs whose id, unique key or data contains q
// (lua/search.lua), of one type and one state when given, and whose error
// passes p's error filters. It looks at no more than budget jobs and stops
// at limit matches; Next is where to go on (after the last job looked
// at), nil when every type has been searched. Jobs come without their
// data.
func (s *Store) Search(ctx context.Context, p *service.SearchParams) (*service.SearchPage, error) {
	jobType, from, limit, budget := p.Type, p.From, p.Limit, p.Budget
	types := []string{jobType}
	if jobType == "" {
		var err error
		if types, err = s.Types(ctx); err != nil {
			return nil, err
		}
	}
	var after *jobsPlace
	i, found := slices.BinarySearch(types, from.Type)
	if found { // else "" or a type that is gone: the next type from its start
		after = &jobsPlace{score: strconv.FormatFloat(from.Score, 'f', -1, 64), member: from.Member}
	}
	page := &service.SearchPage{Jobs: []core.Job{}}
	for _, t := range types[i:] {
		tk := s.keys.ofType(t)
		for {
			if budget == 0 || len(page.Jobs) == limit {
				page.Next = searchCursor(t, after)
				return page, nil
			}
			r, err := s.runSearch(ctx, tk, p, limit-len(page.Jobs), budget, after)
			if err != nil {
				return nil, s.fail("search", err)
			}
			page.Jobs = append(page.Jobs, r.jobs...)
			for _, pl := range r.places {
				page.Places = append(page.Places, *searchCursor(t, &pl))
			}
			budget -= r.looked
			if r.last != nil {
				after = r.last
			}
			if r.done {
				break
			}
		}
		after = nil
	}
	return page, nil
}

// searchCursor is the search cursor of a place in type t's jobs: "" and
// nil, the start of t.
func searchCursor(t string, p *jobsPlace) *core.SearchCursor {
	c := &core.SearchCursor{Type: t, Member: "0"}
	if p != nil {
		c.Score, _ = strconv.ParseFloat(p.score, 64)
		c.Member = p.member
	}
	return c
}

// searchSlice is what one lua/search.lua call found.
type searchSlice struct {
	done   bool // no job of the type after last
	looked int
	last   *jobsPlace // nil when none was looked at
	jobs   []core.Job
	places []jobsPlace // each job's
}

// runSearch runs lua/search.lua over the jobs of one type after the place
// after (nil: from the first), looking at up to budget of them.
func (s *Store) runSearch(ctx context.Context, tk typeKeys, p *service.SearchParams, limit, budget int, after *jobsPlace) (*searchSlice, error) {
	score, member := placeArgs(after)
	res, err := s.evalNoWait(ctx, searchJobs, append(tk.fixed(), tk.job(0)),
		p.Query, string(p.State), limit, p.Error, p.ErrorGroup, score, member, budget).Slice()
	if err != nil {
		return nil, err
	}
	r := &searchSlice{done: num(res[0]) == 1, looked: int(num(res[1]))}
	if m, ok := res[2].(string); ok {
		r.last = &jobsPlace{score: str(res[3]), member: m}
	}
	for k := 4; k+1 < len(res); k += 2 {
		if j, ok := decodeRow(res[k+1]); ok {
			r.jobs = append(r.jobs, j)
			r.places = append(r.places, jobsPlace{score: str(res[k]), member: strconv.FormatInt(j.ID, 10)})
		}
	}
	return r, nil
}
