// Package promoter moves delayed jobs to the queue on time.
//
// For now it owns two loops. RunRescueLoop asks core, on a short interval
// (sooner when a lease is due to expire), to send jobs whose lease ran out
// back to the queue. The promote loop, RunLoop: The loop asks core,
// over the bus, to promote the delayed jobs that are due (core.promote), then
// sleeps until the next one falls due, as core reports it in next_due. It
// never sleeps longer than LoopConfig.MaxSleep, and it wakes early when core
// announces on queue.due a job due before the time it sleeps until. When
// more jobs are due than one call moves, it calls again at once. When core
// cannot be reached it logs, waits LoopConfig.RetryDelay and tries again; it
// only stops when its context ends.
//
// The loop builds no Redis keys and runs no scripts: it needs only the small
// Core interface, which *core.Client satisfies. Promotion is idempotent in
// core (each due job is re-checked inside one Lua script), so two loops
// running at once waste calls but never enqueue a job twice.
//
// `kuebus dev` runs one of each per process. Membership (hashicorp/memberlist),
// the leader rule and the leader-only loop, one per leadership term, arrive
// in this package with the cluster issue; this doc then gains the leadership
// rule, its state diagram and the double-leader analysis.
package promoter
