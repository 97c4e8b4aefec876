package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/core"
)

// jobType is the type of every job the load creates on one Redis; on a
// Redis Cluster the types are jobType followed by a number, one per master
// (rediscluster.go).
const jobType = "chaos"

// createTimeout bounds one create: a create that has no answer by then is
// not acknowledged, whatever happened to it.
const createTimeout = 3 * time.Second

// ack is one acknowledged create: when it was sent and when its reply came.
type ack struct{ sent, at time.Time }

// promotion is one promotion event as the driver saw it.
type promotion struct {
	at  time.Time // received
	due time.Time // the job's promote_at
}

// load creates jobs at a steady rate from several producers and keeps
// what it needs to judge the run: every acknowledged id, and the times of
// complete and promotion events.
type load struct {
	cfg    config
	client *core.Client
	types  []string // the job types, taken in turn

	flows bool // create flows too (scenario.flows)
	// bigCreated closes when the create of the 1,000-job flow has its
	// answer (or none within createTimeout), with flows.
	bigCreated chan struct{}

	mu         sync.Mutex // guards the fields below
	acked      map[int64]ack
	deps       map[int64][]int64 // a flow job → the flow jobs it depends on
	bigFlow    []int64           // the ids of the 1,000-job flow, if created
	bigAt      time.Time         // when its create was acknowledged
	failed     int               // creates that got an error or no answer
	completes  []time.Time
	promotions []promotion
}

func newLoad(cfg config, client *core.Client, types []string) *load {
	return &load{cfg: cfg, client: client, types: types, bigCreated: make(chan struct{}), acked: map[int64]ack{}, deps: map[int64][]int64{}}
}

// listen subscribes to complete and promotion events of every type.
// Events are at most once: they time recovery, they never decide whether a
// job was lost.
func (l *load) listen() ([]*nats.Subscription, error) {
	var subs []*nats.Subscription
	for _, typ := range l.types {
		s, err := l.listenType(typ)
		if err != nil {
			for _, sub := range subs {
				_ = sub.Unsubscribe()
			}
			return nil, err
		}
		subs = append(subs, s...)
	}
	return subs, nil
}

func (l *load) listenType(typ string) ([]*nats.Subscription, error) {
	subj := l.client.Subjects()
	done, err := l.client.Subscribe(subj.JobEventsOf("complete", typ), func(*core.Event) {
		now := time.Now()
		l.mu.Lock()
		l.completes = append(l.completes, now)
		l.mu.Unlock()
	})
	if err != nil {
		return nil, err
	}
	promoted, err := l.client.Subscribe(subj.JobEventsOf("promotion", typ), func(ev *core.Event) {
		p := promotion{at: time.Now()}
		if ev.Job != nil {
			p.due = time.UnixMilli(ev.Job.PromoteAt)
		}
		l.mu.Lock()
		l.promotions = append(l.promotions, p)
		l.mu.Unlock()
	})
	if err != nil {
		_ = done.Unsubscribe()
		return nil, err
	}
	return []*nats.Subscription{done, promoted}, nil
}

// run creates jobs until ctx ends: cfg.rate a second in all, shared by
// cfg.producers goroutines, so a stalled core holds back the load instead
// of piling it up. One job in four is delayed, so that promotion is under
// test too.
func (l *load) run(ctx context.Context) {
	tick := time.NewTicker(time.Second / time.Duration(l.cfg.rate))
	defer tick.Stop()
	var wg sync.WaitGroup
	if l.flows {
		wg.Go(func() {
			ids, at := l.createFlow(ctx, 998)
			l.mu.Lock()
			l.bigFlow, l.bigAt = ids, at
			l.mu.Unlock()
			close(l.bigCreated)
		})
	}
	for p := range l.cfg.producers {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				if l.flows && n%flowEvery == flowEvery-1 {
					_, _ = l.createFlow(ctx, 8)
					continue
				}
				l.create(ctx, p, n)
			}
		})
	}
	wg.Wait()
}

func (l *load) create(ctx context.Context, producer, n int) {
	opts := &core.CreateOpts{TTL: l.cfg.ttl, MaxAttempts: 3}
	if n%4 == 3 {
		opts.Delay = l.cfg.delay
	}
	// Not ctx: a create sent before the load stops gets its answer.
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
	defer cancel()
	sent := time.Now()
	job, err := l.client.Create(callCtx, l.types[n%len(l.types)], map[string]int{"producer": producer, "n": n}, opts)
	at := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.failed++
		return
	}
	l.acked[job.ID] = ack{sent: sent, at: at}
}

