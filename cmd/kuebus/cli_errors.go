package main

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/kuebus/kuebus/core"
)

// runJobErrors prints core's failed_errors for TYPE: one line per group of
// failed jobs with the same normalised error, the largest first, and how
// to retry one group.
func runJobErrors(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	limit := fs.Int("limit", core.FailedErrorsLimitDefault, fmt.Sprintf("group the newest `N` failed jobs (at most %d)", core.MaxFailedErrorsLimit))
	pos, err := e.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *limit < 1 || *limit > core.MaxFailedErrorsLimit {
		return usagef("--limit: %d is outside 1..%d", *limit, core.MaxFailedErrorsLimit)
	}
	return cf.withClient(ctx, func(c *core.Client) error {
		reply, err := c.FailedErrors(ctx, core.FailedErrorsRequest{Type: pos[0], Limit: *limit})
		if err != nil {
			return err
		}
		if reply.Read < int(reply.Failed) {
			fmt.Fprintf(e.stdout, "the newest %d of %d failed jobs:\n", reply.Read, reply.Failed)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "JOBS\tFIRST\tLAST\tNEWEST\tERROR")
		at := func(ms int64) string { return time.UnixMilli(ms).Format(time.DateTime) }
		for _, g := range reply.Groups {
			group := g.Group
			if group == "" {
				group = "(no error text)"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\n", g.Count, at(g.FirstAt), at(g.LastAt), g.JobID, group)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(reply.Groups) > 0 && reply.Groups[0].Group != "" {
			_, err = fmt.Fprintf(e.stdout, "retry a group: kuebus job retry --all --state failed --type %s --error-group %s\n",
				pos[0], strconv.Quote(reply.Groups[0].Group))
		}
		return err
	})
}
