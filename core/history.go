package core

import (
	"context"

	"github.com/kuebus/kuebus/bus"
)

// HistoryRequest is history's request: the last Minutes minutes (default
// HistoryMinutesDefault, at most MaxHistoryMinutes) of one type, or of all
// types summed when Type is "".
type HistoryRequest struct {
	Type    string `json:"type,omitempty"`
	Minutes int    `json:"minutes,omitempty"`
}

// Bounds of HistoryRequest.Minutes: a day of minutes is kept.
const (
	HistoryMinutesDefault = 60
	MaxHistoryMinutes     = 1440
)

// MinuteCounts are the jobs created, completed and failed for good in the
// minute that starts at At (unix ms).
type MinuteCounts struct {
	At        int64 `json:"at"`
	Created   int64 `json:"created"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
}

// HistoryReply is history's reply: one entry per minute, oldest first, the
// current minute last, minutes without jobs included (zeros).
type HistoryReply struct {
	Minutes []MinuteCounts `json:"minutes"`
}

// History returns the per-minute counts of the last minutes, as every core
// keeps them in Redis (a few seconds behind: cores add their counts every
// HistoryFlush).
func (c *Client) History(ctx context.Context, req HistoryRequest) (*HistoryReply, error) {
	var reply HistoryReply
	if err := c.call(ctx, bus.MethodHistory, req, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}
