package kuebustest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/kuebustest"
	"github.com/kuebus/kuebus/worker"
)

// Welcome is a job type as a Go type.
type Welcome struct {
	To string `json:"to"`
}

func (Welcome) JobType() string { return "welcome" }

// sendWelcome is the handler under test.
func sendWelcome(ctx context.Context, job *worker.Job, args Welcome) error {
	if args.To == "" {
		return worker.Discard(errors.New("no address"))
	}
	if err := job.Log(ctx, "sending to "+args.To); err != nil {
		return err
	}
	if err := job.Progress(ctx, 1, 2); err != nil {
		return err
	}
	return job.SetResult(map[string]bool{"sent": true})
}

// Run a handler inline, without a queue: the result says how it ended and
// what it logged, reported and returned.
func ExampleWorkArgs() {
	ctx := context.Background()
	res := kuebustest.WorkArgs(ctx, sendWelcome, Welcome{To: "ada@example.com"}, nil)
	fmt.Println(res.Outcome, res.Logs, res.Progress, string(res.Result))

	res = kuebustest.WorkArgs(ctx, sendWelcome, Welcome{}, nil)
	fmt.Println(res.Outcome, res.Err)
	// Output:
	// complete [sending to ada@example.com] [{1 2}] {"sent":true}
	// discard worker: discard: no address
}

// A handler of any job: the job made for the test says which attempt it
// is; the result says the retry the handler asked for.
func ExampleWork() {
	ctx := context.Background()
	flaky := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		if job.Attempts < 3 {
			return worker.DelayRetry(fmt.Errorf("attempt %d: 429 too many requests", job.Attempts), time.Minute)
		}
		return nil
	})
	job := kuebustest.NewJob("sync", map[string]int{"page": 1},
		&kuebustest.JobOpts{CreateOpts: core.CreateOpts{MaxAttempts: 5}})
	res := kuebustest.Work(ctx, flaky, job)
	fmt.Println(res.Outcome, res.Err, res.Retry)

	job = kuebustest.NewJob("sync", nil, &kuebustest.JobOpts{Attempt: 3})
	fmt.Println(kuebustest.Work(ctx, flaky, job).Outcome)
	// Output:
	// fail attempt 1: 429 too many requests 1m0s
	// complete
}

// A queue of the example's own (embedded NATS, core, the promoter, and a
// redis-server), a producer and a worker on it.
func ExampleStartQueue() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := kuebustest.StartQueue(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer q.Stop()

	job, _ := core.CreateArgs(ctx, q.Client, Welcome{To: "ada@example.com"}, nil)
	created, _ := kuebustest.EnqueuedOf[Welcome](ctx, q.Client, nil)
	fmt.Println(len(created), created[0].Args.To, created[0].Job.State)

	w, _ := worker.New(worker.Config{Conn: q.Conn})
	worker.HandleArgs(w, sendWelcome, nil)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- w.Run(runCtx) }()
	finished, _ := q.Client.Await(ctx, job.ID)
	stop()
	<-done
	fmt.Println(finished.State, string(finished.Result))
	// Output:
	// 1 ada@example.com inactive
	// complete {"sent":true}
}
