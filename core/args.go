package core

import "context"

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
