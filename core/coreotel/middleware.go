package coreotel

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// ScopeName is the instrumentation scope of the spans: the tracer's name.
const ScopeName = "github.com/kuebus/kuebus/core/coreotel"

// The attributes of the spans, shared with worker/workerotel (which
// writes the same names). messaging.* are OpenTelemetry's messaging
// conventions; kuebus.* are the job's own.
const (
	AttrSystem    = attribute.Key("messaging.system")         // "kuebus"
	AttrOperation = attribute.Key("messaging.operation.name") // create, create_bulk
	AttrJobID     = attribute.Key("kuebus.job.id")
	AttrJobType   = attribute.Key("kuebus.job.type")
	AttrJobCount  = attribute.Key("kuebus.job.count") // create_bulk: how many jobs
)

// Config configures Middleware. The zero value is fine.
type Config struct {
	// TracerProvider makes the tracer. Default: otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
}

// Middleware returns a core.CallMiddleware that traces creates: for each
// create (one per call, before the client batches them) and each
// create_bulk it starts a span, kind producer, a child of the caller's
// span, named "kuebus.create <type>" or "kuebus.create_bulk"; it sends the
// span's context as the traceparent (and tracestate) headers of the call;
// it adds the job's id once core answers, and records an error status when
// the call fails. Core keeps the traceparent as each job's trace, and the
// worker's span (worker/workerotel) is that span's child.
//
// The trace context is always W3C's (propagation.TraceContext), whatever
// the global propagator: it is the wire's format (docs/protocol.md).
// Other calls pass through untraced.
func Middleware(cfg Config) core.CallMiddleware {
	tp := cfg.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	tracer := tp.Tracer(ScopeName)
	return func(next core.CallFunc) core.CallFunc {
		return func(ctx context.Context, method string, req, reply any) error {
			name, attrs := spanOf(method, req)
			if name == "" {
				return next(ctx, method, req, reply)
			}
			ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...))
			defer span.End()
			carrier := propagation.MapCarrier{}
			propagation.TraceContext{}.Inject(ctx, carrier)
			for _, key := range carrier.Keys() {
				ctx = bus.WithHeader(ctx, key, carrier.Get(key))
			}
			err := next(ctx, method, req, reply)
			if err != nil {
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
				return err
			}
			if job, ok := reply.(*core.Job); ok {
				span.SetAttributes(AttrJobID.Int64(job.ID))
			}
			return nil
		}
	}
}

// spanOf names the span of a call and its first attributes; "" for a
// call that is not traced.
func spanOf(method string, req any) (string, []attribute.KeyValue) {
	attrs := []attribute.KeyValue{AttrSystem.String("kuebus"), AttrOperation.String(method)}
	switch r := req.(type) {
	case core.Spec:
		if method == bus.MethodCreate {
			return "kuebus.create " + r.Type, append(attrs, AttrJobType.String(r.Type))
		}
	case core.BulkRequest:
		if method == bus.MethodCreateBulk {
			return "kuebus.create_bulk", append(attrs, AttrJobCount.Int(len(r.Jobs)))
		}
	}
	return "", nil
}
