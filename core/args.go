package core

import (
	"context"
)

// Args is the data of one job type as a Go type. JobType names the type
// its jobs are created as (CreateArgs) and handled by (worker.HandleArgs),
// so that a producer and a worker sharing the Go type cannot disagree on
// the name. Make it a struct (not a pointer) whose JobType reads no field:
// the worker asks the zero value.
//
//	type Welcome struct{ To string `json:"to"` }
//	func (Welcome) JobType() string { return "welcome" }
type Args interface {
	JobType() string
}

// CreateArgs creates a job of args' type with args, as JSON, for its data.
func CreateArgs[A Args](ctx context.Context, c *Client, args A, opts *CreateOpts) (*Job, error) {
	return c.Create(ctx, args.JobType(), args, opts)
}

// CreateArgsBulk creates a job of A's type for each of args, with it, as
// JSON, for its data, and opts (nil: none) for every job: one create_bulk,
// all or none. The jobs come back in the order of args.
func CreateArgsBulk[A Args](ctx context.Context, c *Client, args []A, opts *CreateOpts) ([]Job, error) {
	specs := make([]Spec, len(args))
	for i, a := range args {
		sp, err := opts.Spec(a.JobType(), a)
		if err != nil {
			return nil, err
		}
		specs[i] = sp
	}
	return c.CreateBulk(ctx, specs)
}

// SetScheduleArgs creates or replaces the schedule req names, whose every
// tick creates a job of args' type with args, as JSON, for its data, and
// opts (nil: none). req gives the name and the timing (Cron or Every, TZ,
// Paused); its Spec is made here, so one already in it is refused
// (invalid).
//
//	every := time.Hour
//	core.SetScheduleArgs(ctx, client, &core.ScheduleSetRequest{Name: "digest", Every: &every},
//		Digest{List: "weekly"}, &core.CreateOpts{MaxAttempts: 3})
func SetScheduleArgs[A Args](ctx context.Context, c *Client, req *ScheduleSetRequest, args A, opts *CreateOpts) (*Schedule, error) {
	if req.Spec.Type != "" || len(req.Spec.Data) > 0 {
		return nil, Invalidf("spec", "SetScheduleArgs makes the spec from args and opts: leave req.Spec empty")
	}
	sp, err := opts.Spec(args.JobType(), args)
	if err != nil {
		return nil, err
	}
	withSpec := *req
	withSpec.Spec = sp
	return c.SetSchedule(ctx, &withSpec)
}
