package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/kuebus/kuebus/core"
)

// runJobSearch lists up to --limit jobs whose id, unique key or data holds
// TEXT, following core's cursor (each call looks at a bounded number of
// jobs) until it has them or every job was looked at. When jobs remain, the
// last line says how to go on.
func runJobSearch(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	state := fs.String("state", "", "only jobs in this `STATE`: delayed, inactive, active, complete, failed")
	jobType := fs.String("type", "", "only jobs of this `TYPE`")
	limit := fs.Int("limit", core.SearchLimitDefault, "list at most `N` jobs")
	cursor := fs.String("cursor", "", "go on from the `CURSOR` a previous search printed")
	pos, err := e.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	req := core.SearchRequest{Q: pos[0], Type: *jobType, Cursor: *cursor}
	if *state != "" {
		if req.State, err = core.ParseState(*state); err != nil {
			return usagef("--state: %v", err)
		}
	}
	if *limit < 1 || *limit > core.MaxSearchLimit {
		return usagef("--limit: %d is outside 1..%d", *limit, core.MaxSearchLimit)
	}
	return cf.withClient(ctx, func(c *core.Client) error {
		var found []core.Job
		for {
			req.Limit = *limit - len(found)
			page, err := c.Search(ctx, req)
			if err != nil {
				return err
			}
			found = append(found, page.Jobs...)
			req.Cursor = page.Cursor
			if req.Cursor == "" || len(found) >= *limit {
				break
			}
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTYPE\tSTATE\tUNIQUE KEY\tCREATED")
		for _, j := range found {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", j.ID, j.Type, j.State, j.UniqueKey,
				time.UnixMilli(j.CreatedAt).Format(time.DateTime))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if req.Cursor != "" {
			_, err = fmt.Fprintf(e.stdout, "more: add --cursor %s\n", req.Cursor)
		}
		return err
	})
}
