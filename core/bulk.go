package core

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// BulkAction is what bulk does to each job it selects.
type BulkAction string

// The actions of bulk, and the states each may start from (BulkStates).
const (
	// BulkRetry runs failed or cancelled jobs again: set_state to inactive.
	BulkRetry BulkAction = "retry"
	// BulkPromote makes delayed jobs ready now, as if they were due.
	BulkPromote BulkAction = "promote"
	// BulkRemove deletes jobs of any state, as remove.
	BulkRemove BulkAction = "remove"
	// BulkCancel cancels delayed, inactive, active or waiting jobs, as cancel.
	BulkCancel BulkAction = "cancel"
)

// BulkActions lists the actions.
var BulkActions = []BulkAction{BulkRetry, BulkPromote, BulkRemove, BulkCancel}

// BulkStates says from which states an action may start. A retry of a
// cancelled job is allowed: a cancel by mistake is undone the way a failed
// job is re-run. A complete job is not retried: that is a re-run by hand
// (set_state), not a retry.
func BulkStates(a BulkAction) []State {
	switch a {
	case BulkRetry:
		return []State{StateFailed, StateCancelled}
	case BulkPromote:
		return []State{StateDelayed}
	case BulkRemove:
		return States
	case BulkCancel:
		return []State{StateDelayed, StateInactive, StateActive, StateWaiting}
	}
	return nil
}

// ParseBulkAction checks an action name.
func ParseBulkAction(s string) (BulkAction, error) {
	if slices.Contains(BulkActions, BulkAction(s)) {
		return BulkAction(s), nil
	}
	names := make([]string, len(BulkActions))
	for i, a := range BulkActions {
		names[i] = string(a)
	}
	return "", fmt.Errorf("%q is not an action (%s)", s, strings.Join(names, ", "))
}

// Bounds of bulk's limit: jobs per call.
const (
	BulkLimitDefault = 1000
	BulkLimitMax     = 10_000
)

// BulkActionRequest is bulk's request: apply Action to the jobs in State (of
// Type, or of every type), whose error contains Error (when set), whose
// error's group is ErrorGroup (when set: the normalised message
// failed_errors gives, compared whole; docs/triage.md) and that were last
// updated before Before (when set; unix ms on the wire, units.go), looking
// at most at
// Limit jobs (default BulkLimitDefault, at most BulkLimitMax). Cursor,
// from the previous reply, goes on where it stopped.
type BulkActionRequest struct {
	Action BulkAction `json:"action"`
	State  State      `json:"state"`
	Type   string     `json:"type,omitempty"`
	Error  string     `json:"error,omitempty"`
	// ErrorGroup is compared with the normalised error, whole.
	ErrorGroup string    `json:"error_group,omitempty"`
	Before     time.Time `json:"before,omitzero"`
	Limit      int       `json:"limit,omitempty"`
	Cursor     string    `json:"cursor,omitempty"`
}

// BulkActionReply is bulk's reply: how many jobs this call found in the state
// that passed the filters, how many it acted on, and whether there may be
// more (then send Cursor back for the next call).
type BulkActionReply struct {
	Matched int    `json:"matched"`
	Done    int    `json:"done"`
	More    bool   `json:"more"`
	Cursor  string `json:"cursor,omitempty"`
}
