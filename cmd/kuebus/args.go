package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kuebus/kuebus/core"
)

// flags returns an empty flag set for the running command. It prints
// nothing itself: parse reports errors and help.
func (e *env) flags() *flag.FlagSet {
	fs := flag.NewFlagSet("kuebus "+e.cmd.path(), flag.ContinueOnError)
	fs.SetOutput(helpWriter{stderr: e.stderr})
	fs.Usage = func() {}
	return fs
}

// helpWriter is a flag set's output: it drops what the flag package would
// print (parse reports errors and help itself) and carries the command's
// stderr to what holds only the flag set (connFlags' warning), so that
// the register methods keep their one-argument shape.
type helpWriter struct{ stderr io.Writer }

func (helpWriter) Write(p []byte) (int, error) { return len(p), nil }

// parse parses args, where flags and positional arguments may be mixed, and
// checks that there are between minArgs and maxArgs positional ones (maxArgs
// -1: any number). On -h/--help it prints the command's help to stdout and
// returns errHelp.
func (e *env) parse(fs *flag.FlagSet, args []string, minArgs, maxArgs int) ([]string, error) {
	flagArgs, pos := splitArgs(fs, args)
	if err := fs.Parse(flagArgs); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			e.printHelp(fs)
			return nil, errHelp
		}
		if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
			return nil, usagef("%s: unknown flag --%s%s (see 'kuebus %s --help')", e.cmd.path(), name, flagDidYouMean(fs, name), e.cmd.path())
		}
		return nil, usagef("%s: %v (see 'kuebus %s --help')", e.cmd.path(), err, e.cmd.path())
	}
	switch {
	case len(pos) < minArgs:
		return nil, usagef("%s: missing argument: usage: kuebus %s [flags] %s", e.cmd.path(), e.cmd.path(), e.cmd.args)
	case maxArgs >= 0 && len(pos) > maxArgs:
		return nil, usagef("%s: unexpected argument %q: usage: kuebus %s [flags] %s", e.cmd.path(), pos[maxArgs], e.cmd.path(), e.cmd.args)
	}
	return pos, nil
}

// splitArgs separates flags (with their values) from positional arguments,
// so that `job create email --data '{}'` works: the flag package alone stops
// at the first positional argument. A negative number is an argument, not a
// flag (`job priority 7 -10`); `--` ends the flags.
func splitArgs(fs *flag.FlagSet, args []string) (flagArgs, pos []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return flagArgs, append(pos, args[i+1:]...)
		}
		if len(a) < 2 || a[0] != '-' || isInt(a) {
			pos = append(pos, a)
			continue
		}
		flagArgs = append(flagArgs, a)
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if hasValue || f == nil || isBoolFlag(f) {
			continue // an unknown flag is reported by fs.Parse
		}
		if i+1 < len(args) {
			i++
			flagArgs = append(flagArgs, args[i])
		}
	}
	return flagArgs, pos
}

func isInt(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// flagDidYouMean is ": did you mean --priority?" for the flag of fs whose
// name is a likely misspelling of name, "" when none is.
func flagDidYouMean(fs *flag.FlagSet, name string) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if near := nearest(name, names); near != "" {
		return fmt.Sprintf(": did you mean --%s?", near)
	}
	return ""
}

// flagGroup is a heading of a command's help and the flags under it.
type flagGroup struct {
	title string
	// names lists the group's flags: those its register method adds. A
	// command's flags that no group lists are its own, shown first.
	names func() []string
}

// flagGroups are the shared sets of flags, shown after a command's own in
// this order. A new shared set gets a line here, and every command that
// registers it has its help grouped.
var flagGroups = []flagGroup{
	{"Log flags", flagNames(func(fs *flag.FlagSet) { (&logFlags{}).register(fs, "text") })},
	{"Connection flags", flagNames(func(fs *flag.FlagSet) { (&connFlags{}).register(fs) })},
}

// flagNames is the names of the flags register adds, found once.
func flagNames(register func(fs *flag.FlagSet)) func() []string {
	return sync.OnceValue(func() []string {
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		register(fs)
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		return names
	})
}

// printHelp prints a leaf command's usage, examples and flags, GNU style
// (--name): its own flags first, then each shared group under its heading.
func (e *env) printHelp(fs *flag.FlagSet) {
	w := e.stdout
	c := e.cmd
	fmt.Fprintf(w, "Usage:\n  %s\n\n%s.\n", strings.TrimSpace("kuebus "+c.path()+" [flags] "+c.args), upperFirst(c.summary))
	if c.details != "" {
		fmt.Fprintf(w, "\n%s\n", c.details)
	}
	if c.example != "" {
		fmt.Fprint(w, "\nExamples:\n")
		for line := range strings.SplitSeq(c.example, "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	// A group is shown when the command registered it whole: dev's
	// --nats-token, which locks its server, is no connection flag.
	registered := make([]bool, len(flagGroups))
	for i, g := range flagGroups {
		registered[i] = !slices.ContainsFunc(g.names(), func(n string) bool { return fs.Lookup(n) == nil })
	}
	grouped := make([][]*flag.Flag, len(flagGroups))
	var own []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		for i, g := range flagGroups {
			if registered[i] && slices.Contains(g.names(), f.Name) {
				grouped[i] = append(grouped[i], f)
				return
			}
		}
		own = append(own, f)
	})
	if len(own) > 0 {
		fmt.Fprint(w, "\nFlags:\n")
		printFlags(w, own)
	}
	for i, g := range flagGroups {
		if len(grouped[i]) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", g.title)
		if g.title == "Connection flags" {
			fmt.Fprintf(w, "  now: %s\n", deploymentNow(fs))
		}
		printFlags(w, grouped[i])
	}
}

