// Package bench measures kuebus the way the peer harness of
// docs/benchmarks.md measures asynq and BullMQ, so that `kuebus bench` prints figures that stand beside theirs:
// `name value unit` lines, `#` for comments, with the peers' names.
//
// Phases, in this order (Config.Only selects some):
//
//	enqueue_seq   enqueue_seq_throughput: one producer, each create awaited
//	enqueue_conc  enqueue_conc<C>_throughput: C producers on one connection
//	enqueue_bulk  enqueue_bulk_throughput: create_bulk, 1000 per call, ids_only
//	process       process_c<K>_throughput: N jobs pre-enqueued (bulk), one
//	              worker with concurrency K and a no-op handler that counts
//	              its runs, from the worker's start until every handler has
//	              run and core holds no job left (all acknowledged); and
//	              process_c<K>_redis_cmds_per_job from INFO commandstats,
//	              process_c<K>_redis_cpu_util from INFO cpu
//	process_policy process_c<K>_policy_*: process on a type with a policy
//	              that never binds (concurrency 4K, at least 1000) and its
//	              jobs in 1000 groups taking turns (docs/policy.md)
//	latency       latency_p50, latency_p99: one job per ms for 5s, create
//	              call start → handler start, worker concurrency K
//	delayed       delayed_error_{min,p50,p99,max}: 1000 jobs, job i delayed
//	              (i+1)·2ms; handler start − due time (negative: early)
//
// Jobs the workers run are created with remove_on_complete, as the peers'
// are (BullMQ removeOnComplete, asynq's default retention of 0).
//
// # What it runs against
//
// With no NATS URL, the bench runs the whole queue in its own process, as
// `kuebus dev` does: a node (package node) of embedded NATS on a free
// loopback port, a core service and the promote and rescue loops. Its Redis
// is the one given, or a throwaway redis-server the node starts (no RDB, no
// AOF, hz 10: run.sh's settings) and stops. Every key it writes is under a
// key prefix of its own, "kbench-<random>" by default, and that prefix is
// deleted (SCAN + DEL) between phases and at the end; nothing else in the
// Redis is touched, and the bench never flushes a database.
//
// With a NATS URL, it drives the core and promoter already serving there,
// which keep their keys under their own prefix. Then the Redis URL is
// required and must be that core's Redis: the bench reads its command
// counts, and cleans up by job type: its types are "<key prefix>-<phase>",
// so it deletes the keys of those types (SCAN *:{kbench-<random>-*}:*),
// drops its types' id blocks and its types from the type set. The
// deployment's id counter has moved on; nothing else is changed.
//
// INFO commandstats counts every command of the Redis server, the bench's
// own reads included (a handful per phase) and, against a shared Redis,
// other clients' too.
//
// Files:
//
//	doc.go      this comment
//	bench.go    Config, the phases, Run, the header and the report's lines
//	stack.go    what the bench runs against: its own node, or a running
//	            deployment; set up and taken down in order
//	keys.go     the bench's keys: job types, the clean-up between phases,
//	            INFO commandstats and cpu of the Redis server
//	enqueue.go  the enqueue phases: one by one, concurrent, in bulks
//	process.go  the phases that run jobs: process, latency, delayed
package bench
