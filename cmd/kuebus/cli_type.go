package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// kuebus type set, get, ls: a job type's policy (DESIGN §10.1). set
// replaces the whole policy with what its flags give: a flag left out is
// no limit, or no default.

func runTypeSet(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	concurrency := fs.Int64("concurrency", 0, "at most `N` jobs of the type active at once, across every worker and core (0: no limit)")
	rate := fs.String("rate", "", "at most N jobs of the type start in any window, as `N/DURATION` (100/1s, 5/250ms)")
	groupConcurrency := fs.Int64("group-concurrency", 0, "at most `N` jobs of each group active at once (0: no limit)")
	groupRate := fs.String("group-rate", "", "at most N jobs of each group start in any window, as `N/DURATION`")
	aging := fs.String("aging", "", "priority as time credit: a job ranks as if created priority × `DURATION` later (default: strict priority)")
	priority := fs.String("priority", "", "default `PRIORITY` of the type's jobs: a name or an integer")
	attempts := fs.Int("attempts", 0, "default number of attempts (`N`) of the type's jobs")
	backoff := fs.String("backoff", "", "default backoff of the type's jobs, a `SPEC`: fixed:D waits D each time, exponential:D waits D, then 3D, 7D, …")
	ttl := fs.String("ttl", "", "default ttl of the type's jobs, a `DURATION`")
	stallLimit := fs.String("stall-limit", "", "default stall limit (`N`) of the type's jobs")
	var removeOnComplete, removeOnFail retentionFlag
	fs.Var(&removeOnComplete, "remove-on-complete", "default retention of the type's complete jobs: true, or age=DURATION,count=N")
	fs.Var(&removeOnFail, "remove-on-fail", "the same, for its failed jobs")
	pos, err := e.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if err := bus.ValidToken(pos[0]); err != nil {
		return usagef("type set: %q is not a job type: %v", pos[0], err)
	}
	p := core.TypePolicy{Type: pos[0], Concurrency: *concurrency, GroupConcurrency: *groupConcurrency}
	if p.Rate, err = parseRate("rate", *rate); err != nil {
		return err
	}
	if p.GroupRate, err = parseRate("group-rate", *groupRate); err != nil {
		return err
	}
	if *aging != "" {
		d, err := parseMillis("aging", *aging)
		if err != nil {
			return err
		}
		p.Aging = &core.Aging{Per: d}
	}
	d := core.TypeDefaults{MaxAttempts: *attempts, RemoveOnComplete: removeOnComplete.r, RemoveOnFail: removeOnFail.r}
	if *priority != "" {
		if d.Priority, err = core.ParsePriority(*priority); err != nil {
			return usagef("--priority: %v", err)
		}
	}
	if *backoff != "" {
		if d.Backoff, err = parseBackoff(*backoff); err != nil {
			return err
		}
	}
	if *ttl != "" {
		t, err := parseMillis("ttl", *ttl)
		if err != nil {
			return err
		}
		d.TTL = t
	}
	if d.StallLimit, err = parseStallLimit(*stallLimit); err != nil {
		return err
	}
	if d != (core.TypeDefaults{}) {
		p.Defaults = &d
	}
	return cf.withClient(ctx, func(c *core.Client) error {
		stored, err := c.SetType(ctx, &p)
		if err != nil {
			return err
		}
		return printJSON(e.stdout, stored)
	})
}

// parseRate reads N/DURATION ("" for none); core checks the bounds.
func parseRate(flagName, s string) (*core.Rate, error) {
	if s == "" {
		return nil, nil
	}
	n, per, ok := strings.Cut(s, "/")
	limit, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || limit < 1 {
		return nil, usagef("--%s: %q is not N/DURATION with N a whole number of 1 or more (100/1s)", flagName, s)
	}
	d, err := parseMillis(flagName, per)
	if err != nil {
		return nil, err
	}
	return &core.Rate{Limit: limit, Per: d}, nil
}

func runTypeGet(ctx context.Context, e *env, args []string) error {
	return withArg(ctx, e, args, func(s string) (string, error) {
		if err := bus.ValidToken(s); err != nil {
			return "", usagef("%s: %q is not a job type: %v", e.cmd.path(), s, err)
		}
		return s, nil
	}, func(c *core.Client, jobType string) error {
		p, err := c.GetType(ctx, jobType)
		if err != nil {
			return err
		}
		return printJSON(e.stdout, p)
	})
}

func runTypeList(ctx context.Context, e *env, args []string) error {
	return withClient(ctx, e, args, func(c *core.Client) error {
		list, err := c.ListTypes(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TYPE\tCONCURRENCY\tRATE\tGROUP CONCURRENCY\tGROUP RATE\tAGING\tDEFAULTS")
		for _, p := range list {
			defaults := "-"
			if p.Defaults != nil {
				b, err := json.Marshal(p.Defaults)
				if err != nil {
					return err
				}
				defaults = string(b)
			}
			aging := "-"
			if p.Aging != nil {
				aging = p.Aging.Per.String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Type, orNone(p.Concurrency), rateText(p.Rate),
				orNone(p.GroupConcurrency), rateText(p.GroupRate), aging, defaults)
		}
		return tw.Flush()
	})
}

func orNone(n int64) string {
	if n == 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

func rateText(r *core.Rate) string {
	if r == nil {
		return "-"
	}
	return strconv.FormatInt(r.Limit, 10) + "/" + r.Per.String()
}

// runJobWhy is kuebus job why ID: explain's reason and detail, one line
// ("queued: 2 jobs of its type run before it"); --json prints the reply.
func runJobWhy(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print explain's reply as JSON, with the numbers of the reason")
	pos, err := e.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	id, err := parseID(e.cmd.path()+": ID", pos[0])
	if err != nil {
		return err
	}
	return cf.withClient(ctx, func(c *core.Client) error {
		ex, err := c.Explain(ctx, id)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, ex)
		}
		_, err = fmt.Fprintf(e.stdout, "%s (%s): %s\n", ex.Reason, ex.State, ex.Detail)
		return err
	})
}
