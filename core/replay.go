package core

import (
	"context"
	"fmt"
	"time"

	"github.com/kuebus/kuebus/bus"
)

// ErrNotDurable is Replay's error when the deployment keeps no events:
// events.durable is off, or its NATS has no JetStream.
var ErrNotDurable = bus.ErrNotDurable

// ReplayOptions say where Replay starts and which events it reads. Since
// and FromSeq exclude each other; with neither it starts at the oldest
// event the stream keeps.
type ReplayOptions struct {
	// Since starts at the first event stored at or after this time.
	Since time.Time
	// FromSeq starts at this stream sequence: a consumer that stopped
	// after the event with Seq s resumes with s+1. When the stream's
	// limits dropped events meanwhile, the first event's Seq is larger.
	FromSeq uint64
	// Subject narrows the replay to a pattern from Subjects() (JobEventsOf,
	// AllQueueEvents...). Default: every job and queue event.
	Subject string
}

// Replay calls fn with every event the durable event stream keeps from
// the start point, in the order they were stored, each with its Seq, and
// then with every new event as it is stored, until ctx ends (it returns
// nil). fn runs on Replay's goroutine, one event at a time; bodies that do
// not decode are skipped. Without durable events it returns an error
// matching ErrNotDurable. Unlike Subscribe, nothing published while the
// consumer was away is missed, within the stream's limits (events.max_age,
// events.max_bytes).
func (c *Client) Replay(ctx context.Context, opts *ReplayOptions, fn func(*Event)) error {
	if opts == nil {
		opts = &ReplayOptions{}
	}
	ro := bus.ReplayOptions{Since: opts.Since, FromSeq: opts.FromSeq}
	if opts.Subject != "" {
		ro.Subjects = []string{opts.Subject}
	}
	err := bus.ReplayEvents(ctx, c.nc, c.subj, ro, func(se bus.StoredEvent) error {
		var ev Event
		if bus.DecodeReply(se.Data, &ev) == nil {
			ev.Seq = se.Seq
			fn(&ev)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("core: replay: %w", err)
	}
	return nil
}
