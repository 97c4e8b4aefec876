package worker_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/worker"
)

// cores is one NATS server and one Redis store that cores come and go on,
// each core on a connection of its own, so that closing that connection
// stops it hard: its subscriptions vanish and no request in flight at it is
// ever answered, as when its process dies.
type cores struct {
	t     *testing.T
	ns    *bustest.Server
	store service.Store
}

func newCores(t *testing.T) *cores {
	t.Parallel()
	st, _ := nodetest.NewStore(t)
	return &cores{t: t, ns: bustest.NewServer(t), store: st}
}

// start runs a core; onWait, when set, is its OnLeaseWait hook.
func (c *cores) start(onWait func([]string)) *nats.Conn {
	c.t.Helper()
	nc := bustest.Connect(c.t, c.ns.ClientURL())
	svc, err := service.New(service.Config{Store: c.store, Conn: nc, OnLeaseWait: onWait})
	require.NoError(c.t, err)
	c.t.Cleanup(func() { _ = svc.Stop(context.Background()) })
	return nc
}

func (c *cores) client() *core.Client {
	c.t.Helper()
	client, err := core.NewClient(bustest.Connect(c.t, c.ns.ClientURL()), nil)
	require.NoError(c.t, err)
	return client
}

func (c *cores) worker(cfg worker.Config) *worker.Worker {
	c.t.Helper()
	cfg.Conn = bustest.Connect(c.t, c.ns.ClientURL())
	w, err := worker.New(cfg)
	require.NoError(c.t, err)
	return w
}

