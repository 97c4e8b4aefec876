package core

import (
	"context"

	"github.com/kuebus/kuebus/bus"
)

// FailedErrorsRequest is failed_errors' request: the failed jobs of Type,
// grouped by error. Only the newest Limit failures are read (default
// FailedErrorsLimitDefault, at most MaxFailedErrorsLimit): the bound on the
// work of one call, which reads them in one Redis script.
type FailedErrorsRequest struct {
	Type  string `json:"type"`
	Limit int    `json:"limit,omitempty"`
}

// Bounds of FailedErrorsRequest.Limit: failed jobs read.
const (
	FailedErrorsLimitDefault = 1000
	MaxFailedErrorsLimit     = 10_000
)

// ErrorGroup is the failed jobs whose last error has one normalised message
// (Group; docs/triage.md gives the rule: numbers, ids, addresses and quoted
// values taken out). Sample is the error of the group's newest job as it
// was (its first 1024 bytes), JobID that job. FirstAt and LastAt are the
// oldest and newest failed_at among the group's jobs that were read (unix
// ms). Group "" is the jobs without an error text.
type ErrorGroup struct {
	Group   string `json:"group"`
	Sample  string `json:"sample"`
	Count   int    `json:"count"`
	FirstAt int64  `json:"first_at"`
	LastAt  int64  `json:"last_at"`
	JobID   int64  `json:"job_id"`
}

// FailedErrorsReply is failed_errors' reply: how many jobs of the type are
// failed, how many of them (the newest) were read, and their groups, the
// largest first (ties: the most recent last failure first). When Read is
// less than Failed, the counts are of the newest Read failures only.
type FailedErrorsReply struct {
	Failed int64        `json:"failed"`
	Read   int          `json:"read"`
	Groups []ErrorGroup `json:"groups"`
}

// FailedErrors groups the newest failed jobs of a type by their error, for
// triage: "412 × dial tcp <addr>: connection refused". A group's jobs are
// retried or removed with Bulk and BulkActionRequest.ErrorGroup.
func (c *Client) FailedErrors(ctx context.Context, req FailedErrorsRequest) (*FailedErrorsReply, error) {
	var reply FailedErrorsReply
	if err := c.call(ctx, bus.MethodFailedErrors, req, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}
