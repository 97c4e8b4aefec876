package workerotel_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/coreotel"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/worker"
	"github.com/kuebus/kuebus/worker/workerotel"
)

// One trace from create to handler: the producer's client traces its
// creates (coreotel), the worker its handlers (workerotel), and the
// handler's span is a child of the create's. Here the spans go to a
// recorder; an application gives its own TracerProvider (an OTLP
// exporter's), or none to use otel's global one.
func ExampleMiddleware() {
	natsURL, stop := nodetest.Queue()
	defer stop()
	nc, _ := nats.Connect(natsURL)
	defer nc.Close()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))

	client, _ := core.NewClient(nc, &core.ClientOptions{
		Middleware: []core.CallMiddleware{coreotel.Middleware(coreotel.Config{TracerProvider: tp})},
	})
	w, _ := worker.New(worker.Config{
		Conn:       nc,
		Middleware: []worker.Middleware{workerotel.Middleware(workerotel.Config{TracerProvider: tp})},
	})
	w.Process("email", 1, func(ctx context.Context, job *worker.Job) error {
		fmt.Println("handler in a span:", trace.SpanContextFromContext(ctx).IsValid())
		return nil
	}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()

	reqCtx, request := tp.Tracer("app").Start(ctx, "signup")
	job, _ := client.Create(reqCtx, "email", map[string]string{"to": "ada@example.com"}, nil)
	request.End()
	waitCtx, stopWaiting := context.WithTimeout(ctx, time.Minute)
	_, _ = client.Await(waitCtx, job.ID)
	stopWaiting()
	cancel()
	<-done

	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		byName[s.Name()] = s
	}
	create, process := byName["kuebus.create email"], byName["kuebus.process email"]
	fmt.Println("one trace:", process.SpanContext().TraceID() == request.SpanContext().TraceID())
	fmt.Println("child of the create:", process.Parent().SpanID() == create.SpanContext().SpanID())
	// Output:
	// handler in a span: true
	// one trace: true
	// child of the create: true
}
