package coreotel_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/coreotel"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestCreatesAreTracedAndOtherCallsAreNot: create_bulk is one producer
// span whose traceparent every job of the call keeps; a refused create is
// a span with an error status and stores nothing; get makes no span.
func TestCreatesAreTracedAndOtherCallsAreNot(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	c := nodetest.NewCore(t, service.Config{})
	client, err := core.NewClient(bustest.Connect(t, c.NATS.ClientURL()), &core.ClientOptions{
		Middleware: []core.CallMiddleware{coreotel.Middleware(coreotel.Config{TracerProvider: tp})},
	})
	require.NoError(t, err)
	t.Cleanup(client.Close)
	ctx := context.Background()

	jobs, err := client.CreateBulk(ctx, []core.Spec{{Type: "a"}, {Type: "b"}})
	require.NoError(t, err)
	_, err = client.Create(ctx, "not a type", nil, nil)
	require.ErrorIs(t, err, core.ErrInvalid)
	_, err = client.Get(ctx, jobs[0].ID)
	require.NoError(t, err)

	spans := rec.Ended()
	require.Len(t, spans, 2, "create_bulk and the refused create; get is not traced")
	bulk, refused := spans[0], spans[1]
	require.Equal(t, "kuebus.create_bulk", bulk.Name())
	require.Equal(t, trace.SpanKindProducer, bulk.SpanKind())
	for _, j := range jobs {
		got, err := c.Client.Get(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, "00-"+bulk.SpanContext().TraceID().String()+"-"+bulk.SpanContext().SpanID().String()+"-01", got.Trace,
			"job %d keeps the create_bulk span's context", j.ID)
	}
	require.Equal(t, "kuebus.create not a type", refused.Name())
	require.Equal(t, codes.Error, refused.Status().Code)
	n, err := c.Client.Count(ctx, "", "")
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
}
