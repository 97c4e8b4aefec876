package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/kuebus/kuebus/core"
)

// runJobCancel is `kuebus job cancel ID [--reason R]`: the job ends in
// cancelled; the worker running it, if any, sees its handler's context
// cancelled. A finished job is a conflict (exit 1, core's message).
func runJobCancel(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	reason := fs.String("reason", "", "why (`TEXT`), sent with the job.cancel event")
	pos, err := e.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	id, err := parseID("job cancel: ID", pos[0])
	if err != nil {
		return err
	}
	return cf.withClient(ctx, func(c *core.Client) error {
		job, err := c.Cancel(ctx, id, *reason)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "job %d is %s\n", job.ID, job.State)
		return err
	})
}

// stateList is every state, for help texts: "delayed, inactive, …".
func stateList() string {
	names := make([]string, len(core.States))
	for i, s := range core.States {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
