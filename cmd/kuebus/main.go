package main

import (
	"context"
	"errors"
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
		{name: "dev", summary: "run NATS, Redis, core and the promoter in one process", run: runDev, serves: true},
		{name: "node", summary: "run one cluster member with the roles its config file gives", run: runNode, serves: true},
		{name: "cluster", summary: "show the promoter ring: leader, members and their state", run: runCluster},
		{name: "bench", summary: "measure throughput and latency, beside shared/peerbench (asynq, BullMQ)", run: runBench},
		{name: "job", summary: "create, read and change jobs", sub: []*command{
			{name: "create", args: "TYPE", summary: "create a job and print it as JSON", run: runJobCreate},
			{name: "get", args: "ID | --type TYPE --key KEY", summary: "print a job as JSON, with its error history; by id, or by type and unique key", run: runJobGet},
			{name: "ls", summary: "list jobs by state and type", run: runJobList},
			{name: "search", args: "TEXT", summary: "list jobs whose id, unique key or data contains TEXT", run: runJobSearch},
			{name: "rm", args: "ID | --all", summary: "remove a job and its log, or every job of --state that matches", run: runJobRemove},
			{name: "remove", args: "ID | --all", summary: "the same as rm, named as bulk's action", run: runJobRemove},
			{name: "log", args: "ID", summary: "print a job's log, one line per entry (--time: with the time of each)", run: runJobLog},
			{name: "state", args: "ID STATE", summary: "move a job to a state by hand", run: runJobState},
			{name: "priority", args: "ID PRIORITY", summary: "change a job's priority (a name or an integer)", run: runJobPriority},
			{name: "retry", args: "ID | --all", summary: "run a job again (set its state to inactive), or every failed or cancelled one that matches", run: runJobRetry},
			{name: "cancel", args: "ID | --all", summary: "cancel a job that has not finished (its running handler is told), or every one that matches", run: runJobCancel},
			{name: "promote", args: "ID | --all", summary: "make a delayed job ready now, or every one that matches", run: runJobPromote},
			{name: "deps", args: "ID", summary: "list the jobs a job depends on (with their results) and the jobs that wait for it", run: runJobDeps},
		}},
		{name: "flow", summary: "create jobs that depend on each other", sub: []*command{
			{name: "create", args: "FILE.json", summary: "create a flow from a file (- for stdin): {\"jobs\":[{\"ref\",\"spec\",\"depends_on\"},...]}; print each job's ref, id and state", run: runFlowCreate},
		}},
		{name: "schedule", summary: "create jobs periodically: set, list and remove schedules", sub: []*command{
			{name: "set", args: "NAME", summary: "create or replace a schedule (--cron or --every, --type, job flags) and print it as JSON", run: runScheduleSet},
			{name: "ls", summary: "list the schedules with their next and last ticks", run: runScheduleList},
			{name: "rm", args: "NAME", summary: "remove a schedule (the jobs it made stay)", run: runScheduleRemove},
		}},
		{name: "worker", args: "TYPE...", summary: "run a demo worker that logs and completes jobs of the types", run: runWorker},
		{name: "workers", summary: "list the live workers: types, running jobs, last heartbeat", run: runWorkers},
		{name: "stats", summary: "count jobs per state and type, and list the paused types; with a Redis shard down, print the other types and exit 1 naming the unreadable ones", run: runStats},
		{name: "pause", args: "TYPE", summary: "pause a job type: its jobs stay, and none is leased until resumed", run: runPause},
		{name: "resume", args: "TYPE", summary: "resume a paused job type", run: runResume},
		{name: "events", args: "[SUBJECT]", summary: "print events as they happen: job.> and queue.>, or SUBJECT; with --since or --from-seq, the durable events stored first", run: runEvents},
		{name: "version", summary: "print the version", run: runVersion},
		{name: "help", args: "[COMMAND]", summary: "show help for kuebus or one command"},
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
		fmt.Fprintf(w, "\nEnvironment:\n  %s  default of --nats-url\n", envNATSURL)
		fmt.Fprintf(w, "  %s, %s, %s, %s, %s,\n  %s, %s, %s\n      defaults of --nats-token, --nats-user, ... --nats-tls-key\n",
			envNATSToken, envNATSUser, envNATSPassword, envNATSNkey, envNATSCreds, envNATSTLSCA, envNATSTLSCert, envNATSTLSKey)
	}
}
