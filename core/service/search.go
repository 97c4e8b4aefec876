package service

import (
	"cmp"
	"context"

	"github.com/kuebus/kuebus/core"
)

// search: jobs by text, in bounded steps. Each call looks at no more than
// core.SearchBudget jobs, so a search of a million jobs is a thousand
// calls, each as cheap as the first, never one call that holds Redis.

// checkSearch checks a search request and returns its cursor and limit.
func checkSearch(req *core.SearchRequest) (core.SearchCursor, int, error) {
	switch {
	case req.Q == "" && req.Error == "" && req.ErrorGroup == "":
		return core.SearchCursor{}, 0, core.Invalidf("q", "missing: the text to look for (or error, or error_group)")
	case len(req.Q) > core.MaxSearchQuery:
		return core.SearchCursor{}, 0, core.Invalidf("q", "%d bytes is longer than %d", len(req.Q), core.MaxSearchQuery)
	case len(req.Error) > core.MaxSearchQuery:
		return core.SearchCursor{}, 0, core.Invalidf("error", "%d bytes is longer than %d", len(req.Error), core.MaxSearchQuery)
	case len(req.ErrorGroup) > maxErrorGroup:
		return core.SearchCursor{}, 0, core.Invalidf("error_group", "%d bytes is over the limit of %d (a group is cut to that length)", len(req.ErrorGroup), maxErrorGroup)
	case req.Limit < 0 || req.Limit > core.MaxSearchLimit:
		return core.SearchCursor{}, 0, core.Invalidf("limit", "%d is outside 0..%d (0 means %d)", req.Limit, core.MaxSearchLimit, core.SearchLimitDefault)
	}
	if err := checkType(req.Type); err != nil {
		return core.SearchCursor{}, 0, err
	}
	if err := checkState(req.State, true); err != nil {
		return core.SearchCursor{}, 0, err
	}
	from, err := core.ParseSearchCursor(req.Cursor)
	if err != nil {
		return core.SearchCursor{}, 0, err
	}
	if req.Type != "" && from.Type != "" && from.Type != req.Type {
		return core.SearchCursor{}, 0, core.Invalidf("cursor", "%q is a cursor of type %s, not of %s", req.Cursor, from.Type, req.Type)
	}
	return from, cmp.Or(req.Limit, core.SearchLimitDefault), nil
}

func (s *Service) search(ctx context.Context, req *core.SearchRequest) (*core.SearchReply, error) {
	from, limit, err := checkSearch(req)
	if err != nil {
		return nil, err
	}
	page, err := s.store.Search(ctx, &SearchParams{Query: req.Q, Error: req.Error, ErrorGroup: req.ErrorGroup, Type: req.Type, State: req.State, From: from, Limit: limit, Budget: core.SearchBudget})
	if err != nil {
		return nil, err
	}
	reply := &core.SearchReply{Jobs: fitJobs(page.Jobs, int(s.nc.MaxPayload())-replyHeadroom)}
	next := page.Next
	if n := len(reply.Jobs); n < len(page.Jobs) {
		// Cut to fit one message: go on after the last job sent.
		next = &page.Places[n-1]
	}
	if next != nil {
		reply.Cursor = next.String()
	}
	return reply, nil
}
