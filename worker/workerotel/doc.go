// Package workerotel traces a Go worker's handlers with OpenTelemetry
// (go.opentelemetry.io/otel): a worker.Middleware that runs each handler
// in a span that continues the trace of the create that made the job
// (core/coreotel on the producer's side, or any client that sent a W3C
// traceparent header with its create).
//
//	w, err := worker.New(worker.Config{
//		Conn:       nc,
//		Middleware: []worker.Middleware{workerotel.Middleware(workerotel.Config{})},
//	})
//
// It is a package of its own so that worker depends on no tracing library.
//
// Files:
//
//	doc.go         this comment
//	middleware.go  Config, Middleware: the handler's span
package workerotel
