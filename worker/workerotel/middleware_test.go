package workerotel_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/coreotel"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/worker"
	"github.com/kuebus/kuebus/worker/workerotel"
)

// traced is a queue of its own with a producer and a worker that trace
// into one recorder.
type traced struct {
	core     *nodetest.Core
	rec      *tracetest.SpanRecorder
	tp       *sdktrace.TracerProvider
	producer *core.Client
}

func newTraced(t *testing.T) *traced {
	t.Helper()
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	c := nodetest.NewCore(t, service.Config{})
	producer, err := core.NewClient(bustest.Connect(t, c.NATS.ClientURL()), &core.ClientOptions{
		Middleware: []core.CallMiddleware{coreotel.Middleware(coreotel.Config{TracerProvider: tp})},
	})
	require.NoError(t, err)
	t.Cleanup(producer.Close)
	return &traced{core: c, rec: rec, tp: tp, producer: producer}
}

// runWorker runs a worker with the tracing middleware and fn for jobType
// until the test ends.
func (q *traced) runWorker(t *testing.T, jobType string, fn worker.HandlerFunc) {
	t.Helper()
	w, err := worker.New(worker.Config{
		Conn:       bustest.Connect(t, q.core.NATS.ClientURL()),
		Middleware: []worker.Middleware{workerotel.Middleware(workerotel.Config{TracerProvider: q.tp})},
	})
	require.NoError(t, err)
	w.Handle(jobType, fn)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = w.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// await waits until job id has finished: its handler's span has ended by
// then (the worker acknowledges after the middleware returns).
func (q *traced) await(t *testing.T, id int64) *core.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	job, err := q.core.Client.Await(ctx, id)
	require.NoError(t, err)
	return job
}

// ended returns the ended spans by name.
func (q *traced) ended() map[string][]sdktrace.ReadOnlySpan {
	out := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range q.rec.Ended() {
		out[s.Name()] = append(out[s.Name()], s)
	}
	return out
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		out[kv.Key] = kv.Value
	}
	return out
}

// TestTheHandlersSpanIsAChildOfTheCreate: a job created inside a span is
// run by a worker whose handler's span is in the same trace, a child of
// the producer's create span, which is a child of the caller's span; the
// handler's context carries it, and it has the job's id, type and attempt.
func TestTheHandlersSpanIsAChildOfTheCreate(t *testing.T) {
	q := newTraced(t)
	inHandler := make(chan trace.SpanContext, 1)
	q.runWorker(t, "mail", func(ctx context.Context, job *worker.Job) error {
		inHandler <- trace.SpanContextFromContext(ctx)
		return nil
	})

	ctx, request := q.tp.Tracer("test").Start(context.Background(), "request")
	job, err := q.producer.Create(ctx, "mail", "hi", nil)
	request.End()
	require.NoError(t, err)
	require.NotEmpty(t, job.Trace, "core kept the create's traceparent")
	require.Equal(t, core.StateComplete, q.await(t, job.ID).State)

	spans := q.ended()
	require.Len(t, spans["kuebus.create mail"], 1)
	require.Len(t, spans["kuebus.process mail"], 1)
	create, process := spans["kuebus.create mail"][0], spans["kuebus.process mail"][0]
	require.Equal(t, request.SpanContext(), create.Parent(), "the create span is the caller's child")
	require.Equal(t, trace.SpanKindProducer, create.SpanKind())
	require.Equal(t, job.ID, attrs(create)[coreotel.AttrJobID].AsInt64())

	require.Equal(t, request.SpanContext().TraceID(), process.SpanContext().TraceID(), "one trace")
	require.Equal(t, create.SpanContext().SpanID(), process.Parent().SpanID(), "the handler's span is the create's child")
	require.True(t, process.Parent().IsRemote())
	require.Equal(t, trace.SpanKindConsumer, process.SpanKind())
	require.Equal(t, process.SpanContext(), <-inHandler, "the handler runs in its span")
	a := attrs(process)
	require.Equal(t, job.ID, a[coreotel.AttrJobID].AsInt64())
	require.Equal(t, "mail", a[coreotel.AttrJobType].AsString())
	require.Equal(t, int64(1), a[workerotel.AttrAttempt].AsInt64())
	require.Equal(t, "complete", a[workerotel.AttrOutcome].AsString())
	require.Equal(t, codes.Unset, process.Status().Code)
}

// TestEachFailedAttemptIsAnErrorSpanOfTheSameTrace: a handler that fails
// twice, then succeeds, makes three spans under the one create, attempts
// 1, 2 and 3, the first two with an error status.
func TestEachFailedAttemptIsAnErrorSpanOfTheSameTrace(t *testing.T) {
	q := newTraced(t)
	q.runWorker(t, "flaky", func(ctx context.Context, job *worker.Job) error {
		if job.Attempts < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	ctx, request := q.tp.Tracer("test").Start(context.Background(), "request")
	job, err := q.producer.Create(ctx, "flaky", nil, &core.CreateOpts{MaxAttempts: 3})
	request.End()
	require.NoError(t, err)
	require.Equal(t, core.StateComplete, q.await(t, job.ID).State)

	spans := q.ended()
	create := spans["kuebus.create flaky"][0]
	runs := spans["kuebus.process flaky"]
	require.Len(t, runs, 3)
	for i, run := range runs {
		require.Equal(t, create.SpanContext().SpanID(), run.Parent().SpanID(), "attempt %d", i+1)
		require.Equal(t, create.SpanContext().TraceID(), run.SpanContext().TraceID(), "attempt %d", i+1)
		require.Equal(t, int64(i+1), attrs(run)[workerotel.AttrAttempt].AsInt64())
	}
	for _, run := range runs[:2] {
		require.Equal(t, codes.Error, run.Status().Code)
		require.Equal(t, "not yet", run.Status().Description)
		require.Equal(t, "fail", attrs(run)[workerotel.AttrOutcome].AsString())
	}
	require.Equal(t, codes.Unset, runs[2].Status().Code)
}

// TestAJobWithoutATraceStartsOne: a job created without tracing (no
// traceparent) runs in a span of a trace of its own.
func TestAJobWithoutATraceStartsOne(t *testing.T) {
	q := newTraced(t)
	q.runWorker(t, "plain", func(context.Context, *worker.Job) error { return nil })
	job, err := q.core.Client.Create(context.Background(), "plain", nil, nil)
	require.NoError(t, err)
	require.Empty(t, job.Trace)
	q.await(t, job.ID)
	runs := q.ended()["kuebus.process plain"]
	require.Len(t, runs, 1)
	require.False(t, runs[0].Parent().IsValid(), "a root span")
	require.True(t, runs[0].SpanContext().IsValid())
}
