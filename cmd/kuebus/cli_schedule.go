package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

func runScheduleSet(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	cronExpr := fs.String("cron", "", "tick at the times of a cron `EXPR`: 5 fields, 6 with seconds first, or @hourly, @daily, ...")
	every := fs.String("every", "", "tick every `DURATION` (1m, or milliseconds; at least 1s)")
	tz := fs.String("tz", "", "read --cron in this IANA time `ZONE` (default UTC)")
	jobType := fs.String("type", "", "the `TYPE` of the jobs the schedule creates (required)")
	paused := fs.Bool("paused", false, "keep the schedule but fire none of its ticks")
	var sf specFlags
	sf.register(fs)
	pos, err := e.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if err := bus.ValidToken(pos[0]); err != nil {
		return usagef("schedule set: %q is not a schedule name: %v", pos[0], err)
	}
	req := core.ScheduleSetRequest{Name: pos[0], Cron: *cronExpr, TZ: *tz, Paused: *paused}
	switch {
	case (*cronExpr == "") == (*every == ""):
		return usagef("schedule set: give one of --cron and --every")
	case *every != "":
		d, err := parseMillis("every", *every)
		if err != nil {
			return err
		}
		req.Every = &d
	}
	if *jobType == "" {
		return usagef("schedule set: --type is required")
	}
	if req.Spec, err = sf.spec(*jobType); err != nil {
		return err
	}
	return cf.withClient(ctx, func(c *core.Client) error {
		sc, err := c.SetSchedule(ctx, &req)
		if err != nil {
			return err
		}
		return printJSON(e.stdout, sc)
	})
}

func runScheduleList(ctx context.Context, e *env, args []string) error {
	return withClient(ctx, e, args, func(c *core.Client) error {
		list, err := c.Schedules(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tTYPE\tWHEN\tNEXT\tLAST")
		for _, sc := range list {
			when := sc.Cron
			if sc.TZ != "" {
				when += " (" + sc.TZ + ")"
			}
			if sc.Every > 0 {
				when = "every " + sc.Every.String()
			}
			next := "paused"
			if !sc.Paused {
				next = stamp(sc.NextAt)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", sc.Name, sc.Spec.Type, when, next, stamp(sc.LastAt))
		}
		return tw.Flush()
	})
}

// stamp prints a unix ms time in UTC, "-" for none.
func stamp(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}

func runScheduleRemove(ctx context.Context, e *env, args []string) error {
	return withArg(ctx, e, args, func(s string) (string, error) {
		if err := bus.ValidToken(s); err != nil {
			return "", usagef("%s: %q is not a schedule name: %v", e.cmd.path(), s, err)
		}
		return s, nil
	}, func(c *core.Client, name string) error {
		if err := c.RemoveSchedule(ctx, name); err != nil {
			return err
		}
		_, err := fmt.Fprintf(e.stdout, "removed schedule %s\n", name)
		return err
	})
}
