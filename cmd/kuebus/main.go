package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal has started a graceful stop, a second one kills
	// the process at once, as without a handler.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// command is one node of the command tree: a leaf has run, a group has sub.
type command struct {
	name    string // "create"; path() gives "job create"
	args    string // positional arguments for the usage line: "TYPE"
	summary string
	// example is one command line a user may copy, or several, one a
	// line; every leaf has one (TestUsage), and its help shows it.
	example string
	// details, when set, is more for its help, after the summary: what an
	// argument may be, say.
	details string
	run     func(ctx context.Context, e *env, args []string) error
	sub     []*command
	parent  *command
	// serves marks the long-running server commands (dev, node), which
	// run with serverGCPercent (gc.go).
	serves bool
}

func (c *command) path() string {
	if c.parent == nil || c.parent.parent == nil {
		return c.name
	}
	return c.parent.path() + " " + c.name
}

func (c *command) find(name string) *command {
	for _, s := range c.sub {
		if s.name == name {
			return s
		}
	}
	return nil
}

// didYouMean is ": did you mean "kuebus job create"?" for the subcommand
// of c whose name is a likely misspelling of name (nearest, as for
// variable names in envcheck.go), "" when none is.
func (c *command) didYouMean(name string) string {
	names := make([]string, len(c.sub))
	for i, s := range c.sub {
		names[i] = s.name
	}
	best := nearest(name, names)
	if best == "" {
		return ""
	}
	return fmt.Sprintf(`: did you mean "kuebus %s"?`, strings.TrimSpace(c.path()+" "+best))
}

