package core

import (
	"context"
	"math"

	"github.com/kuebus/kuebus/bus"
)

// HistoryRequest is history's request: the last Minutes minutes (default
// HistoryMinutesDefault, at most MaxHistoryMinutes), or with Hours the last
// Hours hours (at most MaxHistoryHours), of one type, or of all types
// summed when Type is "". Minutes and Hours do not go together.
type HistoryRequest struct {
	Type    string `json:"type,omitempty"`
	Minutes int    `json:"minutes,omitempty"`
	Hours   int    `json:"hours,omitempty"`
}

// Bounds of HistoryRequest: a day of minutes is kept, and a week of hours.
const (
	HistoryMinutesDefault = 60
	MaxHistoryMinutes     = 1440
	MaxHistoryHours       = 168
)

// WaitBounds are the upper bounds (ms, inclusive) of the buckets in which
// core counts how long started jobs waited, from ready to leased; a last
// bucket holds the longer waits. MinuteCounts.WaitP95 is the bound of the
// bucket that holds the 95th percentile.
var WaitBounds = []int64{10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000, 300_000, 900_000, 3_600_000}

// MinuteCounts are the jobs created, completed and failed for good in the
// minute (or hour) that starts at At (unix ms); the jobs started (leased)
// and the 95th percentile of how long they waited, from ready (created,
// or due) to leased, in ms (the upper bound of a WaitBounds bucket; 0
// when none started; the last bound plus one when the percentile is past
// it); and Waiting, the inactive jobs (the queue's depth) as last sampled
// in it (each core samples every HistoryFlush), summed over the types.
type MinuteCounts struct {
	At        int64 `json:"at"`
	Created   int64 `json:"created"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
	Started   int64 `json:"started"`
	WaitP95   int64 `json:"wait_p95"`
	Waiting   int64 `json:"waiting"`
	// Waits counts the started jobs per WaitBounds bucket (one more than
	// the bounds): what the store keeps, from which WaitP95 is worked out
	// once the types are summed. Not on the wire.
	Waits []int64 `json:"-"`
}

// HistoryReply is history's reply: one entry per minute (or per hour when
// asked for hours: Step says which, in ms), oldest first, the current one
// last, those without jobs included (zeros).
type HistoryReply struct {
	Step    int64          `json:"step"`
	Minutes []MinuteCounts `json:"minutes"`
}

// WaitPercentile is the upper bound (ms) of the WaitBounds bucket that
// holds the p-th percentile (0 < p ≤ 1) of waits counted per bucket; 0
// when none was counted; the last bound plus one when it is past it.
func WaitPercentile(waits []int64, p float64) int64 {
	var total int64
	for _, n := range waits {
		total += n
	}
	if total == 0 {
		return 0
	}
	need := int64(math.Ceil(float64(total) * p))
	var seen int64
	for i, n := range waits {
		seen += n
		if seen >= need {
			if i < len(WaitBounds) {
				return WaitBounds[i]
			}
			break
		}
	}
	return WaitBounds[len(WaitBounds)-1] + 1
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
