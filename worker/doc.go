// Package worker runs user handlers for kuebus jobs, talking to core over
// NATS only (it never imports go-redis).
//
// Two forms. Kue's, a concurrency per type:
//
//	w, _ := worker.New(worker.Config{Conn: nc})
//	w.Process("email", 8, func(ctx context.Context, job *worker.Job) error { ... },
//		&worker.HandlerOpts{Timeout: 30 * time.Second}) // or nil
//	err := w.Run(ctx)
//
// and the Go one, handlers sharing the worker's concurrency:
//
//	w, _ := worker.New(worker.Config{Conn: nc, Concurrency: 64})
//	w.Handle("email", emailHandler)
//	w.Handle("resize", resizeHandler)
//
// Files:
//
//	doc.go      this comment
//	worker.go   Config, New, Handle and Process, Run and the order of a stop
//	job.go      Handler, Job and the calls a handler makes, NewJob and
//	            JobCalls (a Job without a worker, for tests), RetryAfter,
//	            Discard, and the errors a handler's context ends with
//	deps.go     Job.Dependencies and Results: what a job's dependencies
//	            returned (the fan-in of a flow)
//	args.go     HandleArgs, ProcessArgs: handlers of a job type as a Go type
//	metrics.go  Metrics: the hooks a metrics backend implements, Outcome
//	retrydelay.go the wait before a failed job's next attempt, chosen by the
//	            worker: RetryDelayFunc, RetryDelayer, WithRetryDelay, DelayRetry
//	heartbeat.go the worker's heartbeats to core, for the list of workers
//	pool.go     a pool's leasing loop, running a handler (Execute runs one
//	            without a worker), and turning its outcome into an
//	            acknowledgement
//	registry.go the jobs whose handlers run, and the extension of their leases
//	acker.go    acknowledgements sent to core in batches, and their retries
//	cancel.go   the one job.cancel subscription: a cancelled job's handler
//	            context ends with cause ErrCancelled
//
// It speaks to core through core.Client's typed calls only: Lease, Batch
// (acknowledgements and lease extensions), Progress, AddLog and
// Dependencies; and it
// listens to one event, job.cancel, for the types it handles.
//
// How it runs:
//
//   - Each pool (the Handle'd types, or one Process'd type) has two leasing
//     loops that ask core for as many jobs as there are free slots, in one
//     call each, so that the slots freed while one call is on its way leave
//     in the other; when nothing is ready a call waits at core, which
//     answers as soon as a job arrives. A worker never holds a job it
//     cannot start.
//   - Each job runs in its own goroutine with a context that ends at its
//     time-to-run (ErrTTLExceeded), or sooner at its registration's
//     HandlerOpts.Timeout (ErrTimeout). The handler's Job counts the
//     attempt that runs in Attempts, from 1. Its lease is extended while it runs,
//     once half the ttl has passed since the lease was last set; a handler
//     that ignores its context past the ttl is no longer covered, so the
//     promoter's rescue gives the job to someone else.
//   - Outcomes go to core in batches (core.batch): nil completes, an error
//     fails the attempt (retried while attempts remain, after the job's
//     backoff), RetryAfter rejoins without using an attempt, Discard fails
//     for good, a panic fails the attempt and puts the stack in the job's
//     log and its error history (as does a Stacker error's stack).
//     Config.OnError runs for each failed attempt, Config.OnFailed when a
//     job has failed for good, Config.OnCancel (not OnError) when a person
//     cancelled a job while it ran. A batch
//     core does not answer (unavailable, or no answer in time) is sent
//     again with backoff until its leases would have run out: core applies
//     complete, fail, release and rejoin once per lease token and answers a
//     repeat with success, so a retry never runs or counts anything twice.
//     Its first unanswered try logs a warning; later tries log at debug.
//   - A job cancelled while it runs (core's cancel) ends its handler's
//     context with cause ErrCancelled: the worker subscribes once to
//     job.cancel.*.<type> (job.cancel.*.* when it handles several types)
//     and looks the id up among its running jobs. Core cancelled the job
//     before it published the event, so the acknowledgement that follows
//     answers conflict and changes nothing; the worker expects that (a
//     debug line, no retry).
//   - A lease call that gets no answer within LeaseWait plus half a second
//     went to a core that died; the next call goes out at once and reaches
//     a live core, so a worker idles at most about that long after its core
//     dies.
//   - Run's context ending stops leasing, lets handlers finish within
//     ShutdownTimeout, then cancels the rest (ErrShutdown) and releases their
//     jobs, which uses no attempt. Acknowledgements and releases core does
//     not answer are retried for up to ShutdownTimeout more, then given up,
//     a call in flight included, with one warning line.
//
// Delivery is at least once: a handler must be idempotent.
package worker
