// Command kuebus is the one kuebus binary. `kuebus dev` runs a whole queue in
// one process (embedded NATS, Redis, core, promoter); the other commands talk
// to a running queue over NATS.
//
//	kuebus <command> [subcommand] [flags] [args]
//
// Flags and arguments may come in any order; `--` ends the flags. Exit codes:
// 0 success, 1 failure, 2 usage error (bad command, flag or argument).
//
// How a node is assembled, started and stopped is package node's, and what
// the bench measures is package bench's; here flags become their configs,
// and errors one line and an exit code.
//
// Files:
//
//	doc.go          this comment
//	main.go         main, the command tree, run, help and usage, exit codes
//	args.go         flag parsing with flags and arguments mixed, help, and
//	                the parsers of ids, durations, backoff, JSON, addresses
//	cli.go          the connection flags of every client command, and
//	                explain: the errors a person meets, as one sentence
//	nats_auth.go    the NATS credential and TLS flags and their variables
//	envcheck.go     the warning for a KUEBUS_* variable nothing reads
//	logflags.go     --log-level and --log-format of dev and worker
//	redact.go       URL passwords masked in every error and log line
//	cli_job.go      kuebus job create, get, ls, log, state, priority
//	cli_search.go   kuebus job search
//	cli_flow.go     kuebus flow create, job deps, job create --depends-on:
//	                dependencies and flows
//	cli_misc.go     kuebus stats, workers, pause, resume, events and version
//	cli_bulk.go     kuebus job retry, rm (remove), cancel, promote: one ID, or --all
//	                (core's bulk, called until no more)
//	cli_schedule.go kuebus schedule set, ls, rm
//	specflags.go    the job spec flags job create and schedule set share
//	cli_worker.go   kuebus worker: a demo worker that logs and completes jobs
//	cluster.go      kuebus cluster: the promoter ring as one node sees it
//	dev.go          kuebus dev: its flags, made into the config of a node of
//	                one with a managed redis-server, run until stopped
//	dev_http.go     the HTTP API's access flags, checked by HTTP.Check
//	node.go         kuebus node: config file and variables, run until stopped
//	bench.go        kuebus bench: flags to bench.Config
//	gc.go           the garbage collector's target of dev and node
//	pprof.go        (build tag kuebus_pprof only) net/http/pprof at
//	                $KUEBUS_PPROF_LISTEN, to profile a process as it runs
package main