// commands is the command tree; its root has no name.
func commands() *command {
	root := &command{sub: []*command{
		{name: "dev", summary: "run NATS, Redis, core and the promoter in one process", run: runDev, serves: true, example: "kuebus dev\nkuebus dev --nats-listen 127.0.0.1:4333 --http-listen 127.0.0.1:8081"},
		{name: "node", summary: "run one cluster member with the roles its config file gives", run: runNode, serves: true, example: "kuebus node --config node.yaml"},
		{name: "cluster", summary: "show the promoter ring: leader, members and their state", run: runCluster, example: "kuebus cluster --context prod"},
		{name: "bench", summary: "measure throughput and latency, to set beside asynq's and BullMQ's (docs/benchmarks.md)", run: runBench, example: "kuebus bench --n 10000 --only process"},
		{name: "job", summary: "create, read and change jobs", sub: []*command{
			{name: "create", args: "TYPE", summary: "create a job and print it as JSON", run: runJobCreate, example: "kuebus job create email --data '{\"to\":\"ann@example.com\"}' --priority high\nkuebus job create report --delay 10m --unique-key daily-2026-11-27 --attempts 5 --backoff exponential:1s\nID=$(kuebus job create email --quiet) && kuebus job get $ID"},
			{name: "get", args: "ID | --type TYPE --key KEY", summary: "print a job as JSON, with its error history; by id, or by type and unique key", run: runJobGet, example: "kuebus job get 1001\nkuebus job get --type report --key daily-2026-11-27"},
			{name: "ls", summary: "list jobs by state and type", run: runJobList, example: "kuebus job ls --state failed --type email\nkuebus job ls --state inactive --order desc --from 0 --to 49"},
			{name: "search", args: "TEXT", summary: "list jobs whose id, unique key or data contains TEXT", run: runJobSearch, example: "kuebus job search ann@example.com --state failed"},
			{name: "errors", args: "TYPE", summary: "group a type's failed jobs by error, the largest group first (retry one with retry --all --error-group)", run: runJobErrors, example: "kuebus job errors email\nkuebus job errors email --limit 10000"},
			{name: "rm", args: "ID | --all", summary: "remove a job and its log, or every job of --state that matches", run: runJobRemove, example: "kuebus job rm 1001\nkuebus job rm --all --state complete --type email"},
			{name: "remove", args: "ID | --all", summary: "the same as rm, named as bulk's action", run: runJobRemove, example: "kuebus job remove --all --state failed --type email"},
			{name: "why", args: "ID", summary: "say why a job is not running: delayed, paused, a limit, no worker, queued behind N, or running (--json: the numbers)", run: runJobWhy, example: "kuebus job why 1001\nkuebus job why 1001 --json"},
			{name: "log", args: "ID", summary: "print a job's log, one line per entry (--time: with the time of each)", run: runJobLog, example: "kuebus job log 1001 --time"},
			{name: "state", args: "ID STATE", summary: "move a job to a state by hand", run: runJobState, example: "kuebus job state 1001 inactive"},
			{name: "priority", args: "ID PRIORITY", summary: "change a job's priority (a name or an integer)", run: runJobPriority, example: "kuebus job priority 1001 critical\nkuebus job priority 1001 -15"},
			{name: "retry", args: "ID | --all", summary: "run a job again (set its state to inactive), or every failed or cancelled one that matches", run: runJobRetry, example: "kuebus job retry 1001\nkuebus job retry --all --state failed --type email"},
			{name: "cancel", args: "ID | --all", summary: "cancel a job that has not finished (its running handler is told), or every one that matches", run: runJobCancel, example: "kuebus job cancel 1001\nkuebus job cancel --all --state delayed --type report"},
			{name: "promote", args: "ID | --all", summary: "make a delayed job ready now, or every one that matches", run: runJobPromote, example: "kuebus job promote 1001\nkuebus job promote --all --type report"},
			{name: "deps", args: "ID", summary: "list the jobs a job depends on (with their results) and the jobs that wait for it", run: runJobDeps, example: "kuebus job deps 1001"},
		}},
		{name: "flow", summary: "create jobs that depend on each other", sub: []*command{
			{name: "create", args: "FILE.json", summary: "create a flow from a file (- for stdin): {\"jobs\":[{\"ref\",\"spec\",\"depends_on\"},...]}; print each job's ref, id and state", run: runFlowCreate, example: "kuebus flow create resize-then-zip.json\ncat flow.json | kuebus flow create -"},
		}},
		{name: "schedule", summary: "create jobs periodically: set, list and remove schedules", sub: []*command{
			{name: "set", args: "NAME", summary: "create or replace a schedule (--cron or --every, --type, job flags) and print it as JSON", run: runScheduleSet, example: "kuebus schedule set nightly-report --cron '0 3 * * *' --type report\nkuebus schedule set heartbeat --every 30s --type ping --data '{}'"},
			{name: "ls", summary: "list the schedules with their next and last ticks", run: runScheduleList, example: "kuebus schedule ls"},
			{name: "rm", args: "NAME", summary: "remove a schedule (the jobs it made stay)", run: runScheduleRemove, example: "kuebus schedule rm nightly-report"},
		}},
		{name: "broadcast", args: "TYPE", summary: "send --data to every listener of TYPE (job.broadcast.>) when due (--delay), and print the job as JSON", run: runBroadcast, example: "kuebus broadcast prices --data '{\"do\":\"reload\"}'\nkuebus broadcast prices --data '{\"do\":\"reload\"}' --delay 30s"},
		{name: "type", summary: "a job type's policy: limits that hold across every worker, and defaults of its jobs", sub: []*command{
			{name: "set", args: "TYPE", summary: "replace a type's policy (--concurrency, --rate N/DURATION, job defaults) and print it as JSON", run: runTypeSet, example: "kuebus type set email --concurrency 5 --rate 100/1s\nkuebus type set report --aging 1s --attempts 3 --ttl 2m"},
			{name: "get", args: "TYPE", summary: "print a type's policy as JSON", run: runTypeGet, example: "kuebus type get email"},
			{name: "ls", summary: "list the types that have a policy, with their limits and defaults", run: runTypeList, example: "kuebus type ls"},
		}},
		{name: "worker", args: "TYPE...", summary: "run a demo worker that logs and completes jobs of the types", run: runWorker, example: "kuebus worker email sms --concurrency 4"},
		{name: "workers", summary: "list the live workers: types, running jobs, last heartbeat", run: runWorkers, example: "kuebus workers"},
		{name: "stats", summary: "count jobs per state and type, and list the paused types; with a Redis shard down, print the other types and exit 1 naming the unreadable ones", run: runStats, example: "kuebus stats\nkuebus stats --context prod"},
		{name: "pause", args: "TYPE", summary: "pause a job type: its jobs stay, and none is leased until resumed", run: runPause, example: "kuebus pause email"},
		{name: "resume", args: "TYPE", summary: "resume a paused job type", run: runResume, example: "kuebus resume email"},
		{name: "events", args: "[SUBJECT]", summary: "print events as they happen: job.> and queue.>, or SUBJECT; with --since or --from-seq, the durable events stored first", run: runEvents, example: "kuebus events\nkuebus events 'job.failed.>' --since 1h",
			details: "SUBJECT is a subject or wildcard pattern without the prefix, e.g. job.complete.> or job.*.*.email."},
		{name: "context", summary: "name the deployments a command may talk to ($XDG_CONFIG_HOME/kuebus/contexts.yaml), and choose one", sub: []*command{
			{name: "set", args: "NAME", summary: "create or replace a context: a deployment's NATS URL, prefix and credential files", run: runContextSet, example: "kuebus context set prod --nats-url tls://nats.acme.internal:4222 --prefix acme --nats-creds ~/acme.creds"},
			{name: "use", args: "NAME", summary: "make NAME the current context, the one a command talks to when nothing else is chosen", run: runContextUse, example: "kuebus context use prod"},
			{name: "ls", summary: "list the contexts, the current one marked with *", run: runContextList, example: "kuebus context ls"},
			{name: "rm", args: "NAME", summary: "remove a context (when it is the current one, no context is current after)", run: runContextRemove, example: "kuebus context rm staging"},
			{name: "show", summary: "print the deployment a command would talk to now, and what chose it", run: runContextShow, example: "kuebus context show\nkuebus context show --context staging"},
		}},
		{name: "outbox", args: "relay|migrate|stats [FLAGS]", summary: "run kuebus-outbox: move jobs enqueued in SQL transactions to core (docs/outbox.md)", run: runOutbox, example: outboxExamples},
		{name: "version", summary: "print the version", run: runVersion, example: "kuebus version"},
		{name: "help", args: "[COMMAND]", summary: "show help for kuebus or one command", example: "kuebus help job create"},
	}}
	var link func(c *command)
	link = func(c *command) {
		for _, s := range c.sub {
			s.parent = c
			link(s)
		}
	}
	link(root)
	return root
}

