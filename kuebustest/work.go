package kuebustest

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/worker"
)

// JobOpts says what a job made for a test looks like; nil: the job of a
// first attempt with the defaults core gives a new job.
type JobOpts struct {
	// CreateOpts are the job's options, as a producer gives them: Priority,
	// MaxAttempts, Backoff, TTL (default core.TTLDefault ms), UniqueKey, ...
	core.CreateOpts
	// ID is the job's id. Default 1.
	ID int64
	// Attempt is the attempt the handler runs, from 1 (Job.Attempts).
	// Default 1.
	Attempt int
	// Dependencies are what the job's dependencies became, as
	// Job.Dependencies (and worker.Results, the fan-in helper) give them
	// to the handler: the job depends on their ids.
	Dependencies []core.DepJob
}

// NewJob returns a job as a handler gets it from a worker: of jobType,
// with data (as JSON, unless it is a json.RawMessage already), leased for
// its opts.Attempt-th attempt. Work runs a handler with it; the job
// records what the handler logs and reports. It panics when data does
// not marshal or the options are invalid: a test's mistake.
func NewJob(jobType string, data any, opts *JobOpts) *Job {
	if opts == nil {
		opts = &JobOpts{}
	}
	sp, err := opts.Spec(jobType, data)
	if err != nil {
		panic("kuebustest: " + err.Error())
	}
	if err := sp.Normalize(core.MaxDataBytesDefault); err != nil {
		panic("kuebustest: " + err.Error())
	}
	now := time.Now().UnixMilli()
	rec := &recorder{deps: opts.Dependencies}
	for _, d := range opts.Dependencies {
		sp.DependsOn = append(sp.DependsOn, d.ID)
	}
	// the job as core creates it, then as a lease hands it out
	cj := sp.NewJob(max(opts.ID, 1), now)
	cj.State, cj.Attempts, cj.PromoteAt, cj.StartedAt = core.StateActive, max(opts.Attempt, 1), now, now
	cj.WorkerID, cj.Lease, cj.LeaseUntil = "kuebustest", "kuebustest", now+sp.TTL.Milliseconds()
	return &Job{Job: worker.NewJob(cj, rec), rec: rec}
}

// Job is a worker.Job made for a test: what its handler logs and reports
// is recorded for the Result.
type Job struct {
	*worker.Job
	rec *recorder
}

// Outcome is how a handler run ended, as a worker would tell core:
// worker.OutcomeComplete, OutcomeFail (the attempt failed: retried while
// attempts remain), OutcomeDiscard (failed for good) or OutcomeRetryAfter
// (put back without using an attempt).
type Outcome = worker.Outcome

// Progress is one progress report: complete of total.
type Progress struct {
	Complete, Total int64
}

// Result is what a handler run did.
type Result struct {
	// Outcome is how it ended.
	Outcome Outcome
	// Err is the handler's error, as the worker would judge it (a panic is
	// a *worker.PanicError, a run past the ttl worker.ErrTTLExceeded);
	// nil when the job completes.
	Err error
	// Result is what the handler stored with SetResult (nil: nothing).
	Result json.RawMessage
	// Logs are the lines the handler logged, in order.
	Logs []string
	// Progress are the handler's progress reports, in order.
	Progress []Progress
	// Retry is the wait before the next attempt that the handler's error
	// asks for (worker.RetryAfter, worker.DelayRetry); -1 when it asks for
	// none (the job's backoff, or no retry).
	Retry time.Duration
}

// Work runs h with job inline, as a worker runs a leased job
// (worker.Execute): its context ends at the job's ttl, a panic becomes the
// attempt's error. Nothing is sent anywhere; the Result tells what
// happened. The worker's middleware and retry delays are not run.
func Work(ctx context.Context, h worker.Handler, job *Job) *Result {
	err := worker.Execute(ctx, h, job.Job, nil)
	res := &Result{Outcome: worker.OutcomeOf(err), Err: err, Retry: retryOf(err)}
	if err == nil {
		res.Result = job.Result
	}
	res.Logs, res.Progress = job.rec.lines(), job.rec.reports()
	return res
}

// WorkArgs runs fn inline with a job of A's type made from args and opts,
// as worker.HandleArgs would run it.
func WorkArgs[A core.Args](ctx context.Context, fn func(ctx context.Context, job *worker.Job, args A) error, args A, opts *JobOpts) *Result {
	return Work(ctx, worker.ArgsHandler(fn), NewJob(args.JobType(), args, opts))
}

// retryOf is the wait err asks for, or -1 for none.
func retryOf(err error) time.Duration {
	if d, ok := worker.RetryWaitOf(err); ok {
		return d
	}
	return -1
}

// recorder is a test job's worker.JobCalls: it keeps what the handler
// sends, safe for a handler's own goroutines.
type recorder struct {
	mu       sync.Mutex
	logs     []string
	progress []Progress
	deps     []core.DepJob // set once, before the handler runs
}

func (r *recorder) AddLog(_ context.Context, _ int64, line string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, line)
	return nil
}

func (r *recorder) Progress(_ context.Context, op core.LeaseOp) error {
	var p Progress
	if op.Complete != nil {
		p.Complete = *op.Complete
	}
	if op.Total != nil {
		p.Total = *op.Total
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress = append(r.progress, p)
	return nil
}

// Dependencies gives the job's dependencies as the test set them
// (JobOpts.Dependencies).
func (r *recorder) Dependencies(context.Context, int64) ([]core.DepJob, error) {
	return r.deps, nil
}

func (r *recorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.logs...)
}

func (r *recorder) reports() []Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Progress(nil), r.progress...)
}
