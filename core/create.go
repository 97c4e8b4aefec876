package core

import (
	"context"
	"errors"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/batch"
)

// Creates of concurrent goroutines of one process share one message to
// core: what is created while a message is on its way goes in the next
// one, as a create_bulk. A lone create is sent at once, as a create, and
// waits for nothing. Sixteen producers on one client then cost core a few
// requests, replies and JSON documents instead of sixteen.
//
// Creates pass through the client's middleware one by one, with their
// caller's context, and are joined below it (sendCall), so a middleware
// sees each create and no batch.
//
// Creates with a unique key are not batched (sendCall sends them alone):
// create_bulk answers without data, and such a create may answer with
// another job, whose data only a create's reply carries.
//
// Each create keeps its own outcome. create_bulk is all or none, so when
// core refuses a batch as invalid (one spec is bad, or the batch is over
// core's limits), each of its specs is sent again alone and gets its own
// answer. A failure of the transport or of core (unavailable, a timeout)
// fails every create of the batch, as it would have failed each alone.

// createOutcome is one create's outcome in a batch.
type createOutcome struct {
	job Job
	err error
}

const (
	// createSenders is how many create messages may be on their way at
	// once: two, so that one batch gathers while the other travels.
	createSenders = 2
	// createMaxSpecs bounds the specs of one message: core's MaxBulk
	// default.
	createMaxSpecs = 1000
	// createSpecOverhead is what a spec costs on the wire beside its data.
	createSpecOverhead = 256
)

// newCreateBatcher batches creates for flush (c.sendCreates), with up to
// senders messages on their way at once.
func (c *Client) newCreateBatcher(senders int, flush func(context.Context, []Spec) ([]createOutcome, error)) *batch.Joiner[Spec, createOutcome] {
	// Half the server's limit leaves room for the fields beside data and
	// for headers; a spec larger than that alone goes alone.
	maxSize := int(c.nc.MaxPayload() / 2)
	if maxSize <= 0 {
		maxSize = 512 << 10
	}
	return batch.New(batch.Config[Spec, createOutcome]{
		Senders:  senders,
		MaxItems: createMaxSpecs,
		Size:     func(sp Spec) int { return len(sp.Data) + len(sp.UniqueKey) + createSpecOverhead },
		MaxSize:  maxSize,
		Stopped:  bus.Errorf(bus.CodeUnavailable, "client is closed"),
		Flush:    flush,
		// A lone create goes from its caller's goroutine, under its
		// caller's context, as if there were no batcher: no hand-off to
		// a sender goroutine and back (docs/benchmarks-log.md, issue 12
		// step 4).
		SendsAlone: true,
	})
}

// createBatched hands one create to the batcher and waits for its job,
// which it puts in reply (a *Job). The message leaves without the
// caller's context, so a traceparent header in it (bus.WithHeader, from a
// tracing middleware) goes into the spec's trace instead, unless the spec
// has its own: each create of a batch keeps its own trace.
func (c *Client) createBatched(ctx context.Context, sp Spec, reply any) error {
	if tp := bus.OutgoingHeader(ctx).Get(bus.HeaderTraceparent); sp.Trace == "" && CheckTraceparent(tp) == nil {
		sp.Trace = tp
	}
	out, err := c.creates.Do(ctx, sp)
	if err != nil {
		return err
	}
	if out[0].err != nil {
		return out[0].err
	}
	if job, ok := reply.(*Job); ok {
		*job = out[0].job
	}
	return nil
}

// sendCreates sends one batch of creates, under ctx: a lone caller's own,
// or, for a batch of several callers, which outlives each of them,
// context.Background() and so the client's timeout.
func (c *Client) sendCreates(ctx context.Context, specs []Spec) ([]createOutcome, error) {
	if len(specs) == 1 {
		var job Job
		err := c.sendNow(ctx, bus.MethodCreate, specs[0], &job)
		if err != nil && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrConflict) {
			return nil, err
		}
		return []createOutcome{{job, err}}, nil
	}
	reply := BulkReply{Jobs: make([]Job, 0, len(specs))} // filled, not grown (Lease)
	err := c.sendNow(ctx, bus.MethodCreateBulk, BulkRequest{Jobs: specs}, &reply)
	switch {
	case errors.Is(err, ErrInvalid):
		// One spec (or the batch's size) was refused: each alone gets its
		// own answer.
		out := make([]createOutcome, len(specs))
		for i, sp := range specs {
			var job Job
			out[i].err = c.sendNow(ctx, bus.MethodCreate, sp, &job)
			out[i].job = job
		}
		return out, nil
	case err != nil:
		return nil, err
	}
	// create_bulk answers without the data it was sent; a spec without a
	// unique key is stored as sent, so its data is the spec's.
	out := make([]createOutcome, len(reply.Jobs))
	for i := range reply.Jobs {
		out[i].job = reply.Jobs[i]
		out[i].job.Data = specs[i].Data
	}
	return out, nil
}
