package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/worker"
)

// runWorker is a demo worker: it logs every job of the given types, takes
// --work to do it (reporting progress halfway), and completes it; with
// --fail-rate some attempts fail instead, so that retries and backoff show,
// and with --log each attempt writes to the job's own log. It stops
// gracefully on SIGINT/SIGTERM and exits 0 then, also when the grace
// period ran out and unfinished jobs were released (one warning line says
// so): a stop that was asked for is not a failure.
func runWorker(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	concurrency := fs.Int("concurrency", 4, "how many jobs run at once, `N`")
	work := fs.Duration("work", 0, "how long each job takes, a `DURATION` (0: done at once)")
	grace := fs.Duration("grace", 10*time.Second, "how long running jobs may finish after a stop signal, a `DURATION`")
	failRate := fs.Float64("fail-rate", 0, "the share of attempts that fail, from 0 to 1 (`RATE`), to show retries and backoff")
	jobLog := fs.Bool("log", false, "write each attempt's start and end to the job's own log (kuebus job log ID)")
	var lf logFlags
	lf.register(fs, "text")
	types, err := e.parse(fs, args, 1, -1)
	if err != nil {
		return err
	}
	for _, t := range types {
		if err := bus.ValidToken(t); err != nil {
			return usagef("worker: %q is not a job type: %v", t, err)
		}
	}
	if *concurrency <= 0 {
		return usagef("--concurrency: %d is not positive", *concurrency)
	}
	if *work < 0 || *grace < 0 {
		return usagef("--work and --grace must not be negative")
	}
	if !(*failRate >= 0 && *failRate <= 1) { // also refuses NaN
		return usagef("--fail-rate: %v is outside 0..1", *failRate)
	}
	if _, err := cf.check(); err != nil {
		return err
	}
	log, _, err := lf.logger(e.stderr)
	if err != nil {
		return err
	}
	nc, err := cf.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	w, err := worker.New(worker.Config{
		Conn: nc, Prefix: cf.prefix, Concurrency: *concurrency, ShutdownTimeout: *grace, Logger: log,
	})
	if err != nil {
		return usagef("worker: %v", err)
	}
	handler := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		attempt := job.Attempts // counted from 1
		log.Info("job", "job_id", job.ID, "type", job.Type, "attempt", attempt, "data", string(job.Data))
		if *jobLog {
			if err := job.Log(ctx, fmt.Sprintf("attempt %d of %d started by kuebus worker", attempt, job.MaxAttempts)); err != nil {
				return err
			}
		}
		if *work > 0 {
			if err := workFor(ctx, *work/2); err != nil {
				return err
			}
			if err := job.Progress(ctx, 1, 2); err != nil {
				return err
			}
			if err := workFor(ctx, *work-*work/2); err != nil {
				return err
			}
		}
		if *failRate > 0 && rand.Float64() < *failRate {
			err := fmt.Errorf("attempt %d failed on purpose (--fail-rate %v)", attempt, *failRate)
			log.Info("job failed", "job_id", job.ID, "attempt", attempt, "err", err)
			if *jobLog {
				_ = job.Log(ctx, err.Error()) // the failure itself is what counts
			}
			return err
		}
		if *jobLog {
			if err := job.Log(ctx, fmt.Sprintf("attempt %d done", attempt)); err != nil {
				return err
			}
		}
		return job.SetResult(map[string]string{"done_by": "kuebus worker"})
	})
	for _, t := range types {
		w.Handle(t, handler)
	}
	log.Info("worker running", "types", types, "concurrency", *concurrency, "nats_url", redactURL(cf.url))
	// A stop whose grace period ran out (ErrShutdown) obeyed the signal:
	// the handlers still running were cancelled and their jobs released,
	// using no attempt, to run again elsewhere; the worker has logged one
	// line saying how many. That is what a stop asks for, so it exits 0
	// like a drained stop.
	if err := w.Run(ctx); err != nil && !errors.Is(err, worker.ErrShutdown) {
		return err // the worker's errors name it already ("worker: ...")
	}
	log.Info("worker stopped")
	return nil
}

// workFor waits d, or fails with the context's error when it ends first.
func workFor(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
