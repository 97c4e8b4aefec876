package worker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/worker"
)

// Welcome is the data of the "welcome" job type as a Go type: producer and
// worker share it, and with it the type's name.
type Welcome struct {
	To string `json:"to"`
}

func (Welcome) JobType() string { return "welcome" }

// A typed producer and worker: core.CreateArgs creates a job of Welcome's
// type, worker.HandleArgs decodes each job's data into a Welcome.
func ExampleHandleArgs() {
	natsURL, stop := nodetest.Queue() // a queue of its own: NATS, core, Redis
	defer stop()
	nc, _ := nats.Connect(natsURL)
	defer nc.Close()
	client, _ := core.NewClient(nc, nil)

	ctx, cancel := context.WithCancel(context.Background())
	w, _ := worker.New(worker.Config{Conn: nc})
	worker.HandleArgs(w, func(ctx context.Context, job *worker.Job, args Welcome) error {
		fmt.Println("welcome mail to", args.To)
		return job.SetResult(map[string]string{"sent_to": args.To})
	}, nil)
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()

	job, _ := core.CreateArgs(ctx, client, Welcome{To: "ada@example.com"}, nil)
	waitCtx, stopWaiting := context.WithTimeout(ctx, time.Minute)
	finished, _ := client.Await(waitCtx, job.ID)
	stopWaiting()
	fmt.Println(finished.Type, finished.State, string(finished.Result))
	cancel()
	<-done
	// Output:
	// welcome mail to ada@example.com
	// welcome complete {"sent_to":"ada@example.com"}
}

// Middleware wraps every handler; OnError hears every failed attempt,
// OnFailed the job that failed for good.
func ExampleConfig_middleware() {
	natsURL, stop := nodetest.Queue()
	defer stop()
	nc, _ := nats.Connect(natsURL)
	defer nc.Close()
	client, _ := core.NewClient(nc, nil)

	logged := func(next worker.Handler) worker.Handler {
		return worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
			fmt.Printf("start %s, attempt %d\n", job.Type, job.Attempts)
			return next.Handle(ctx, job)
		})
	}
	failed := make(chan struct{})
	w, _ := worker.New(worker.Config{
		Conn:       nc,
		Middleware: []worker.Middleware{logged},
		OnError:    func(job *core.Job, err error) { fmt.Println("attempt failed:", err) },
		OnFailed: func(job *core.Job, err error) {
			fmt.Println("failed for good after", job.Attempts, "attempts")
			close(failed)
		},
	})
	w.Handle("flaky", worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		return errors.New("smtp timeout")
	}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()

	_, _ = client.Create(ctx, "flaky", nil, &core.CreateOpts{MaxAttempts: 2})
	<-failed
	cancel()
	<-done
	// Output:
	// start flaky, attempt 1
	// attempt failed: smtp timeout
	// start flaky, attempt 2
	// attempt failed: smtp timeout
	// failed for good after 2 attempts
}

// A plain worker: a handler for a job type, by name, that decodes the
// job's data itself, reports progress and sets a result.
func ExampleWorker() {
	natsURL, stop := nodetest.Queue()
	defer stop()
	nc, _ := nats.Connect(natsURL)
	defer nc.Close()
	client, _ := core.NewClient(nc, nil)

	w, _ := worker.New(worker.Config{Conn: nc, Concurrency: 4})
	w.Handle("email", worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		var data struct {
			To string `json:"to"`
		}
		if err := job.Decode(&data); err != nil {
			return worker.Discard(err) // no retry fixes bad data
		}
		fmt.Println("sending to", data.To)
		if err := job.Progress(ctx, 1, 1); err != nil {
			return err
		}
		return job.SetResult(map[string]bool{"sent": true})
	}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()

	job, _ := client.Create(ctx, "email", map[string]string{"to": "ada@example.com"}, nil)
	waitCtx, stopWaiting := context.WithTimeout(ctx, time.Minute)
	finished, _ := client.Await(waitCtx, job.ID)
	stopWaiting()
	fmt.Println(finished.State, finished.Progress, string(finished.Result))
	cancel()
	fmt.Println("stopped:", <-done)
	// Output:
	// sending to ada@example.com
	// complete 100 {"sent":true}
	// stopped: <nil>
}

// The worker chooses the wait before a failed job's next attempt:
// DelayRetry for an error that says when (a rate limit), else
// Config.RetryDelay, instead of the job's backoff.
func ExampleConfig_retryDelay() {
	natsURL, stop := nodetest.Queue()
	defer stop()
	nc, _ := nats.Connect(natsURL)
	defer nc.Close()
	client, _ := core.NewClient(nc, nil)

	w, _ := worker.New(worker.Config{Conn: nc,
		RetryDelay: func(job *core.Job, attempt int, err error) time.Duration {
			d := time.Duration(attempt) * 10 * time.Millisecond
			fmt.Printf("attempt %d failed (%v): retry in %s\n", attempt, err, d)
			return d
		},
	})
	w.Handle("sync", worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		switch job.Attempts {
		case 1:
			fmt.Println("attempt 1 rate limited: retry in 20ms")
			return worker.DelayRetry(errors.New("429 too many requests"), 20*time.Millisecond)
		case 2:
			return errors.New("connection reset")
		}
		fmt.Println("attempt 3 done")
		return nil
	}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()

	job, _ := client.Create(ctx, "sync", nil, &core.CreateOpts{MaxAttempts: 3,
		Backoff: core.FixedBackoff(time.Hour)}) // the backoff the worker overrides
	waitCtx, stopWaiting := context.WithTimeout(ctx, time.Minute)
	finished, _ := client.Await(waitCtx, job.ID)
	stopWaiting()
	fmt.Println(finished.State, finished.Attempts)
	cancel()
	<-done
	// Output:
	// attempt 1 rate limited: retry in 20ms
	// attempt 2 failed (connection reset): retry in 20ms
	// attempt 3 done
	// complete 3
}
