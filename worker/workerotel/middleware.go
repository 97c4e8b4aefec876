package workerotel

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core/coreotel"
	"github.com/kuebus/kuebus/worker"
)

// ScopeName is the instrumentation scope of the spans: the tracer's name.
const ScopeName = "github.com/kuebus/kuebus/worker/workerotel"

// The attributes of a handler's span beside coreotel's (system, operation
// "process", job id and type).
const (
	// AttrAttempt is the attempt this run is: 1 for the first, the
	// attempts used before it plus one.
	AttrAttempt = attribute.Key("kuebus.job.attempt")
	// AttrOutcome is how the handler ended (worker.Outcome): complete,
	// fail, discard, retry_after.
	AttrOutcome = attribute.Key("kuebus.job.outcome")
)

// Config configures Middleware. The zero value is fine.
type Config struct {
	// TracerProvider makes the tracer. Default: otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
}

// Middleware returns a worker.Middleware that runs each handler in a span,
// kind consumer, named "kuebus.process <type>", with the job's id, type
// and attempt. Its parent is the span of the create that made the job, read
// from the job's trace (a W3C traceparent core kept from the create), so
// that producer and handler are one trace; a job without a trace gets a
// span of the handler's context (a new trace, usually). A handler that
// fails (an error other than worker.RetryAfter, or a panic, which goes on
// up) ends its span with an error status; every span has the outcome.
func Middleware(cfg Config) worker.Middleware {
	tp := cfg.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	tracer := tp.Tracer(ScopeName)
	return func(next worker.Handler) worker.Handler {
		return worker.HandlerFunc(func(ctx context.Context, job *worker.Job) (err error) {
			if job.Trace != "" {
				ctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{bus.HeaderTraceparent: job.Trace})
			}
			ctx, span := tracer.Start(ctx, "kuebus.process "+job.Type,
				trace.WithSpanKind(trace.SpanKindConsumer),
				trace.WithAttributes(
					coreotel.AttrSystem.String("kuebus"), coreotel.AttrOperation.String("process"),
					coreotel.AttrJobID.Int64(job.ID), coreotel.AttrJobType.String(job.Type),
					AttrAttempt.Int(job.Attempts)))
			returned := false
			defer func() {
				// A panic is not recovered here: the worker recovers it
				// with the stack of where it happened, which a recover and
				// panic again here would lose.
				if !returned {
					span.SetStatus(codes.Error, "handler panicked")
					span.SetAttributes(AttrOutcome.String(string(worker.OutcomeFail)))
				}
				span.End()
			}()
			err = next.Handle(ctx, job)
			returned = true
			outcome := worker.OutcomeOf(err)
			span.SetAttributes(AttrOutcome.String(string(outcome)))
			if outcome == worker.OutcomeFail || outcome == worker.OutcomeDiscard {
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
			}
			return err
		})
	}
}