// deploymentNow says what a command would talk to with the flags of fs
// given so far, for its help.
func deploymentNow(fs *flag.FlagSet) string {
	cf := connFlags{fs: fs}
	for _, f := range []struct {
		to   *string
		name string
	}{{&cf.url, "nats-url"}, {&cf.prefix, "prefix"}, {&cf.context, "context"}} {
		if fl := fs.Lookup(f.name); fl != nil {
			*f.to = fl.Value.String()
		}
	}
	d, err := cf.resolve()
	if err != nil {
		return "unknown: " + err.Error()
	}
	return d.String()
}

func printFlags(w io.Writer, flags []*flag.Flag) {
	for _, f := range flags {
		name, usage := flag.UnquoteUsage(f)
		if name != "" {
			name = " " + name
		}
		fmt.Fprintf(w, "  --%s%s\n      %s", f.Name, name, usage)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// parseID reads a job id argument.
func parseID(what, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usagef("%s %q is not a job id (a positive integer)", what, s)
	}
	return id, nil
}

// parseMillis reads a duration flag: a Go duration (5s, 1m30s, 250ms) or a
// whole number of milliseconds. Zero is allowed; negative is not.
func parseMillis(flagName, s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, usagef("--%s: %d is negative", flagName, n)
		}
		return time.Duration(n) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, usagef("--%s: %q is neither a duration (5s, 250ms) nor a number of milliseconds", flagName, s)
	case d < 0:
		return 0, usagef("--%s: %s is negative", flagName, s)
	case d > 0 && d < time.Millisecond:
		return 0, usagef("--%s: %s is shorter than the 1ms resolution", flagName, s)
	}
	return d, nil
}

// parseBackoff reads --backoff: fixed:DURATION or exponential:DURATION.
// exponential:D first waits D, then 3D, 7D, … as Go's
// core.ExponentialBackoff(D) does: it sends the wire's delay 2D, whose
// Kue formula first waits half of it (docs/protocol.md, "Backoff").
func parseBackoff(s string) (*core.Backoff, error) {
	typ, delay, ok := strings.Cut(s, ":")
	if !ok || (typ != string(core.BackoffFixed) && typ != string(core.BackoffExponential)) {
		return nil, usagef("--backoff: %q is not fixed:DURATION or exponential:DURATION (e.g. exponential:500ms)", s)
	}
	d, err := parseMillis("backoff", delay)
	if err != nil {
		return nil, err
	}
	if typ == string(core.BackoffExponential) {
		return core.ExponentialBackoff(d), nil
	}
	return core.FixedBackoff(d), nil
}

// parseJSON checks a JSON flag value locally, so that a typo is reported
// against the flag rather than as a wire error.
func parseJSON(flagName, s string) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return nil, usagef("--%s: not valid JSON: %v", flagName, err)
	}
	return raw, nil
}

// checkListen checks a HOST:PORT listen address; port 0 picks a free one.
func checkListen(flagName, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		reason := err.Error()
		if ae, ok := errors.AsType[*net.AddrError](err); ok {
			reason = ae.Err
		}
		return usagef("--%s: %q is not HOST:PORT: %s", flagName, addr, reason)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return usagef("--%s: %q: port must be a number from 0 to 65535", flagName, addr)
	}
	return nil
}

// flagGiven reports whether the command line set the flag named name
// (as against its default).
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// retentionFlag is --remove-on-complete and --remove-on-fail: given alone
// (or =true) the job goes as it finishes; =age=DURATION,count=N keeps it
// that long and while among the N newest of its type (either may be left
// out); =false keeps it (its type's default applies).
type retentionFlag struct{ r core.Retention }

func (f *retentionFlag) IsBoolFlag() bool { return true }

func (f *retentionFlag) String() string {
	if f == nil {
		return "false"
	}
	b, _ := json.Marshal(f.r)
	return string(b)
}

func (f *retentionFlag) Set(s string) error {
	switch s {
	case "true":
		f.r = core.RemoveAtOnce
		return nil
	case "false":
		f.r = core.Retention{}
		return nil
	}
	var r core.Retention
	for item := range strings.SplitSeq(s, ",") {
		key, value, _ := strings.Cut(strings.TrimSpace(item), "=")
		switch key {
		case "age":
			d, err := time.ParseDuration(value)
			if err != nil || d <= 0 || d%time.Millisecond != 0 {
				return fmt.Errorf("age: %q is not a positive duration in whole ms (90m, 24h)", value)
			}
			r.Age = d
		case "count":
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil || n <= 0 {
				return fmt.Errorf("count: %q is not a whole number above 0", value)
			}
			r.Count = n
		default:
			return fmt.Errorf("%q is not true, false or age=DURATION,count=N", s)
		}
	}
	f.r = r
	return nil
}
