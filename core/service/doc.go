// Package service is core, the service: it serves the RPC methods of
// docs/protocol.md §3 as the NATS micro service kuebus-core, validates every request,
// stores through a Store, and publishes an event after every committed
// change. Any number of services may serve one Redis: they share a queue
// group, so each request reaches one.
//
// Store, the interface the service consumes, is defined here;
// core/redisstore implements it on Redis. The service imports neither
// go-redis nor redisstore.
//
// Files:
//
//	doc.go             this comment
//	service.go         Config, New, Service: lifecycle and event publishing
//	methods.go         the producer and reader methods and their checks
//	worker_methods.go  lease, batch and the lease holders' operations (a
//	                   progress handed to the store as its percent), rescue
//	search.go          search: its checks, and a page cut to one message
//	history.go         per-minute counts from the events a core publishes, added to
//	                   Redis every few seconds; the history method
//	workers.go         heartbeat and workers: checks, and the live workers
//	queue_error.go     queue.error: core's own failures, once a second per code
//	pause.go           pause and resume of a type, and the wake of
//	                   waiting leases on queue.resume
//	policy.go          type_set, type_get, type_list; each type's defaults
//	                   applied to its creates from a short cache
//	explain.go         explain: why a job is not running
//	cancel.go          cancel a job that has not finished, then job.cancel
//	broadcast.go       the broadcasts a promote completed: published with
//	                   their data on job.broadcast, then ended in the store
//	bulk.go            bulk: one action on the jobs of a state, bounded per call
//	triage.go          failed_errors: a type's newest failed jobs grouped by error
//	schedule.go        schedule_set, _list, _remove, and schedule_fire, the
//	                   leader's call that fires the ticks that have come
//	schedule_store.go  ScheduleStore: what the service needs to keep
//	                   schedules and fire a tick once
//	tick.go            a schedule's timing (cron via robfig/cron, or every)
//	                   and its latest tick at or before now
//	clean.go           the leader's clean: finished jobs past their
//	                   retention, per type defaults (Config.Retention),
//	                   and the re-score of jobs an earlier version indexed
//	                   by id into creation order
//	deps.go            dependencies and flows: create_flow's checks and
//	                   order, dependencies, dependents, the events of jobs
//	                   a dependency released or ended, the hand-over sweep
//	batcher.go         creates from concurrent requests share one store call
//	trace.go           a create's traceparent header, kept by specs without their own
//	waitroom.go        lease requests waiting for work, woken by events
//	wakesubs.go        the wake events a core subscribes to: of the types its leases wait on
//	store.go           Store, LeaseStore, StoreOp and Applied: what the
//	                   service needs of storage, and what it gets back
//	types_error.go     TypesError: a store call that served some job types
//	                   while others' Redis (a Cluster master) failed
package service
