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
// environment win, as everywhere in Go; serverMemoryLimit bounds what
// this target lets the heap grow to. Only the server commands are
// tuned: a worker or a producer is the application's own process, and its
// GC is its choice.
const serverGCPercent = 400

// serverMemoryLimit is the soft memory limit (Go's GOMEMLIMIT) of dev
// and node when the environment sets no GOMEMLIMIT: past it, the
// collector runs whatever GOGC says, so garbage is collected before the
// process grows. GOGC 400 alone lets the heap grow to five times what the
// last collection kept: a flood of 60,000 lease requests took kuebus dev
// to 830 MB, and three subscribers that never read to 741 MB, mostly
// garbage (issue 25, scripts/flood.sh); with this limit, 272 and 278 MB.
// 256 MiB is above what core holds live at its bounds (10,000 waiting
// leases at ~19 KB each, 4,096 requests in flight, 16 MiB per client
// that does not read) and under the 300 MB that docs/reliability.md
// promises; 192 MiB kept the floods to 240 MB but left the collector so
// busy that a stats call missed its 2 s once. It is
// soft: a process that needs more (a live heap above it) gets it, at the
// cost of collecting more often (Go caps that at about half the CPU), so
// a deployment that holds more on purpose raises it: GOMEMLIMIT=1GiB, or
// GOMEMLIMIT=off for none.
const serverMemoryLimit = 256 << 20

// serverGC sets serverGCPercent unless getenv gives a GOGC, and
// serverMemoryLimit unless it gives a GOMEMLIMIT.
func serverGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serverGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serverMemoryLimit)
	}
}
