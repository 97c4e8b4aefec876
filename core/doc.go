// Package core is the queue itself: the job model (fields, states,
// priorities, backoff, validation), the RPC service that implements the
// methods of DESIGN §3 and publishes an event after every committed change,
// and the Go client producers use.
//
// core does not import go-redis: the Service stores through the Store
// interface, which core/redisstore implements on Redis (key schema and Lua
// scripts are documented there). So workers and producers can import core
// without pulling in a Redis client.
//
// Layout:
//
//	job.go      Job, Spec, State, Priority, Backoff and their validation
//	wire.go     request and reply bodies, the event body
//	service.go  Service: config, lifecycle, event publishing
//	methods.go  the RPC methods
//	client.go   Client: the producer API over NATS
//	store.go    Store: what the service needs of storage
//
// Delivery is at least once; handlers must be idempotent.
package core
