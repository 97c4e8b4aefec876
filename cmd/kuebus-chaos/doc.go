// Command kuebus-chaos is kuebus's fault suite: on loopback it starts a
// small deployment from the real kuebus binary (a redis-server with its
// append-only file on, a NATS-only node, core nodes, promoter nodes in a
// memberlist ring, and worker processes), runs a load of creates, injects
// one fault per scenario (kill -9 of a worker, of a core, of Redis, a
// Redis SIGSTOP, kill -9 of the promoter leader; kill -9 of a core and of
// a master of a Redis Cluster of three while flows span its shards), lets
// the load go on,
// drains the queue and judges the run from every acknowledged id, the
// workers' own records and the final state in Redis.
//
// It exits 1 when an acknowledged job was lost or a job was held by two
// workers at once, 2 when a scenario could not run. scripts/chaos.sh
// builds both binaries and runs it; docs/reliability.md explains the
// figures.
//
//	kuebus-chaos --kuebus BIN --dir DIR [--short] [--scenario kill-core,...]
//	kuebus-chaos worker ...   (the worker processes it starts)
//
// Files:
//
//	doc.go        this comment
//	main.go       main, the flags and their checks, the run over scenarios
//	scenario.go   the scenarios and their faults, one scenario's run, drain
//	cluster.go    one scenario's deployment: Redis, NATS, core and promoter
//	              nodes, each a process of its own
//	rediscluster.go the Redis Cluster of kill-cluster-flow: its start, one
//	              job type per master, kill -9 of a master and its return
//	procs.go      child processes: start, kill, signal, the pid file, the
//	              wait for a line in a child's log
//	load.go       the producers' creates, the events they time, final states
//	workerproc.go kuebus-chaos worker, which records each handler run
//	verdict.go    the workers' records: jobs held twice, runs no fault
//	              explains, acknowledged jobs lost, flow jobs run early
//	              or twice
//	report.go     one scenario's result and table, the summary table
package main
