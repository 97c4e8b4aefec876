// Package redisstore is service.Store on Redis, and the only package of kuebus
// that imports go-redis.
//
// Files:
//
//	doc.go      this comment
//	ids.go      job ids in blocks of one type each, and finding a job's
//	            type from its id
//	store.go    Config, Store, New, create, get, remove, log, set state
//	            and priority, promote (the sweep promote and rescue share)
//	lease.go    lease, the lease holders' operations (Apply), rescue
//	query.go    ranges (by position), counts, ids and stats: reads
//	range.go    ranges by cursor: the members after a place in each
//	            type's index (lua/range_after.lua, a read), merged
//	shards.go   shard isolation: a type whose Redis (Cluster master) fails
//	            is skipped and reported, the others go on
//	pause.go    pause and resume of a type, and which types are paused
//	policy.go   a type's policy (DESIGN §10.1): set, read, list; its
//	            limits act in the lease scripts (lua/includes/lease_limit.lua,
//	            group_limit.lua for the group limits)
//	cancel.go   cancel: a job that has not finished ends in cancelled
//	deps.go     dependencies: a create's checks and links, the hand-overs
//	            between slots finished after each step and by the sweep
//	bulk.go     bulk: an action on the jobs of a state, bounded per call;
//	            failed_errors: a type's failed jobs grouped by error
//	schedule.go schedules beside their job type's keys: set, list, remove,
//	            the due ones, and firing one tick
//	clean.go    the cleaner's removal of finished jobs past their
//	            retention, and its re-score of jobs an earlier version
//	            indexed by id (lua/jobs_rescore.lua)
//	broadcast.go broadcast jobs promoted and not yet published: take them
//	            to publish, and say they were
//	search.go   search: the type-by-type walk within a budget, each type
//	            in creation order from a place (lua/search.lua)
//	history.go  the per-minute history: add a core's counts, read minutes summed
//	workers.go  workers' heartbeats (lua/heartbeat.lua) and the list of live ones
//	keys.go     the key schema: every key, its type and what it holds
//	scripts.go  loads lua/ (go:embed), resolves includes, ScriptText
//	calls.go    the typed wrapper of each script: ARGV by name, reply by
//	            position
//	fields.go   a job's hash fields: the one table Go and the scripts
//	            agree through (order, decoders, a new job's encoders)
//	codes.go    the codes scripts reply, named for Go and Lua
//	mirrors.go  what Go applies of a script's writes its reply leaves
//	            out (a lease's, a bare complete's), each with its test
//	luagen.go   writes lua/includes/*_gen.lua from fields.go, codes.go
//	            and schedule.go's tables (go generate)
//	row.go      a job's row decoded by position into core.Job (a leased
//	            job's hash by name, decodePairsInto); a new job's values
//	            as create_jobs takes them (appendNewJob)
//	eval.go     how a script runs: sent again only when Redis did not run
//	            it (NOSCRIPT, MOVED), then WAIT for replicas when asked
//	topology.go a Cluster client's slot map reloaded on errors that may
//	            mean a failover, and the scripts on every node
//	connect.go  Conn (URL, Sentinel or Cluster), Open, Redis: the one way
//	            other packages reach Redis
//	client.go   client options (retries off, RESP2), ParseURL, Dial,
//	            SetLogger; the bench's INFO reads and key deletes on Redis
//	lua/        one script per state change (*.lua), each opening with its
//	            KEYS, ARGV, reply and the events the service publishes
//	            after it, and includes/*.lua, the helpers they share
//	            ("--@include x.lua"); includes/*_gen.lua are generated
//
// Every state change is one Lua script, whose keys all come in through KEYS
// (a script of many jobs builds their keys from the type's job:0, with the
// same hash tag: scripts.go) and share one hash tag per job type, so the same scripts run on
// standalone Redis, Sentinel and Cluster. To run a script by hand, write
// the final texts out and use redis-cli:
//
//	go test ./core/redisstore -run TestScriptsLoad -lua.dir=/tmp/lua
//	redis-cli --eval /tmp/lua/promote_due.lua k:{t}:ready k:{t}:due k:{t}:leases \
//	    k:{t}:jobs k:{t}:complete k:{t}:failed k:{t}:unique k:{t}:seq k:{t}:stats \
//	    k:{t}:cancelled \
//	    k:{t}:job:42 , 1700000000000 42
//
// One formula, one place: a failed attempt's backoff is computed in
// lua/includes/attempt_failed.lua, where the attempt is counted (Go would
// need the attempts first, a round trip); Go passes its cap, core.MaxDelay,
// as ARGV max_delay.
//
// Ids come from one counter, reserved in blocks of 1000, each block for one
// job type (lua/reserve_ids.lua, ids.go), so that a create costs one round
// trip and writes nothing per job outside its type's slot. A request that
// names only an id finds the job's type from the id's block (the global
// blocks hash, which a core keeps in memory as it learns it); an id no job
// took reads as "not found". The counter key (<prefix>:{_}:ids) must never
// be deleted while a core runs: a core would hand out ids of its block
// again and overwrite live jobs. Delete a deployment's keys only with every
// core stopped.
//
// Jobs due at the same millisecond promote in creation order: a delayed
// job's member in the due index is its id zero-padded to 19 digits, so that
// Redis, which orders equal scores by member text, orders them by id. Ids
// of one create_bulk, and of one core, rise with creation; jobs of different
// cores due at the same millisecond follow the order of their ids (their
// blocks), which is not their creation order, but is one order every reader
// of the index shares.
//
// A paused type's flag is a field of its own stats hash, so that lease.lua
// checks it in the type's slot; Lease also leaves paused types out of the
// read of ready, so that a paused type's jobs never stand in the way of
// another type's.
//
// Retention (remove_on_complete, remove_on_fail): true is the roc or rof
// field of the job, and complete.lua or fail.lua delete such a job as it
// finishes; {age, count} is roc_limit or rof_limit, read by clean.lua, which
// walks a state's index oldest first from a cursor kept in the type's stats
// and removes what neither the job's own rule nor the type's default keeps.
// A type none of whose jobs brought a rule (stats own_retention) and
// without a default is not read. Every removal, whoever makes it, is
// includes/remove.lua.
//
// A job's error history (its last 25 failed attempts) is a list of its
// own, errors:<id>, next to log:<id>, not a field of the row: every script
// reads and replies the row and every event carries it, and 25 errors with
// their stacks would weigh on each. fail.lua and rescue_expired.lua append
// to it (lua/includes/errors.lua), every removal (includes/remove.lua)
// deletes it, and only Get reads it.
//
// Every script that changes state can run twice without harm (a client
// retry after a Redis stall, two leaders for a moment): create_jobs skips a
// job whose id is in its type's jobs index already, promote and rescue
// re-check each candidate, and the operations that end a lease (complete,
// fail, release, rejoin) keep "<op>:<lease>" on the job as last_lease, so
// the same operation with the same token answers success and changes
// nothing (see lua/includes/lease_holder.lua).
//
// Every script runs through Store.eval (eval.go): sent again only when
// Redis said it did not run it (NOSCRIPT, MOVED), and, with
// Config.WaitReplicas, followed by WAIT on the connection that ran it, so
// that an acknowledged change is on that many replicas. On Redis Cluster a
// topology (topology.go) reloads the slot map on any error that may mean a
// failover and keeps every script on every master and replica.
package redisstore
