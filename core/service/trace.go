package service

import (
	"context"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// headerTrace is the traceparent header of the request ctx serves, when it
// is one a job can keep (core.CheckTraceparent), else "". A malformed one
// is ignored, not refused: W3C trace context says a receiver that cannot
// read a traceparent starts afresh, and a create must not fail over the
// tracing of a library in between. A spec's own trace (its body) is
// checked as every other field and wins over the header: it is how a
// client that batches the creates of many callers keeps each one's.
func headerTrace(ctx context.Context) string {
	tp := bus.RequestHeader(ctx).Get(bus.HeaderTraceparent)
	if tp == "" || core.CheckTraceparent(tp) != nil {
		return ""
	}
	return tp
}

// withHeaderTrace gives each spec without a trace of its own the request's
// traceparent header: for create_bulk one header applies to every job.
func withHeaderTrace(ctx context.Context, specs []core.Spec) {
	tp := headerTrace(ctx)
	if tp == "" {
		return
	}
	for i := range specs {
		if specs[i].Trace == "" {
			specs[i].Trace = tp
		}
	}
}