// flowEvery: with flows, every flowEvery-th create of a producer is a
// small flow instead.
const flowEvery = 10

// createFlow creates a fan-out/fan-in flow: a root, width jobs that
// depend on it, and a sink that depends on those. With several types
// (a Redis Cluster) the root is of the first, the sink of the last and the
// middle jobs of each in turn, so that the flow spans every shard. Its jobs
// count as acknowledged creates, and their dependencies are kept for the
// verdict. It returns the flow's ids and when they were acknowledged (none and
// zero when the create failed).
func (l *load) createFlow(ctx context.Context, width int) ([]int64, time.Time) {
	spec := func(typ string) core.Spec { return core.Spec{Type: typ, TTL: l.cfg.ttl, MaxAttempts: 3} }
	jobs := []core.FlowJob{{Ref: "root", Spec: spec(l.types[0])}}
	sink := core.FlowJob{Ref: "sink", Spec: spec(l.types[len(l.types)-1])}
	for i := range width {
		ref := fmt.Sprint("m", i)
		jobs = append(jobs, core.FlowJob{Ref: ref, Spec: spec(l.types[i%len(l.types)]),
			DependsOn: []core.DepRef{core.Ref("root")}})
		sink.DependsOn = append(sink.DependsOn, core.Ref(ref))
	}
	jobs = append(jobs, sink)
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
	defer cancel()
	sent := time.Now()
	reply, err := l.client.CreateFlow(callCtx, jobs...)
	at := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.failed++
		return nil, time.Time{}
	}
	ids := make([]int64, len(jobs))
	for i, fj := range jobs {
		id := reply.Jobs[i].ID
		ids[i] = id
		l.acked[id] = ack{sent: sent, at: at}
		for _, d := range fj.DependsOn {
			l.deps[id] = append(l.deps[id], reply.IDOf(d.Ref))
		}
	}
	return ids, at
}

// flowDeps copies the dependencies of the flow jobs created, and the ids
// of the 1,000-job flow and when they were acknowledged.
func (l *load) flowDeps() (map[int64][]int64, []int64, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[int64][]int64, len(l.deps))
	for id, d := range l.deps {
		out[id] = d
	}
	return out, append([]int64(nil), l.bigFlow...), l.bigAt
}

// snapshot copies what the load recorded.
func (l *load) snapshot() (acked map[int64]ack, failed int, completes []time.Time, promotions []promotion) {
	l.mu.Lock()
	defer l.mu.Unlock()
	acked = make(map[int64]ack, len(l.acked))
	for id, a := range l.acked {
		acked[id] = a
	}
	return acked, l.failed, append([]time.Time(nil), l.completes...), append([]promotion(nil), l.promotions...)
}

// ackedIDs lists the acknowledged ids.
func (l *load) ackedIDs() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := make([]int64, 0, len(l.acked))
	for id := range l.acked {
		ids = append(ids, id)
	}
	return ids
}

// finalStates gets, after the run, the state of each of ids from core, a
// few at a time. An id core does not know is left out: gone from Redis.
func finalStates(ctx context.Context, client *core.Client, ids []int64) (map[int64]core.State, error) {
	var (
		mu     sync.Mutex // guards states and errs
		states = make(map[int64]core.State, len(ids))
		errs   []error
		next   = make(chan int64)
		wg     sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for id := range next {
				st, err := stateOf(ctx, client, id)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else if st != "" {
					states[id] = st
				}
				mu.Unlock()
			}
		})
	}
	for _, id := range ids {
		next <- id
	}
	close(next)
	wg.Wait()
	if len(errs) > 0 {
		return nil, fmt.Errorf("chaos: final states: %d jobs unread: %w", len(errs), errs[0])
	}
	return states, nil
}

// stateOf is the job's state, or "" when core has no such job.
func stateOf(ctx context.Context, client *core.Client, id int64) (core.State, error) {
	var st core.State
	err := retry(ctx, 10*time.Second, func(ctx context.Context) error {
		job, err := client.Get(ctx, id)
		switch {
		case errors.Is(err, core.ErrNotFound):
			st = ""
			return nil
		case err != nil:
			return err
		}
		st = job.State
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("job %d: %w", id, err)
	}
	return st, nil
}