// env is what a command runs with.
type env struct {
	stdout, stderr io.Writer
	cmd            *command
}

// usageError is a mistake in the command line: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// errHelp means the help asked for has been printed: exit code 0.
var errHelp = errors.New("help printed")

// run is the whole program but for the process: main only adds signals and
// os.Exit. Cancelling ctx stops a long-running command (dev, events)
// gracefully, and it then returns 0.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := commands()
	cmd, rest := root, args
	for len(rest) > 0 && cmd.sub != nil {
		name := rest[0]
		switch {
		case name == "-h" || name == "-help" || name == "--help":
			printUsage(stdout, cmd)
			return exitOK
		case cmd == root && name == "help":
			return runHelp(root, rest[1:], stdout, stderr)
		case strings.HasPrefix(name, "-"):
			return fail(stderr, usagef("%sexpected a command before the flag %s (see 'kuebus %s')",
				pathColon(cmd), name, strings.TrimSpace("help "+cmd.path())))
		}
		sub := cmd.find(name)
		if sub == nil {
			return fail(stderr, usagef("unknown command %q%s (see 'kuebus %s')",
				strings.TrimSpace(cmd.path()+" "+name), cmd.didYouMean(name), strings.TrimSpace("help "+cmd.path())))
		}
		cmd, rest = sub, rest[1:]
	}
	if cmd.run == nil {
		printUsage(stderr, cmd)
		return exitUsage
	}
	warnUnknownEnv(stderr, os.Environ())
	if cmd.serves {
		serverGC(os.Getenv)
	}
	err := cmd.run(ctx, &env{stdout: stdout, stderr: stderr, cmd: cmd}, rest)
	if errors.Is(err, errHelp) {
		return exitOK
	}
	return fail(stderr, err)
}

// fail prints err as one line and returns its exit code.
func fail(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	// Whatever wrapped it, a URL's password is not printed.
	fmt.Fprintf(stderr, "kuebus: %s\n", redactURL(oneLine(err.Error())))
	if _, ok := errors.AsType[*usageError](err); ok {
		return exitUsage
	}
	return exitFailure
}

// oneLine folds a multi-line message (redis-server's output tail, say) so
// that an error stays one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " ")
}

// pathColon starts a message about c: "job: " for a subcommand, nothing
// for the root, whose messages fail already starts with "kuebus: ".
func pathColon(c *command) string {
	if p := c.path(); p != "" {
		return p + ": "
	}
	return ""
}

func runHelp(root *command, args []string, stdout, stderr io.Writer) int {
	cmd := root
	for _, name := range args {
		sub := cmd.find(name)
		if sub == nil {
			return fail(stderr, usagef("help: unknown command %q%s", strings.Join(args, " "), cmd.didYouMean(name)))
		}
		cmd = sub
	}
	if cmd.run != nil {
		// A leaf's help lists its flags, which its own parser knows.
		return run(context.Background(), append(args, "--help"), stdout, stderr)
	}
	printUsage(stdout, cmd)
	return exitOK
}

// printUsage prints the help of the root or of a command group.
func printUsage(w io.Writer, group *command) {
	if group.parent == nil {
		fmt.Fprint(w, "kuebus is a priority job queue on a NATS bus.\n\n")
	}
	fmt.Fprintf(w, "Usage:\n  kuebus %s\n\nCommands:\n", strings.TrimSpace(group.path()+" <command> [flags] [args]"))
	var lines [][2]string
	var walk func(c *command)
	walk = func(c *command) {
		for _, s := range c.sub {
			if s.sub != nil {
				walk(s)
				continue
			}
			lines = append(lines, [2]string{strings.TrimSpace(s.path() + " " + s.args), s.summary})
		}
	}
	walk(group)
	width := 0
	for _, l := range lines {
		width = max(width, len(l[0]))
	}
	for _, l := range lines {
		fmt.Fprintf(w, "  %-*s  %s\n", width, l[0], l[1])
	}
	fmt.Fprint(w, "\nRun 'kuebus help <command>' or 'kuebus <command> --help' for its flags.\n")
	if group.parent == nil {
		fmt.Fprintf(w, "\nDeployment now: %s\n", deploymentNow(flag.NewFlagSet("", flag.ContinueOnError)))
		fmt.Fprintf(w, "\nEnvironment:\n  %s  default of --nats-url (a context --context names wins over it)\n", envNATSURL)
		fmt.Fprintf(w, "  %s   default of --context when no NATS URL is given\n", envContext)
		fmt.Fprintf(w, "  %s, %s, %s, %s, %s,\n  %s, %s, %s\n      defaults of --nats-token, --nats-user, ... --nats-tls-key\n",
			envNATSToken, envNATSUser, envNATSPassword, envNATSNkey, envNATSCreds, envNATSTLSCA, envNATSTLSCert, envNATSTLSKey)
	}
}
