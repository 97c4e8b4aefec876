package main

import "runtime/debug"

// serverGCPercent is the garbage collector's target of dev and node when
// the environment sets no GOGC: a collection once the heap has grown 400%
// over what the last one kept, not Go's default 100%. Core's live heap is
// small (the requests in flight, a few MB) and its allocation rate high
// (every request, reply and event), so at 100% it collected all the time:
// the collector was ~19% of core's CPU under bulk creates. At 400%,
// measured with scripts/cpu-per-job.sh (docs/benchmarks-log.md, issue 12
// step 4), core's CPU per job fell 25-30% in bulk enqueue and processing,
// for a peak RSS of 68 MB instead of 48 MB. GOGC (and GOMEMLIMIT) in the
// environment win, as everywhere in Go. Only the server commands are
// tuned: a worker or a producer is the application's own process, and its
// GC is its choice.
const serverGCPercent = 400

// serverGC sets serverGCPercent unless getenv gives a GOGC.
func serverGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serverGCPercent)
	}
}
