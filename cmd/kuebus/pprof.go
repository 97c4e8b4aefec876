//go:build kuebus_pprof

package main

import (
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof on the default mux
	"os"
)

// A build for profiling only (go build -tags kuebus_pprof): with
// KUEBUS_PPROF_LISTEN=127.0.0.1:6061 every command serves net/http/pprof
// there, so that a `kuebus dev` in its own process can be profiled as an
// application runs it (docs/benchmarks.md). Release builds have no such
// listener, and no flag or variable for it.
func init() {
	addr := os.Getenv("KUEBUS_PPROF_LISTEN")
	if addr == "" {
		return
	}
	os.Unsetenv("KUEBUS_PPROF_LISTEN") // not an unknown KUEBUS_ variable to warn of
	go func() { _ = http.ListenAndServe(addr, nil) }()
}
