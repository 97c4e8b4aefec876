// Package redisstore is core.Store on Redis, and the only package of kuebus
// that imports go-redis.
//
// Every state change is one Lua script (scripts.go), whose keys all come in
// through KEYS and share one hash tag per job type, so the same scripts run
// on standalone Redis, Sentinel and Cluster. The key schema is in keys.go;
// reads of ranges, counts and stats are in query.go.
//
// Ids come from one counter; the id → type index lets a request that names
// only an id find the job's keys. A job's creation takes two steps: reserve
// ids (global slot), then store the jobs (their type's slot). A crash between
// the two leaves reserved ids that read as "not found", never a half-stored
// job.
package redisstore
