package main

import (
	"context"

	"github.com/kuebus/kuebus/core"
)

// runBroadcast creates a broadcast job (DESIGN §10.4): when it is due, core
// publishes it with its data on job.broadcast.<id>.<type> to every
// listener, and no worker leases it. It prints the job as JSON.
func runBroadcast(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	data := fs.String("data", "", "what every listener receives, as `JSON` (default: none)")
	delay := fs.String("delay", "0", "publish it after this `DURATION` (5s, or milliseconds), never before (default: at once)")
	pos, err := e.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	sp := core.Spec{Type: pos[0], Broadcast: true}
	if *data != "" {
		if sp.Data, err = parseJSON("data", *data); err != nil {
			return err
		}
	}
	d, err := parseMillis("delay", *delay)
	if err != nil {
		return err
	}
	sp.Delay = d
	return cf.withClient(ctx, func(c *core.Client) error {
		job, err := c.CreateSpec(ctx, sp)
		if err != nil {
			return err
		}
		return printJSON(e.stdout, job)
	})
}
