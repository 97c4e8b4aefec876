package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/kuebus/kuebus/bus"
)

// Dependencies (DESIGN §10.2): a job may wait for other jobs. It is created
// in state waiting, never leased while it waits, and moves to inactive
// (delayed when it has a delay) once every job it depends on completed.
// A dependency that fails for good, is cancelled or is removed applies the
// dependent's OnDependencyFailure rule.

// MaxDependencies bounds a spec's DependsOn, and MaxFlowJobs a flow.
const (
	MaxDependencies = 1000
	MaxFlowJobs     = 1000
	MaxRefLen       = 128
)

// DepPolicy is what becomes of a waiting job when one of its dependencies
// fails for good, is cancelled or is removed.
type DepPolicy string

// The dependency failure rules.
const (
	// DepFail (the default) fails the dependent for good; its error names
	// the dependency. Its own dependents then apply their rules.
	DepFail DepPolicy = "fail"
	// DepIgnore counts the dependency as done.
	DepIgnore DepPolicy = "ignore"
	// DepCancel cancels the dependent; its own dependents then apply their
	// rules, as for a cancelled dependency.
	DepCancel DepPolicy = "cancel"
)

func (p DepPolicy) check() error {
	switch p {
	case "", DepFail, DepIgnore, DepCancel:
		return nil
	}
	return fmt.Errorf("%q is not a rule (fail, ignore, cancel)", string(p))
}

// checkDeps checks DependsOn and OnDependencyFailure.
func (s *Spec) checkDeps() error {
	if err := s.OnDependencyFailure.check(); err != nil {
		return Invalidf("on_dependency_failure", "%v", err)
	}
	if n := len(s.DependsOn) + len(s.DependsOnRefs); n > MaxDependencies {
		return Invalidf("depends_on", "%d dependencies is over the limit of %d", n, MaxDependencies)
	}
	seen := make(map[int64]bool, len(s.DependsOn))
	for i, id := range s.DependsOn {
		if id <= 0 {
			return Invalidf("depends_on", "[%d]: %d is not a job id", i, id)
		}
		if seen[id] {
			return Invalidf("depends_on", "[%d]: job %d is given twice", i, id)
		}
		seen[id] = true
	}
	return nil
}

// Waits says whether a spec depends on any job.
func (s *Spec) Waits() bool { return len(s.DependsOn) > 0 || len(s.DependsOnRefs) > 0 }

// DepJob is one job of a dependencies or dependents reply.
type DepJob struct {
	ID     int64           `json:"id"`
	Type   string          `json:"type"`
	State  State           `json:"state"`
	Result json.RawMessage `json:"result,omitempty"`
	// Error is a failed dependency's error; Gone says the job was removed
	// (then only ID is known).
	Error string `json:"error,omitempty"`
	Gone  bool   `json:"gone,omitempty"`
}

// DepsReply is dependencies' and dependents' reply.
type DepsReply struct {
	Jobs []DepJob `json:"jobs"`
}

// FlowRequest is create_flow's request: jobs that may depend on each other
// by ref, and on existing jobs by id.
type FlowRequest struct {
	Jobs []FlowJob `json:"jobs"`
}

// FlowJob is one job of a flow: its ref (local to the call), its spec, and
// what it depends on, each a ref of the flow (a JSON string) or the id of
// an existing job (a JSON number). The spec may carry depends_on ids too.
type FlowJob struct {
	Ref       string   `json:"ref"`
	Spec      Spec     `json:"spec"`
	DependsOn []DepRef `json:"depends_on,omitempty"`
}

// DepRef is a dependency in a flow: Ref, or else ID.
type DepRef struct {
	Ref string
	ID  int64
}

// Ref names a job of the same flow; ID an existing job.
func Ref(ref string) DepRef { return DepRef{Ref: ref} }

// ID names an existing job as a dependency in a flow.
func ID(id int64) DepRef { return DepRef{ID: id} }

// MarshalJSON writes a ref as a string, an id as a number.
func (d DepRef) MarshalJSON() ([]byte, error) {
	if d.Ref != "" {
		return json.Marshal(d.Ref)
	}
	return []byte(strconv.FormatInt(d.ID, 10)), nil
}

// UnmarshalJSON reads a string as a ref, a number as an id.
func (d *DepRef) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &d.Ref)
	}
	return json.Unmarshal(b, &d.ID)
}

// FlowReply is create_flow's reply: per job of the request, in its order,
// its ref, id and state.
type FlowReply struct {
	Jobs []FlowCreated `json:"jobs"`
}

// FlowCreated is one job a flow stored.
type FlowCreated struct {
	Ref   string `json:"ref"`
	ID    int64  `json:"id"`
	State State  `json:"state"`
}

// CreateFlow creates the jobs of a flow in one call, all or none: each
// FlowJob may depend on others of the flow by Ref and on existing jobs by
// ID. The reply lists, in the flow's order, each job's ref, id and state.
func (c *Client) CreateFlow(ctx context.Context, jobs ...FlowJob) (*FlowReply, error) {
	var reply FlowReply
	if err := c.call(ctx, bus.MethodCreateFlow, FlowRequest{Jobs: jobs}, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}

// IDOf returns the id the flow gave the job of ref, 0 when there is none.
func (r *FlowReply) IDOf(ref string) int64 {
	for _, j := range r.Jobs {
		if j.Ref == ref {
			return j.ID
		}
	}
	return 0
}

// Dependencies lists the jobs id depends on, in the order it named them,
// each with its state and, once complete, its result.
func (c *Client) Dependencies(ctx context.Context, id int64) ([]DepJob, error) {
	var reply DepsReply
	return reply.Jobs, c.call(ctx, bus.MethodDependencies, IDRequest{ID: id}, &reply)
}

// Dependents lists the jobs that wait (or waited) for id, by id.
func (c *Client) Dependents(ctx context.Context, id int64) ([]DepJob, error) {
	var reply DepsReply
	return reply.Jobs, c.call(ctx, bus.MethodDependents, IDRequest{ID: id}, &reply)
}
