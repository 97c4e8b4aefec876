package service

import (
	"cmp"
	"context"
	"slices"

	"github.com/kuebus/kuebus/core"
)

// maxErrorGroup is the longest group the store's grouping makes (lua/
// includes/error_group.lua cuts a group to 200 bytes): a longer
// error_group in bulk could match no job, so it is refused as invalid.
const maxErrorGroup = 200

// failedErrors: the newest failed jobs of one type, grouped by error in one
// store call, largest group first. The type is required: a group is
// retried or removed with bulk, per type, and one type's failed index is
// what the limit bounds.
func (s *Service) failedErrors(ctx context.Context, req *core.FailedErrorsRequest) (*core.FailedErrorsReply, error) {
	if req.Type == "" {
		return nil, core.Invalidf("type", "missing")
	}
	if err := checkType(req.Type); err != nil {
		return nil, err
	}
	switch {
	case req.Limit < 0:
		return nil, core.Invalidf("limit", "%d is negative", req.Limit)
	case req.Limit > core.MaxFailedErrorsLimit:
		return nil, core.Invalidf("limit", "%d is over the maximum of %d", req.Limit, core.MaxFailedErrorsLimit)
	}
	reply, err := s.store.FailedErrors(ctx, req.Type, cmp.Or(req.Limit, core.FailedErrorsLimitDefault))
	if err != nil {
		return nil, err
	}
	// Stable: equal groups keep the store's order, newest failure first.
	slices.SortStableFunc(reply.Groups, func(a, b core.ErrorGroup) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(b.LastAt, a.LastAt))
	})
	return reply, nil
}
