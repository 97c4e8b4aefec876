package core

import (
	"context"

	"github.com/kuebus/kuebus/bus"
)

// Explain (DESIGN §10.1, protocol §3.41): why a job is not running.

// The reasons explain answers.
const (
	ReasonDelayed          = "delayed"           // due at Until
	ReasonWaiting          = "waiting"           // its dependencies are not done (DependsOn), DESIGN §10.2
	ReasonPaused           = "paused"            // its type is paused
	ReasonConcurrency      = "concurrency"       // its type has Active of Limit active
	ReasonGroupConcurrency = "group_concurrency" // its group has Active of Limit active
	ReasonRate             = "rate"              // its type's rate allows the next start at Until
	ReasonGroupRate        = "group_rate"        // its group's rate allows the next start at Until
	ReasonNoWorker         = "no_worker"         // no live worker asks for its type
	ReasonQueued           = "queued"            // Ahead jobs of its type run before it
	ReasonActive           = "active"            // running on Worker, leased until LeaseUntil
	// A finished job's reason is its state: complete, failed, cancelled.
)

// Explanation is explain's reply: the job's state, the reason it is not
// running (or that it is), a sentence saying so, and the numbers of that
// reason; fields of other reasons are left out.
type Explanation struct {
	ID     int64  `json:"id"`
	Type   string `json:"type"`
	State  State  `json:"state"`
	Reason string `json:"reason"`
	Detail string `json:"detail"`
	// Until: delayed, when it is due; rate and group_rate, when the rate
	// allows the next start (unix ms).
	Until int64 `json:"until,omitempty"`
	// Active and Limit: concurrency, the type's active jobs and its limit;
	// group_concurrency, the job's group's and its type's group_concurrency.
	Active int64 `json:"active,omitempty"`
	Limit  int64 `json:"limit,omitempty"`
	// Ahead: queued, how many ready jobs of the type run before it.
	Ahead *int64 `json:"ahead,omitempty"`
	// Worker and LeaseUntil: active, who holds it and until when.
	Worker     string `json:"worker,omitempty"`
	LeaseUntil int64  `json:"lease_until,omitempty"`
	// DependsOn: waiting, the jobs it waits for (DESIGN §10.2).
	DependsOn []int64 `json:"depends_on,omitempty"`
}

// Explain says why a job is not running; ErrNotFound when there is none.
func (c *Client) Explain(ctx context.Context, id int64) (*Explanation, error) {
	var reply Explanation
	if err := c.call(ctx, bus.MethodExplain, IDRequest{ID: id}, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}
