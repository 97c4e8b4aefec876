package core_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

// Create a job, take it as a worker would, and await its end: Kue's
// queue.create(...).save() and job.on('complete').
func ExampleClient_Create() {
	natsURL, stop := nodetest.Queue() // a queue of its own: NATS, core, Redis
	defer stop()
	nc, _ := nats.Connect(natsURL)
	defer nc.Close()
	client, _ := core.NewClient(nc, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	job, _ := client.Create(ctx, "email", map[string]string{"to": "ada@example.com"},
		&core.CreateOpts{Priority: core.PriorityHigh, MaxAttempts: 3})
	fmt.Println(job.Type, job.State, job.Priority, job.MaxAttempts)

	// What a worker does (package worker does it for Go handlers).
	leased, _ := client.Lease(ctx, core.LeaseRequest{Types: []string{"email"}, Max: 1, Worker: "w1", Wait: 1000})
	_ = client.Complete(ctx, core.LeaseOp{ID: leased[0].ID, Lease: leased[0].Lease, Type: "email", Result: []byte(`{"sent":true}`)})

	done, _ := client.Await(ctx, job.ID)
	fmt.Println(done.State, string(done.Result))
	// Output:
	// email inactive -10 3
	// complete {"sent":true}
}

// Await a job's end, whatever it is: here a worker elsewhere fails it for
// good. A job that does not end before ctx does makes Await give up with
// ctx's error.
func ExampleClient_Await() {
	natsURL, stop := nodetest.Queue()
	defer stop()
	nc, _ := nats.Connect(natsURL)
	defer nc.Close()
	client, _ := core.NewClient(nc, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	job, _ := client.Create(ctx, "resize", map[string]int{"width": 90000}, nil)
	worked := make(chan struct{})
	go func() { // a worker, as package worker would run it
		defer close(worked)
		leased, _ := client.Lease(ctx, core.LeaseRequest{Types: []string{"resize"}, Max: 1, Wait: 1000})
		_, _ = client.Fail(ctx, core.LeaseOp{ID: leased[0].ID, Lease: leased[0].Lease, Type: "resize",
			Error: "image too wide", Final: true})
	}()
	done, _ := client.Await(ctx, job.ID)
	<-worked
	fmt.Println(done.State, done.Attempts, done.Error)

	later, _ := client.Create(ctx, "resize", nil, &core.CreateOpts{Delay: time.Hour})
	short, giveUp := context.WithTimeout(ctx, 50*time.Millisecond)
	defer giveUp()
	_, err := client.Await(short, later.ID)
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	// Output:
	// failed 1 image too wide
	// true
}

// Listen to events: every completion of any type, as Kue's
// queue.on('job complete').
func ExampleClient_Subscribe() {
	natsURL, stop := nodetest.Queue()
	defer stop()
	nc, _ := nats.Connect(natsURL)
	defer nc.Close()
	client, _ := core.NewClient(nc, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	events := make(chan *core.Event, 1)
	sub, _ := client.Subscribe(client.Subjects().JobEventsOf(bus.EventComplete, ""), func(ev *core.Event) { events <- ev })
	defer sub.Unsubscribe()
	_ = nc.Flush() // the subscription is in place before the job runs

	job, _ := client.Create(ctx, "report", nil, nil)
	leased, _ := client.Lease(ctx, core.LeaseRequest{Types: []string{"report"}, Max: 1, Wait: 1000})
	_ = client.Complete(ctx, core.LeaseOp{ID: job.ID, Lease: leased[0].Lease, Type: "report"})
	ev := <-events
	fmt.Println(ev.Event, ev.ID == job.ID, ev.Type)
	// Output:
	// complete true report
}

// Cancel a job: a waiting one never runs; a running one's worker is told
// (its handler's context ends with worker.ErrCancelled).
func ExampleClient_Cancel() {
	natsURL, stop := nodetest.Queue()
	defer stop()
	nc, _ := nats.Connect(natsURL)
	defer nc.Close()
	client, _ := core.NewClient(nc, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	job, _ := client.Create(ctx, "invoice", nil, &core.CreateOpts{Delay: time.Hour})
	cancelled, _ := client.Cancel(ctx, job.ID, "customer left")
	fmt.Println(cancelled.State)
	_, err := client.Cancel(ctx, job.ID, "")
	fmt.Println(err)
	// Output:
	// cancelled
	// core.cancel: kuebus: conflict: job 1 is cancelled already: only a delayed, inactive, active or waiting job can be cancelled
}

// Middleware around every call a client makes: here a log line per call.
func ExampleCallMiddleware() {
	natsURL, stop := nodetest.Queue()
	defer stop()
	nc, _ := nats.Connect(natsURL)
	defer nc.Close()
	logCalls := func(next core.CallFunc) core.CallFunc {
		return func(ctx context.Context, method string, req, reply any) error {
			err := next(ctx, method, req, reply)
			fmt.Println("core."+method, "err:", err)
			return err
		}
	}
	client, _ := core.NewClient(nc, &core.ClientOptions{Middleware: []core.CallMiddleware{logCalls}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	_, _ = client.Get(ctx, 42)
	_, _ = client.Stats(ctx)
	// Output:
	// core.get err: core.get: kuebus: not_found: job 42 not found
	// core.stats err: <nil>
}

// Broadcast: one job to every listener of its type, with its data, when it
// falls due (here 100 ms from now). The promoter of `kuebus dev` publishes
// it; no worker leases it, and it ends complete.
func ExampleClient_SubscribeBroadcast() {
	natsURL, stop := nodetest.Queue()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	got := make(chan string, 2)
	for _, node := range []string{"node-a", "node-b"} {
		nc, _ := nats.Connect(natsURL)
		defer nc.Close()
		listener, _ := core.NewClient(nc, nil)
		sub, _ := listener.SubscribeBroadcast("prices", func(b *core.Broadcast) {
			got <- node + " " + string(b.Data)
		})
		defer func() { _ = sub.Unsubscribe() }()
	}

	nc, _ := nats.Connect(natsURL)
	defer nc.Close()
	client, _ := core.NewClient(nc, nil)
	job, _ := client.Create(ctx, "prices", map[string]string{"do": "reload"},
		&core.CreateOpts{Broadcast: true, Delay: 100 * time.Millisecond})
	heard := []string{<-got, <-got}
	slices.Sort(heard)
	fmt.Println(heard[0])
	fmt.Println(heard[1])
	done, _ := client.Await(ctx, job.ID)
	fmt.Println(done.State, done.Broadcast)
	// Output:
	// node-a {"do":"reload"}
	// node-b {"do":"reload"}
	// complete true
}

// Digest is a job type as a Go type.
type Digest struct {
	List string `json:"list"`
}

func (Digest) JobType() string { return "digest" }

// Typed bulk creates and schedules: the job type and the data come from
// the Go type, durations are time.Duration.
func ExampleSetScheduleArgs() {
	natsURL, stop := nodetest.Queue()
	defer stop()
	nc, _ := nats.Connect(natsURL)
	defer nc.Close()
	client, _ := core.NewClient(nc, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	jobs, _ := core.CreateArgsBulk(ctx, client, []Digest{{List: "daily"}, {List: "weekly"}},
		&core.CreateOpts{Delay: time.Hour})
	fmt.Println(len(jobs), jobs[0].State, jobs[1].DelayDuration())

	every := 24 * time.Hour
	sc, _ := core.SetScheduleArgs(ctx, client, &core.ScheduleSetRequest{Name: "weekly-digest", Every: &every},
		Digest{List: "weekly"}, &core.CreateOpts{MaxAttempts: 3, Backoff: core.ExponentialBackoff(time.Minute)})
	fmt.Println(sc.Name, sc.Every, sc.Spec.Type, string(sc.Spec.Data), sc.Spec.Backoff.Delay)
	// Output:
	// 2 delayed 1h0m0s
	// weekly-digest 24h0m0s digest {"list":"weekly"} 2m0s
}
