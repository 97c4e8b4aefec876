package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/promoter"
	"github.com/kuebus/kuebus/worker"
)

// coreStats asks every core instance for its micro STATS ($SRV.STATS is
// answered by each instance, no queue group) and returns, per instance id,
// the requests each method endpoint answered. It waits for want replies.
func coreStats(t *testing.T, nc *nats.Conn, want int) map[string]map[string]int {
	t.Helper()
	subject, err := micro.ControlSubject(micro.StatsVerb, "kuebus-core", "")
	require.NoError(t, err)
	inbox := nats.NewInbox()
	replies := make(chan *nats.Msg, want)
	sub, err := nc.ChanSubscribe(inbox, replies)
	require.NoError(t, err)
	defer func() { _ = sub.Unsubscribe() }()
	require.NoError(t, nc.PublishRequest(subject, inbox, nil))
	out := map[string]map[string]int{}
	timeout := time.After(10 * time.Second)
	for len(out) < want {
		select {
		case m := <-replies:
			var st micro.Stats
			require.NoError(t, json.Unmarshal(m.Data, &st))
			per := map[string]int{}
			for _, e := range st.Endpoints {
				per[e.Name] = e.NumRequests
			}
			out[st.ID] = per
		case <-timeout:
			t.Fatalf("%d of %d core instances answered $SRV.STATS", len(out), want)
		}
	}
	return out
}

// Many cores (issue 15): three core instances, one Redis, one NATS, with
// producers, workers and a promoter all going through the queue group.
// Every acknowledged create runs exactly once (no rescue runs and no
// lease expires, so at-least-once has no reason to run a job twice), none
// is lost, no job is leased twice, and each core serves a share of the
// creates and leases.
func TestThreeCoresRunEveryJobOnce(t *testing.T) {
	const (
		cores     = 3
		producers = 3
		perProd   = 200 // jobs per producer: half alone, half in bulks of 10
		workers   = 3
	)
	types := []string{"mc-a", "mc-b", "mc-c"}
	first := nodetest.NewCore(t, service.Config{})
	for range cores - 1 {
		nodetest.AddCore(t, first, service.Config{})
	}
	url := first.NATS.ClientURL()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	// Who ran what: runs[id] counts handler starts, starts[id] the start
	// events the cores published, one per lease.
	var mu sync.Mutex
	runs := map[int64]int{}
	starts := map[int64]int{}
	total := producers * perProd
	allRan := make(chan struct{})
	handler := worker.HandlerFunc(func(_ context.Context, j *worker.Job) error {
		mu.Lock()
		defer mu.Unlock()
		runs[j.ID]++
		if len(runs) == total && runs[j.ID] == 1 {
			close(allRan)
		}
		return nil
	})
	_, err := first.Client.Subscribe(first.Client.Subjects().JobEventsOf(bus.EventStart, ""), func(ev *core.Event) {
		mu.Lock()
		defer mu.Unlock()
		starts[ev.ID]++
	})
	require.NoError(t, err)

	var run sync.WaitGroup
	runErrs := make(chan error, workers+1)
	for i := range workers {
		w, err := worker.New(worker.Config{Conn: bustest.Connect(t, url), ID: fmt.Sprintf("w%d", i), Concurrency: 8, ShutdownTimeout: 5 * time.Second})
		require.NoError(t, err)
		for _, jt := range types {
			w.Handle(jt, handler)
		}
		run.Go(func() { runErrs <- w.Run(ctx) })
	}
	promoterClient, err := core.NewClient(bustest.Connect(t, url), nil)
	require.NoError(t, err)
	run.Go(func() { runErrs <- promoter.RunLoop(ctx, promoter.LoopConfig{Core: promoterClient}) })

	// Producers: each on its own connection, a tenth of its jobs delayed
	// a little, so that promote goes through the cores too.
	created := make([][]int64, producers)
	produceErrs := make([]error, producers)
	var produce sync.WaitGroup
	for p := range producers {
		client, err := core.NewClient(bustest.Connect(t, url), nil)
		require.NoError(t, err)
		produce.Go(func() {
			produceErrs[p] = func() error {
				spec := func(i int) core.Spec {
					sp := core.Spec{Type: types[(p+i)%len(types)], Data: json.RawMessage(fmt.Sprintf(`{"p":%d,"i":%d}`, p, i))}
					if i%10 == 0 {
						sp.Delay = 50 * time.Millisecond
					}
					return sp
				}
				for i := 0; i < perProd/2; i++ {
					j, err := client.CreateSpec(ctx, spec(i))
					if err != nil {
						return fmt.Errorf("producer %d create %d: %w", p, i, err)
					}
					created[p] = append(created[p], j.ID)
				}
				for i := perProd / 2; i < perProd; i += 10 {
					specs := make([]core.Spec, 10)
					for k := range specs {
						specs[k] = spec(i + k)
					}
					jobs, err := client.CreateBulk(ctx, specs)
					if err != nil {
						return fmt.Errorf("producer %d bulk at %d: %w", p, i, err)
					}
					for _, j := range jobs {
						created[p] = append(created[p], j.ID)
					}
				}
				return nil
			}()
		})
	}
	produce.Wait()
	for _, err := range produceErrs {
		require.NoError(t, err)
	}

	select {
	case <-allRan:
	case <-time.After(60 * time.Second):
		mu.Lock()
		n := len(runs)
		mu.Unlock()
		t.Fatalf("%d of %d jobs ran within 60s", n, total)
	}
	// Every job acknowledged complete before the count is read: a run is
	// counted when its handler starts, its complete follows.
	require.Eventually(t, func() bool {
		n, err := first.Client.Count(ctx, core.StateComplete, "")
		return err == nil && n == int64(total)
	}, 30*time.Second, 20*time.Millisecond, "not every job is complete")

	cancel()
	run.Wait()
	close(runErrs)
	for err := range runErrs {
		require.NoError(t, err)
	}

	// One start event per job: published by whichever core leased it, so
	// no core leased a job another had leased. Events are plain NATS
	// messages, so wait for the last ones to arrive.
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(starts) >= total
	}, 10*time.Second, 10*time.Millisecond, "start events missing")
	mu.Lock()
	defer mu.Unlock()
	for id, n := range starts {
		require.Equal(t, 1, n, "job %d was leased %d times", id, n)
	}
	seen := map[int64]bool{}
	for _, ids := range created {
		for _, id := range ids {
			require.False(t, seen[id], "id %d created twice", id)
			seen[id] = true
			require.Equal(t, 1, runs[id], "job %d ran %d times", id, runs[id])
		}
	}
	require.Len(t, seen, total)
	require.Len(t, runs, total, "a job ran that no producer created")
	for _, state := range []core.State{core.StateInactive, core.StateDelayed, core.StateActive, core.StateFailed} {
		n, err := first.Client.Count(t.Context(), state, "")
		require.NoError(t, err)
		require.Zero(t, n, state)
	}

	// Each core took a share of the creates and the leases.
	stats := coreStats(t, bustest.Connect(t, url), cores)
	for id, per := range stats {
		require.Positive(t, per["create"]+per["create_bulk"], "core %s served no create: %v", id, per)
		require.Positive(t, per["lease"], "core %s served no lease: %v", id, per)
		t.Logf("core %s served create %d, create_bulk %d, lease %d, complete %d, batch %d, promote %d",
			id, per["create"], per["create_bulk"], per["lease"], per["complete"], per["batch"], per["promote"])
	}
}
