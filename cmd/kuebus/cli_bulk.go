package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kuebus/kuebus/core"
)

// The job commands that act on one job by ID or, with --all, on every job
// of a state that passes the filters (core's bulk, called until it says
// there is no more): job retry, rm, cancel and promote.

// bulkFlags are the selection of a bulk action.
type bulkFlags struct {
	state, typ, errText, errGroup, before string
	limit                                 int
	all                                   bool
}

func (b *bulkFlags) register(fs *flag.FlagSet, action core.BulkAction) {
	from := core.BulkStates(action)
	def := ""
	if len(from) == 1 {
		def = string(from[0])
	}
	fs.StringVar(&b.state, "state", def, "with --all: the `STATE` whose jobs to act on ("+joinStates(from)+")")
	fs.StringVar(&b.typ, "type", "", "with --all: only jobs of this `TYPE` (default: every type)")
	fs.StringVar(&b.errText, "error", "", "with --all: only jobs whose error contains this `TEXT`")
	fs.StringVar(&b.errGroup, "error-group", "", "with --all: only jobs whose error is in this `GROUP` (as kuebus job errors prints it)")
	fs.StringVar(&b.before, "before", "", "with --all: only jobs last updated before this: a `DURATION` ago (24h) or a unix time in ms")
	fs.IntVar(&b.limit, "limit", core.BulkLimitDefault, fmt.Sprintf("with --all: jobs looked at per call (`N`, at most %d)", core.BulkLimitMax))
	fs.BoolVar(&b.all, "all", false, "act on every job that --state, --type, --error and --before select, instead of one ID")
}

// request checks the flags and builds the first bulk request; now is the
// time --before DURATION counts back from.
func (b *bulkFlags) request(cmd string, action core.BulkAction, now time.Time) (core.BulkActionRequest, error) {
	req := core.BulkActionRequest{Action: action, Type: b.typ, Error: b.errText, ErrorGroup: b.errGroup, Limit: b.limit}
	if b.state == "" {
		return req, usagef("%s: --all needs --state (%s)", cmd, joinStates(core.BulkStates(action)))
	}
	st, err := core.ParseState(b.state)
	if err != nil {
		return req, usagef("%s: --state %v", cmd, err)
	}
	if !slices.Contains(core.BulkStates(action), st) {
		return req, usagef("%s: --state %s: %s starts from %s only", cmd, st, action, joinStates(core.BulkStates(action)))
	}
	req.State = st
	switch {
	case b.limit <= 0 || b.limit > core.BulkLimitMax:
		return req, usagef("%s: --limit %d is outside 1..%d", cmd, b.limit, core.BulkLimitMax)
	case b.before == "":
	case isInt(b.before):
		ms, _ := strconv.ParseInt(b.before, 10, 64)
		if ms <= 0 {
			return req, usagef("%s: --before %s is not a unix time in ms (a positive integer)", cmd, b.before)
		}
		req.Before = time.UnixMilli(ms)
	default:
		d, err := time.ParseDuration(b.before)
		if err != nil || d <= 0 {
			return req, usagef("%s: --before %q is neither a positive duration (24h, 90m) nor a unix time in ms", cmd, b.before)
		}
		req.Before = now.Add(-d).Truncate(time.Millisecond)
	}
	return req, nil
}

// used reports whether a selection flag was given, which only --all takes.
func (b *bulkFlags) used(fs *flag.FlagSet) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "state", "type", "error", "error-group", "before", "limit":
			set = true
		}
	})
	return set
}

// jobAction runs `job <action> ID` through one, or `job <action> --all
// …` through bulk. extra registers the command's own flags for one job.
func jobAction(ctx context.Context, e *env, args []string, action core.BulkAction,
	extra func(*flag.FlagSet) func() bool, one func(c *core.Client, id int64) error) error {
	var cf connFlags
	var b bulkFlags
	fs := e.flags()
	cf.register(fs)
	b.register(fs, action)
	extraUsed := func() bool { return false }
	if extra != nil {
		extraUsed = extra(fs)
	}
	pos, err := e.parse(fs, args, 0, 1)
	if err != nil {
		return err
	}
	cmd := e.cmd.path()
	switch {
	case len(pos) == 1 && (b.all || b.used(fs)):
		return usagef("%s: give an ID or --all with --state and filters, not both", cmd)
	case len(pos) == 1:
		id, err := parseID(cmd+": ID", pos[0])
		if err != nil {
			return err
		}
		return cf.withClient(ctx, func(c *core.Client) error { return one(c, id) })
	case !b.all:
		return usagef("%s: no job given: give an ID, or --all with --state to act on every job that matches (see 'kuebus %s --help')", cmd, cmd)
	case extraUsed():
		return usagef("%s: that flag goes with one ID, not with --all", cmd)
	}
	req, err := b.request(cmd, action, time.Now())
	if err != nil {
		return err
	}
	return cf.withClient(ctx, func(c *core.Client) error {
		total, err := c.BulkAll(ctx, req, nil)
		if err != nil {
			if total.Done > 0 {
				fmt.Fprintf(e.stdout, "%s: %d %s jobs done before the error\n", action, total.Done, req.State)
			}
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s: %d %s jobs done (%d matched)\n", action, total.Done, req.State, total.Matched)
		return err
	})
}

// joinStates lists states for a message: "failed, cancelled".
func joinStates(states []core.State) string {
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

func runJobRetry(ctx context.Context, e *env, args []string) error {
	return jobAction(ctx, e, args, core.BulkRetry, nil, func(c *core.Client, id int64) error {
		job, err := c.SetState(ctx, id, core.StateInactive)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "job %d is %s: it runs again\n", job.ID, job.State)
		return err
	})
}

func runJobRemove(ctx context.Context, e *env, args []string) error {
	return jobAction(ctx, e, args, core.BulkRemove, nil, func(c *core.Client, id int64) error {
		if _, err := c.Remove(ctx, id); err != nil {
			return err
		}
		_, err := fmt.Fprintf(e.stdout, "removed job %d\n", id)
		return err
	})
}

// runJobCancel is `kuebus job cancel ID [--reason R]` or `--all`: the job
// ends in cancelled; the worker running it, if any, sees its handler's
// context cancelled. A finished job is a conflict (exit 1, core's message).
func runJobCancel(ctx context.Context, e *env, args []string) error {
	var reason *string
	extra := func(fs *flag.FlagSet) func() bool {
		reason = fs.String("reason", "", "why (`TEXT`), sent with the job.cancel event (one ID only)")
		return func() bool { return *reason != "" }
	}
	return jobAction(ctx, e, args, core.BulkCancel, extra, func(c *core.Client, id int64) error {
		job, err := c.Cancel(ctx, id, *reason)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "job %d is %s\n", job.ID, job.State)
		return err
	})
}

// runJobPromote makes a delayed job ready now: one by ID (set_state to
// inactive, after checking it is delayed), or every match with --all.
func runJobPromote(ctx context.Context, e *env, args []string) error {
	return jobAction(ctx, e, args, core.BulkPromote, nil, func(c *core.Client, id int64) error {
		job, err := c.Get(ctx, id)
		if err != nil {
			return err
		}
		if job.State != core.StateDelayed {
			return fmt.Errorf("job %d is %s, not delayed: nothing to promote", id, job.State)
		}
		if job, err = c.SetState(ctx, id, core.StateInactive); err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "job %d is %s\n", job.ID, job.State)
		return err
	})
}

// stateList is every state, for help texts: "delayed, inactive, …".
func stateList() string { return joinStates(core.States) }
