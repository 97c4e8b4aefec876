package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/kuebus/kuebus/core"
)

func runJobCreate(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	var sf specFlags
	sf.register(fs)
	// Ids come in blocks per type and core, so a script takes the id from
	// the reply rather than guessing it.
	quiet := fs.Bool("quiet", false, "print only the job's id, for a script: ID=$(kuebus job create email --quiet)")
	var df depFlags
	df.register(fs)
	pos, err := e.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	sp, err := sf.spec(pos[0])
	if err != nil {
		return err
	}
	if err := df.apply(&sp); err != nil {
		return err
	}
	return cf.withClient(ctx, func(c *core.Client) error {
		job, err := c.CreateSpec(ctx, sp)
		if err != nil {
			return err
		}
		if *quiet {
			_, err := fmt.Fprintln(e.stdout, job.ID)
			return err
		}
		return printJSON(e.stdout, job)
	})
}

// runJobGet prints a job by id, or the unfinished job of a type that
// holds a unique key (--type and --key).
func runJobGet(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	jobType := fs.String("type", "", "with --key: the `TYPE` whose unfinished job holds the key")
	key := fs.String("key", "", "with --type: the unique `KEY` to look up")
	pos, err := e.parse(fs, args, 0, 1)
	if err != nil {
		return err
	}
	byKey := *jobType != "" || *key != ""
	var id int64
	switch {
	case byKey && len(pos) > 0:
		return usagef("job get: give an ID, or --type and --key, not both")
	case byKey && (*jobType == "" || *key == ""):
		return usagef("job get: --type and --key go together")
	case !byKey && len(pos) == 0:
		return usagef("job get: missing argument: usage: kuebus job get [flags] %s", e.cmd.args)
	case !byKey:
		if id, err = parseID("job get: ID", pos[0]); err != nil {
			return err
		}
	}
	return cf.withClient(ctx, func(c *core.Client) error {
		var job *core.Job
		if byKey {
			job, err = c.GetByKey(ctx, *jobType, *key)
		} else {
			job, err = c.Get(ctx, id)
		}
		if err != nil {
			return err
		}
		return printJSON(e.stdout, job)
	})
}

// runJobLog prints a job's log lines; with --time each after the time it
// was added (UTC, ms; "-" for a line stored before lines had times).
func runJobLog(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	withTime := fs.Bool("time", false, "print each line after the time it was added")
	pos, err := e.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	id, err := parseID(e.cmd.path()+": ID", pos[0])
	if err != nil {
		return err
	}
	return cf.withClient(ctx, func(c *core.Client) error {
		entries, err := c.LogEntries(ctx, id)
		if err != nil {
			return err
		}
		for _, en := range entries {
			line := en.Line
			if *withTime {
				at := "-"
				if en.At != 0 {
					at = time.UnixMilli(en.At).UTC().Format("2006-01-02T15:04:05.000Z")
				}
				line = at + " " + line
			}
			if _, err := fmt.Fprintln(e.stdout, line); err != nil {
				return err
			}
		}
		return nil
	})
}

// withJobID runs a command whose one argument is a job id.
func withJobID(ctx context.Context, e *env, args []string, fn func(*core.Client, int64) error) error {
	return withArg(ctx, e, args, func(s string) (int64, error) { return parseID(e.cmd.path()+": ID", s) }, fn)
}

// withArg parses the connection flags and the command's one argument,
// checked by parse before any call (a bad one is a usage error), and calls
// fn with a client.
func withArg[T any](ctx context.Context, e *env, args []string, parse func(string) (T, error), fn func(*core.Client, T) error) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	pos, err := e.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	arg, err := parse(pos[0])
	if err != nil {
		return err
	}
	return cf.withClient(ctx, func(c *core.Client) error { return fn(c, arg) })
}

// withClient parses the connection flags of a command that takes no
// argument and calls fn with a client.
func withClient(ctx context.Context, e *env, args []string, fn func(*core.Client) error) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	if _, err := e.parse(fs, args, 0, 0); err != nil {
		return err
	}
	return cf.withClient(ctx, fn)
}

func runJobState(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	pos, err := e.parse(fs, args, 2, 2)
	if err != nil {
		return err
	}
	id, err := parseID("job state: ID", pos[0])
	if err != nil {
		return err
	}
	state, err := core.ParseState(pos[1])
	if err != nil {
		return usagef("job state: STATE %v", err)
	}
	return cf.withClient(ctx, func(c *core.Client) error {
		job, err := c.SetState(ctx, id, state)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "job %d is %s\n", job.ID, job.State)
		return err
	})
}

func runJobPriority(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	pos, err := e.parse(fs, args, 2, 2)
	if err != nil {
		return err
	}
	id, err := parseID("job priority: ID", pos[0])
	if err != nil {
		return err
	}
	p, err := core.ParsePriority(pos[1])
	if err != nil {
		return usagef("job priority: PRIORITY %v", err)
	}
	return cf.withClient(ctx, func(c *core.Client) error {
		job, err := c.SetPriority(ctx, id, p)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "job %d has priority %s\n", job.ID, priorityName(job.Priority))
		return err
	})
}

