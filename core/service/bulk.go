package service

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// bulk: one action on many jobs of a state, chosen by type, error text and
// age; at most limit jobs are looked at per call, and a cursor goes on.
// Each job gets the single-job method's move (the store shares the Lua
// include) and its event.

// bulkEvents is the event each action publishes per job, as the single-job
// method does: a retry is set_state to inactive, a promote is promote's.
var bulkEvents = map[core.BulkAction]string{
	core.BulkRetry:   bus.EventEnqueue,
	core.BulkPromote: bus.EventPromotion,
	core.BulkRemove:  bus.EventRemove,
	core.BulkCancel:  bus.EventCancel,
}

func (s *Service) checkBulkAction(req *core.BulkActionRequest) (*BulkQuery, error) {
	if req.Action == "" {
		return nil, core.Invalidf("action", "missing")
	}
	if _, err := core.ParseBulkAction(string(req.Action)); err != nil {
		return nil, core.Invalidf("action", "%v", err)
	}
	if req.State == "" {
		return nil, core.Invalidf("state", "missing")
	}
	if err := checkState(req.State, false); err != nil {
		return nil, err
	}
	if from := core.BulkStates(req.Action); !slices.Contains(from, req.State) {
		return nil, core.Invalidf("state", "%s is not a state %s starts from (%s)", req.State, req.Action, joinStates(from))
	}
	if err := checkType(req.Type); err != nil {
		return nil, err
	}
	if len(req.Error) > s.cfg.MaxLogLineBytes {
		return nil, core.Invalidf("error", "%d bytes is over the limit of %d", len(req.Error), s.cfg.MaxLogLineBytes)
	}
	if len(req.ErrorGroup) > maxErrorGroup {
		return nil, core.Invalidf("error_group", "%d bytes is over the limit of %d (a group is cut to that length)", len(req.ErrorGroup), maxErrorGroup)
	}
	var before int64 // unix ms, 0 for any time
	if !req.Before.IsZero() {
		before = req.Before.UnixMilli()
	}
	if before < 0 {
		return nil, core.Invalidf("before", "%d is negative (unix ms, or 0 for any time)", before)
	}
	switch {
	case req.Limit < 0:
		return nil, core.Invalidf("limit", "%d is negative", req.Limit)
	case req.Limit > core.BulkLimitMax:
		return nil, core.Invalidf("limit", "%d is over the maximum of %d", req.Limit, core.BulkLimitMax)
	}
	from, err := core.ParseIDsCursor(req.Cursor)
	if err != nil {
		return nil, core.Invalidf("cursor", "%q is not a cursor from a bulk reply", req.Cursor)
	}
	if req.Type != "" && from.Type != "" && from.Type != req.Type {
		return nil, core.Invalidf("cursor", "%q is not a cursor of type %s", req.Cursor, req.Type)
	}
	return &BulkQuery{Action: req.Action, State: req.State, Type: req.Type, Error: req.Error, ErrorGroup: req.ErrorGroup,
		Before: before, Limit: cmp.Or(req.Limit, core.BulkLimitDefault), From: from}, nil
}

func (s *Service) bulk(ctx context.Context, req *core.BulkActionRequest) (*core.BulkActionReply, error) {
	q, err := s.checkBulkAction(req)
	if err != nil {
		return nil, err
	}
	res, err := s.store.Bulk(ctx, s.now(), q)
	if err != nil {
		return nil, err
	}
	event := bulkEvents[q.Action]
	var due int64
	for i := range res.Jobs {
		j := &res.Jobs[i]
		if j.Broadcast && j.State == core.StateDelayed && (q.Action == core.BulkRetry || q.Action == core.BulkPromote) {
			// A broadcast a retry or promote made due at once instead of
			// inactive (never leased): back in the queue, as set_state
			// says it, and the promoter told.
			s.publish(bus.EventEnqueue, j, nil)
			if due == 0 || j.PromoteAt < due {
				due = j.PromoteAt
			}
			continue
		}
		s.publish(event, j, nil)
	}
	if due > 0 {
		s.announceDue(due)
	}
	reply := &core.BulkActionReply{Matched: res.Matched, Done: len(res.Jobs), More: res.Next != nil}
	if res.Next != nil {
		reply.Cursor = res.Next.String()
	}
	return reply, nil
}

func joinStates(states []core.State) string {
	names := make([]string, len(states))
	for i, st := range states {
		names[i] = string(st)
	}
	return strings.Join(names, ", ")
}
