// Package coreotel traces a producer's creates with OpenTelemetry
// (go.opentelemetry.io/otel): a core.CallMiddleware that records a
// producer span around each create and create_bulk and sends its context
// as the W3C traceparent header, which core keeps with each job (its
// trace field). worker/workerotel continues that trace in the worker, so
// that create and handler are one trace.
//
//	client, err := core.NewClient(nc, &core.ClientOptions{
//		Middleware: []core.CallMiddleware{coreotel.Middleware(coreotel.Config{})},
//	})
//
// It is a package of its own so that core, which every producer and worker
// imports, depends on no tracing library.
//
// Files:
//
//	doc.go         this comment
//	middleware.go  Config, Middleware: the create span and its header
package coreotel