// runJobList lists jobs by state and type: positions --from..--to, or,
// with --limit or --cursor, a page by cursor, whose last line says how to
// go on. A list of every type (no --type) reads by position only up to
// core.MaxUntypedPosition; core refuses deeper positions, naming the
// cursor, which pages at any depth.
func runJobList(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	state := fs.String("state", "", "only jobs in this `STATE`: "+stateList())
	jobType := fs.String("type", "", "only jobs of this `TYPE`")
	from := fs.Int64("from", 0, "first `POSITION` to list, 0-based")
	to := fs.Int64("to", 19, "last `POSITION` to list, inclusive")
	order := fs.String("order", "asc", "`ORDER` of the list: asc, the state's order (queue order; finish time; without --state, creation time, oldest first), or desc")
	limit := fs.Int("limit", 0, fmt.Sprintf("page by cursor: list `N` jobs (1..%d, default %d with --cursor)", core.MaxRangeSize, core.RangeLimitDefault))
	cursor := fs.String("cursor", "", "page by cursor: list the jobs after the `CURSOR` a previous list printed")
	if _, err := e.parse(fs, args, 0, 0); err != nil {
		return err
	}
	positions := false
	fs.Visit(func(f *flag.Flag) { positions = positions || f.Name == "from" || f.Name == "to" })
	req := core.RangeRequest{Type: *jobType, Order: core.Order(*order)}
	if *state != "" {
		st, err := core.ParseState(*state)
		if err != nil {
			return usagef("--state: %v", err)
		}
		req.State = st
	}
	byCursor := *limit != 0 || *cursor != ""
	switch {
	case req.Order != core.OrderAsc && req.Order != core.OrderDesc:
		return usagef("--order: %q is not asc or desc", *order)
	case byCursor && positions:
		return usagef("--from, --to: give positions, or --limit and --cursor, not both")
	case byCursor && (*limit < 0 || *limit > core.MaxRangeSize):
		return usagef("--limit: %d is outside 1..%d", *limit, core.MaxRangeSize)
	case !byCursor && *from < 0:
		return usagef("--from: %d is negative", *from)
	case !byCursor && *to < *from:
		return usagef("--to: %d is before --from %d", *to, *from)
	}
	return cf.withClient(ctx, func(c *core.Client) error {
		var jobs []core.Job
		var next string
		var err error
		if byCursor {
			req.Cursor, req.Limit = *cursor, cmp.Or(*limit, core.RangeLimitDefault)
			jobs, next, err = rangeCursorPage(ctx, c, req)
		} else {
			req.From, req.To = *from, *to
			jobs, err = rangeWindow(ctx, c, req)
		}
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTYPE\tSTATE\tPRIORITY\tATTEMPTS\tCREATED")
		for _, j := range jobs {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\t%s\n", j.ID, j.Type, j.State, priorityName(j.Priority),
				j.Attempts, j.MaxAttempts, time.UnixMilli(j.CreatedAt).Format(time.DateTime))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if next != "" {
			_, err = fmt.Fprintf(e.stdout, "more: add --cursor %s\n", next)
		}
		return err
	})
}

// rangeCursorPage reads req.Limit jobs after req.Cursor, following the
// cursor of replies cut to fit one message, and returns the cursor to go
// on from ("" at the end).
func rangeCursorPage(ctx context.Context, c *core.Client, req core.RangeRequest) ([]core.Job, string, error) {
	var jobs []core.Job
	want := req.Limit
	for {
		req.Limit = want - len(jobs)
		page, err := c.RangePage(ctx, req)
		if err != nil {
			return nil, "", err
		}
		jobs = append(jobs, page.Jobs...)
		if page.Cursor == "" || len(jobs) >= want {
			return jobs, page.Cursor, nil
		}
		if page.Cursor == req.Cursor {
			return nil, "", fmt.Errorf("job ls: core answered cursor %s with itself, which does not go on", req.Cursor)
		}
		req.Cursor = page.Cursor
	}
}

// rangeWindow reads the whole window req asks for. Core answers only the
// jobs that fit one NATS message and says where the rest starts (Next); a
// user who asked for positions From..To expects all of them, so follow Next
// until the window is read. Core bounds a window to MaxRangeSize jobs and
// every page holds at least one, so this ends. Pages are separate reads: a
// job that moves between them may be listed twice or not at all.
func rangeWindow(ctx context.Context, c *core.Client, req core.RangeRequest) ([]core.Job, error) {
	var jobs []core.Job
	for {
		page, err := c.RangePage(ctx, req)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, page.Jobs...)
		if page.Next == 0 || page.Next > req.To {
			return jobs, nil
		}
		if page.Next <= req.From {
			return nil, fmt.Errorf("job ls: core answered from %d with next %d, which does not go on", req.From, page.Next)
		}
		req.From = page.Next
	}
}

// priorityName shows Kue's name of a priority, or its number.
func priorityName(p core.Priority) string {
	switch p {
	case core.PriorityLow:
		return "low"
	case core.PriorityNormal:
		return "normal"
	case core.PriorityMedium:
		return "medium"
	case core.PriorityHigh:
		return "high"
	case core.PriorityCritical:
		return "critical"
	}
	return strconv.FormatInt(int64(p), 10)
}

func printJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}
