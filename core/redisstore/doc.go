// Package redisstore is service.Store on Redis, and the only package of kuebus
// that imports go-redis.
//
// Every state change is one Lua script (scripts.go), whose keys all come in
// through KEYS and share one hash tag per job type, so the same scripts run
// on standalone Redis, Sentinel and Cluster. The key schema is in keys.go;
// reads of ranges, counts and stats are in query.go.
//
// Ids come from one counter, taken in blocks of 1000 per store so that a
// create costs one round trip; the id → type index lets a request that names
// only an id find the job's keys. A create sends, in one pipeline, the index
// entries (global slot) and then the jobs (their type's slot). A crash
// between the two leaves ids that read as "not found", never a stored job
// that cannot be found. The counter key (<prefix>:{_}:ids) must never be
// deleted while a core runs: a core would hand out ids of its block again
// and overwrite live jobs. Delete a deployment's keys only with every core
// stopped.
//
// Jobs due at the same millisecond promote in creation order: a delayed
// job's member in the due index is its id zero-padded to 19 digits, so that
// Redis, which orders equal scores by member text, orders them by id. Ids
// of one create_bulk, and of one core, rise with creation; jobs of different
// cores due at the same millisecond follow the order of their ids (their
// blocks), which is not their creation order, but is one order every reader
// of the index shares. Members stored as bare ids (before this form) are
// still found and removed.
//
// Every script that changes state can run twice without harm (a client
// retry after a Redis stall, two leaders for a moment): createJobs skips a
// job whose id is in its type's jobs index already, promote and rescue re-check each candidate, and the
// operations that end a lease (complete, fail, release, rejoin) keep
// "<op>:<lease>" on the job as last_lease, so the same operation with the
// same token answers success and changes nothing (see scripts_lease.go).
package redisstore
