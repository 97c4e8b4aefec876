package core

import (
	"context"
	"time"

	"github.com/kuebus/kuebus/bus"
)

// The calls of workers (lease, then the lease holder's complete, fail,
// touch, release, rejoin and progress, or batch for many at once) and the
// promoter's rescue. A lease holder's op goes on the wire as given: leave
// op.Op empty, each method implies its own (only batch's ops name theirs),
// and leave out the fields the method does not take, which core refuses by
// name. A stale lease token is ErrConflict, and changes nothing.

// Lease leases up to req.Max ready jobs of req.Types (by priority, then
// first in, first out), each with its lease token in Job.Lease. With
// req.Wait > 0 and nothing ready, core holds the call up to Wait ms: give
// the call that long plus LeaseReplyMargin. No job ready is no error: an
// empty slice.
func (c *Client) Lease(ctx context.Context, req LeaseRequest) ([]Job, error) {
	// Room for the jobs asked for (up to leasePresize): the decoder then
	// fills the slice instead of growing it 1, 2, 4, ... and copying each
	// Job every time (BenchmarkLeaseReplyDecode: -40% bytes, -18% time for
	// 32 jobs).
	reply := JobsReply{Jobs: make([]Job, 0, min(max(req.Max, 1), leasePresize))}
	if err := c.call(ctx, bus.MethodLease, req, &reply); err != nil {
		return nil, err
	}
	return reply.Jobs, nil
}

// leasePresize bounds the room Lease makes for a reply before it arrives,
// so that a long wait for a large max that brings one job costs little.
const leasePresize = 64

// Complete completes a leased job, with op.Result as its result. Sent
// again with the same lease token it changes nothing and succeeds.
func (c *Client) Complete(ctx context.Context, op LeaseOp) error {
	return c.call(ctx, bus.MethodComplete, op, nil)
}

// Fail fails a leased job's attempt with op.Error: the job retries (after
// op.Delay ms when set, else after its backoff) while attempts remain, else
// it fails, as it does at once with op.Final. It returns the job as it is
// now.
func (c *Client) Fail(ctx context.Context, op LeaseOp) (*Job, error) {
	var job Job
	if err := c.call(ctx, bus.MethodFail, op, &job); err != nil {
		return nil, err
	}
	return &job, nil
}

// Touch extends a job's lease by its ttl (or by the ttl its lease was
// asked with) from now, and returns when the lease now runs out.
func (c *Client) Touch(ctx context.Context, op LeaseOp) (leaseUntil time.Time, err error) {
	var reply TouchReply
	if err := c.call(ctx, bus.MethodTouch, op, &reply); err != nil {
		return time.Time{}, err
	}
	return unixMs(reply.LeaseUntil), nil
}

// Release gives a leased job back to inactive, using no attempt.
func (c *Client) Release(ctx context.Context, op LeaseOp) error {
	return c.call(ctx, bus.MethodRelease, op, nil)
}

// Rejoin puts a leased job back to delayed for op.Delay ms, using no
// attempt: "not now, later".
func (c *Client) Rejoin(ctx context.Context, op LeaseOp) error {
	return c.call(ctx, bus.MethodRejoin, op, nil)
}

// Progress sets a leased job's progress to op.Complete of op.Total (shown
// as 0–100).
func (c *Client) Progress(ctx context.Context, op LeaseOp) error {
	return c.call(ctx, bus.MethodProgress, op, nil)
}

// Batch applies many lease holders' operations in one call, each naming its
// own (LeaseOp.Op), at most MaxBatch. Each succeeds or fails on its own: the
// results, in the order of ops, carry each one's error; the error returned
// is the call's.
func (c *Client) Batch(ctx context.Context, ops []LeaseOp) ([]OpResult, error) {
	var reply BatchReply
	if err := c.call(ctx, bus.MethodBatch, BatchRequest{Ops: ops}, &reply); err != nil {
		return nil, err
	}
	return reply.Results, nil
}

// BatchLease applies ops as Batch does (at least one) and then, in the
// same call, leases up to lease.Max ready jobs of lease.Types, as a Lease
// that does not wait: the ops' results, and the jobs leased, each with its
// lease token.
//
// Experimental, and not used by the Go worker: see the BatchLease type.
func (c *Client) BatchLease(ctx context.Context, ops []LeaseOp, lease BatchLease) ([]OpResult, []Job, error) {
	var reply BatchReply
	if err := c.call(ctx, bus.MethodBatch, BatchRequest{Ops: ops, Lease: &lease}, &reply); err != nil {
		return nil, nil, err
	}
	return reply.Results, reply.Jobs, nil
}

// Clean removes finished jobs that their retention (remove_on_complete,
// remove_on_fail, or their type's default) no longer keeps, at most limit
// per type and state (0: CleanLimitDefault): the promoter leader's call.
// Core publishes queue.cleaned for each type and state it removed jobs of.
func (c *Client) Clean(ctx context.Context, limit int) (*CleanReply, error) {
	var reply CleanReply
	if err := c.call(ctx, bus.MethodClean, LimitRequest{Limit: limit}, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}

// Rescue sends jobs whose lease ran out back to inactive: the promoter's
// call. req may be nil.
func (c *Client) Rescue(ctx context.Context, req *RescueRequest) (*MoveReply, error) {
	if req == nil {
		req = &RescueRequest{}
	}
	var reply MoveReply
	if err := c.call(ctx, bus.MethodRescue, req, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}
