// Package core is what a client of the queue needs, and nothing more: the
// job model (fields, states, priorities, backoff and their validation), the
// wire request and reply types of every method of docs/protocol.md §3, the error
// sentinels, and Client, a typed client for every method over NATS.
//
// The RPC service that implements the methods is core/service; the Redis
// store it runs on is core/redisstore. Neither is imported from here, so a
// producer or a worker that imports core compiles neither the service nor
// go-redis.
//
// Files:
//
//	doc.go            this comment
//	job.go            Job, Spec, State, Priority, Backoff and their validation
//	units.go          time.Duration and time.Time in Go, ms on the wire: the
//	                  JSON methods of Spec, Backoff and schedules, and the
//	                  time accessors of Job and Schedule
//	wirefast.go       the JSON of a spec and a bulk by code of their own: the
//	                  client's encoding, core's fast path of decoding
//	retention.go      Retention: remove_on_complete and remove_on_fail
//	jsoncheck.go      CheckJSON: the checks of job data and results as JSON
//	wire.go           request and reply bodies, the event body, wire limits
//	lease.go          what a worker sends and gets: lease, batch and lease ops
//	errors.go         the sentinels and the errors both sides word alike
//	args.go           Args, CreateArgs, CreateArgsBulk and SetScheduleArgs:
//	                  a job type as a Go type
//	methods.go        Methods: every method's request and reply type (the
//	                  source of docs/schema/kuebus.schema.json)
//	client.go         Client: the calls of producers and readers (and the
//	                  promoter's promote), event subscriptions, Await
//	client_worker.go  Client: the calls of workers (lease, the lease holder's
//	                  operations, batch) and the promoter's rescue
//	create.go         concurrent creates of one client share one create_bulk
//	deps.go           dependencies and flows: depends_on's checks, the
//	                  dependency failure rules, create_flow's and
//	                  dependencies' bodies (DESIGN §10.2)
//	bulk.go           bulk's actions, the states each starts from, its bodies
//	policy.go         a job type's policy (type_set, type_get, type_list):
//	                  wire types, checks, defaults, Client calls
//	explain.go        explain: why a job is not running, its reasons
//	schedule.go       schedules: their wire types and Client calls
//	search.go         search's request, reply, bounds and cursor
//	rangecursor.go    RangeCursor: a range's place in an index, its text
//	history.go        history: per-minute counts of created, completed, failed jobs
//	triage.go         failed_errors: a type's failed jobs grouped by error
//	workers.go        heartbeat and workers: the live workers list
//	trace.go          CheckTraceparent: the W3C trace context a job keeps
//	replay.go         Client.Replay: durable events from a time or a
//	                  sequence, then live
//	broadcast.go      Client.SubscribeBroadcast: broadcast jobs as they fall
//	                  due, with their data
//
// Delivery is at least once; handlers must be idempotent.
package core