// hang serves core.batch as a core that hangs (or died after taking the
// request) does: it takes each request, never answers, and signals on
// swallowed. Unsubscribe sub to end it.
func (c *cores) hang() (swallowed <-chan struct{}, sub *nats.Subscription) {
	c.t.Helper()
	subj, err := bus.NewSubjects("")
	require.NoError(c.t, err)
	ch := make(chan struct{}, 16)
	hung := bustest.Connect(c.t, c.ns.ClientURL())
	sub, err = hung.QueueSubscribe(subj.Core(bus.MethodBatch), bus.CoreQueueGroup, func(*nats.Msg) {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	require.NoError(c.t, err)
	require.NoError(c.t, hung.Flush())
	return ch, sub
}

// TestWorkerLeasesAgainSoonAfterItsCoreDies: the worker's lease call waits
// at core A when A dies (its connection closed, nothing drained) while core
// B serves. The worker must notice and lease from B; the time from A's death
// to the next job's run is logged (a call that waited the old LeaseWait +
// 10 s took about 11 s).
func TestWorkerLeasesAgainSoonAfterItsCoreDies(t *testing.T) {
	cs := newCores(t)
	waiting := make(chan struct{}, 1)
	a := cs.start(func([]string) {
		select {
		case waiting <- struct{}{}:
		default:
		}
	})
	ran := make(chan struct{}, 1)
	w := cs.worker(worker.Config{})
	w.Process("recover", 1, func(ctx context.Context, job *worker.Job) error {
		ran <- struct{}{}
		return nil
	}, nil)
	run(t, w)
	within(t, waiting, "the worker's lease waiting at core A")
	cs.start(nil) // core B
	a.Close()     // core A dies with the lease call waiting there
	died := time.Now()

	// Straight into Redis: a create over NATS right now might still reach
	// A's subscription before the server has dropped it. The job is ready;
	// the worker's next lease call, at B, takes it.
	jobs, _, err := cs.store.Create(ctx, time.Now().UnixMilli(), []core.Spec{{Type: "recover", MaxAttempts: 1, TTL: 60_000 * time.Millisecond}})
	require.NoError(t, err)
	job := jobs[0]
	within(t, ran, "the job's run")
	t.Logf("the worker ran a job %s after its core died", time.Since(died).Round(time.Millisecond))
	waitCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	done, err := cs.client().Await(waitCtx, job.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateComplete, done.State)
}

// TestAcknowledgementsAreRetriedNotDropped: a job's handler finishes while
// the only thing serving core.batch swallows requests (a core that hangs,
// or died after taking the request). The acknowledgement times out, is sent
// again and reaches core B: the job completes, having run once, without
// waiting for its ttl to run out and run again.
func TestAcknowledgementsAreRetriedNotDropped(t *testing.T) {
	cs := newCores(t)
	a := cs.start(nil)
	started, finish := make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	w := cs.worker(worker.Config{})
	w.Process("ack", 1, func(ctx context.Context, job *worker.Job) error {
		runs.Add(1)
		close(started)
		<-finish
		return nil
	}, nil)
	run(t, w)
	client := cs.client()
	job, err := client.Create(ctx, "ack", nil, &core.CreateOpts{TTL: time.Minute})
	require.NoError(t, err)
	within(t, started, "the handler's start")

	a.Close()
	swallowed, sub := cs.hang()
	close(finish)
	within(t, swallowed, "the acknowledgement reaching the hung core")
	require.NoError(t, sub.Unsubscribe())
	cs.start(nil) // core B

	waitCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	done, err := client.Await(waitCtx, job.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateComplete, done.State)
	require.Equal(t, int32(1), runs.Load(), "ran once")
	require.Equal(t, 1, done.Attempts)
}

// TestAnAcknowledgementLostWithItsCoreIsSentAgainBeforeTheLeaseEnds: with
// a short ttl (2 s), the first try of an acknowledgement that reached a core
// that never answers must give up soon enough for the next try, to another
// core, to land while the lease holds. A try of a fixed 3 s outlived the
// lease, the acknowledgement was dropped, and the rescue gave the finished
// job to another worker (the fault suite's kill-core, 151 jobs run twice).
func TestAnAcknowledgementLostWithItsCoreIsSentAgainBeforeTheLeaseEnds(t *testing.T) {
	cs := newCores(t)
	a := cs.start(nil)
	started, finish := make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	w := cs.worker(worker.Config{})
	w.Process("short", 1, func(ctx context.Context, job *worker.Job) error {
		runs.Add(1)
		close(started)
		<-finish
		return nil
	}, nil)
	run(t, w)
	client := cs.client()
	job, err := client.Create(ctx, "short", nil, &core.CreateOpts{TTL: 2 * time.Second})
	require.NoError(t, err)
	within(t, started, "the handler's start")

	a.Close()
	swallowed, sub := cs.hang()
	close(finish)
	within(t, swallowed, "the acknowledgement reaching the hung core")
	require.NoError(t, sub.Unsubscribe())
	cs.start(nil) // core B

	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	done, err := client.Await(waitCtx, job.ID)
	require.NoError(t, err, "the acknowledgement reached core B")
	require.Equal(t, core.StateComplete, done.State)
	require.Equal(t, int32(1), runs.Load(), "ran once")
	require.Equal(t, 1, done.Attempts)
}

// TestALeaseExtensionLostWithItsCoreIsSentAgainInTime: the extension call of
// a running job reaches a core that never answers (it died with the call).
// The worker must give up on it and extend through another core before the
// lease runs out, not after the client's 10 s default.
func TestALeaseExtensionLostWithItsCoreIsSentAgainInTime(t *testing.T) {
	cs := newCores(t)
	a := cs.start(nil)
	started, finish := make(chan struct{}), make(chan struct{})
	w := cs.worker(worker.Config{})
	w.Process("touchy", 1, func(ctx context.Context, job *worker.Job) error {
		close(started)
		select {
		case <-finish:
			return nil
		case <-ctx.Done(): // the test failed and stops the worker
			return ctx.Err()
		}
	}, nil)
	run(t, w)
	client := cs.client()
	job, err := client.Create(ctx, "touchy", nil, &core.CreateOpts{TTL: 4 * time.Second})
	require.NoError(t, err)
	within(t, started, "the handler's start")
	leased, err := client.Get(ctx, job.ID)
	require.NoError(t, err)

	a.Close()
	subj, err := bus.NewSubjects("")
	require.NoError(t, err)
	swallowed := make(chan struct{}, 16)
	hung := bustest.Connect(t, cs.ns.ClientURL())
	sub, err := hung.QueueSubscribe(subj.Core(bus.MethodBatch), bus.CoreQueueGroup, func(*nats.Msg) {
		swallowed <- struct{}{}
	})
	require.NoError(t, err)
	require.NoError(t, hung.Flush())
	within(t, swallowed, "the extension reaching the hung core (half the ttl after the lease)")
	require.NoError(t, sub.Unsubscribe())
	cs.start(nil) // core B

	// The lease ends leased.LeaseUntil; the extension must land before it.
	require.Eventually(t, func() bool {
		j, err := client.Get(ctx, job.ID)
		return err == nil && j.LeaseUntil > leased.LeaseUntil
	}, time.Until(time.UnixMilli(leased.LeaseUntil)), 20*time.Millisecond, "the lease was extended through core B before it ran out")
	close(finish)
	waitCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	done, err := client.Await(waitCtx, job.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateComplete, done.State)
	require.Equal(t, 1, done.Attempts)
}
