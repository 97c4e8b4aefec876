// Command kuebus is the one kuebus binary. `kuebus dev` runs a whole queue in
// one process (embedded NATS, Redis, core, promoter); the other commands talk
// to a running queue over NATS.
//
//	kuebus <command> [subcommand] [flags] [args]
//
// Flags and arguments may come in any order; `--` ends the flags. A
// command's entry in the tree (main.go) gives its name, summary, example
// and any details; its help lists its own flags, then the shared groups
// (log, connection) that flagGroups in args.go names. Exit codes:
// 0 success, 1 failure, 2 usage error (bad command, flag or argument).
//
// A client command talks to the deployment its connection flags, a
// context (context.go) or the variables choose (connFlags.resolve in
// cli.go); when none does, it dials nats://127.0.0.1:4222, where `kuebus
// dev` listens, and says so on stderr first: what answers there may be
// another queue.
//
// How a node is assembled, started and stopped is package node's, and what
// the bench measures is package bench's; here flags become their configs,
// and errors one line and an exit code.
//
// Files:
//
//	doc.go          this comment
//	main.go         main, the command tree, run, help and usage, exit codes
//	args.go         flag parsing with flags and arguments mixed, help with
//	                examples and grouped flags, and the parsers of ids,
//	                durations, backoff, JSON, addresses
//	cli.go          the connection flags of every client command, where
//	                each setting comes from (flag, context, variable,
//	                default), and explain: the errors a person meets, as one
//	                sentence
//	context.go      kuebus context set, use, ls, rm, show: named deployments
//	                in $XDG_CONFIG_HOME/kuebus/contexts.yaml
//	nats_auth.go    the NATS credential and TLS flags and their variables
//	envcheck.go     the warning for a KUEBUS_* variable nothing reads
//	logflags.go     --log-level and --log-format of dev and worker
//	redact.go       URL passwords masked in every error and log line
//	cli_job.go      kuebus job create, get, ls, log, state, priority
//	cli_search.go   kuebus job search
//	cli_errors.go   kuebus job errors: a type's failed jobs grouped by error
//	cli_flow.go     kuebus flow create, job deps, job create --depends-on:
//	                dependencies and flows
//	cli_misc.go     kuebus stats, workers, pause, resume, events and version
//	cli_bulk.go     kuebus job retry, rm (remove), cancel, promote: one ID, or --all
//	                (core's bulk, called until no more)
//	cli_schedule.go kuebus schedule set, ls, rm
//	cli_broadcast.go kuebus broadcast: a job published to every listener
//	cli_type.go     kuebus type set, get, ls: a job type's policy; job why
//	specflags.go    the job spec flags job create and schedule set share
//	cli_worker.go   kuebus worker: a demo worker that logs and completes jobs
//	cluster.go      kuebus cluster: the promoter ring as one node sees it
//	dev.go          kuebus dev: its flags, made into the config of a node of
//	                one with a managed redis-server, run until stopped
//	dev_http.go     the HTTP API's access flags, checked by HTTP.Check
//	node.go         kuebus node: config file and variables, run until stopped
//	bench.go        kuebus bench: flags to bench.Config
//	outbox.go       kuebus outbox: runs the kuebus-outbox binary (the outbox
//	                module's, which links the SQL drivers) as a plugin
//	gc.go           the garbage collector's target of dev and node
//	pprof.go        (build tag kuebus_pprof only) net/http/pprof at
//	                $KUEBUS_PPROF_LISTEN, to profile a process as it runs
package main
