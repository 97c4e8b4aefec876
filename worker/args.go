package worker

import (
	"context"
	"fmt"

	"github.com/kuebus/kuebus/core"
)

// HandleArgs registers fn for the jobs of A's type (A's JobType), sharing
// Config.Concurrency as Handle does, with opts (nil: none), its timeout
// and retry delay. Each job's data is decoded into a fresh A before fn
// runs; data that does not decode fails the job for good (Discard), since
// no retry would change it.
//
//	worker.HandleArgs(w, func(ctx context.Context, job *worker.Job, args Welcome) error {
//		return send(ctx, args.To)
//	}, &worker.HandlerOpts{Timeout: 10 * time.Second})
func HandleArgs[A core.Args](w *Worker, fn func(ctx context.Context, job *Job, args A) error, opts *HandlerOpts) {
	var zero A
	w.handleShared(zero.JobType(), ArgsHandler(fn), opts)
}

// ProcessArgs is HandleArgs with a concurrency of A's type's own, as
// Process.
func ProcessArgs[A core.Args](w *Worker, concurrency int, fn func(ctx context.Context, job *Job, args A) error, opts *HandlerOpts) {
	var zero A
	w.process(zero.JobType(), concurrency, ArgsHandler(fn), opts)
}

// ArgsHandler is the Handler HandleArgs registers for fn: it decodes each
// job's data into a fresh A, failing the job for good (Discard) when it
// does not decode. For running fn without a worker (kuebustest).
func ArgsHandler[A core.Args](fn func(ctx context.Context, job *Job, args A) error) HandlerFunc {
	return func(ctx context.Context, job *Job) error {
		var args A
		if err := job.Decode(&args); err != nil {
			return Discard(fmt.Errorf("job %d: data is no %T: %w", job.ID, args, err))
		}
		return fn(ctx, job, args)
	}
}
