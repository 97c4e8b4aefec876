package core

import (
	"encoding/json"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
)

// Broadcast is one broadcast job as its listeners receive it: which job,
// its data, and when core published it (unix ms; never before the job was
// due).
type Broadcast struct {
	ID   int64
	Type string
	Data json.RawMessage
	At   int64
	// Job is the job as core completed it, data included.
	Job *Job
}

// SubscribeBroadcast calls fn with every broadcast job of jobType ("" for
// every type) that falls due from now on: core publishes each once, with
// its data, on job.broadcast.<id>.<type>, to every subscriber. fn runs on
// the subscription's goroutine, one broadcast at a time. When it returns,
// the server knows the subscription. Delivery is at least once: a core
// that dies between publishing a broadcast and recording it publishes it
// again after a few seconds, so a listener that must act once keeps the
// ids it has seen. A listener that is away misses what was published
// meanwhile, unless it reads the durable event stream (Replay, with
// Subject JobEventsOf("broadcast", jobType)).
func (c *Client) SubscribeBroadcast(jobType string, fn func(*Broadcast)) (*nats.Subscription, error) {
	if jobType != "" {
		if err := bus.ValidToken(jobType); err != nil {
			return nil, Invalidf("type", "%q is not a job type: %v", jobType, err)
		}
	}
	return c.Subscribe(c.subj.JobEventsOf(bus.EventBroadcast, jobType), func(ev *Event) {
		if ev.Event != bus.EventBroadcast || ev.Job == nil {
			return
		}
		fn(&Broadcast{ID: ev.ID, Type: ev.Type, Data: ev.Job.Data, At: ev.At, Job: ev.Job})
	})
}
