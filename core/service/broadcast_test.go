package service_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

// listener subscribes to the broadcasts of jobType on a connection of its
// own, as another process would.
func listener(t *testing.T, c *nodetest.Core, jobType string) <-chan *core.Broadcast {
	t.Helper()
	client, err := core.NewClient(bustest.Connect(t, c.NATS.ClientURL()), nil)
	require.NoError(t, err)
	ch := make(chan *core.Broadcast, 100)
	sub, err := client.SubscribeBroadcast(jobType, func(b *core.Broadcast) { ch <- b })
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return ch
}

func nextBroadcast(t *testing.T, ch <-chan *core.Broadcast) *core.Broadcast {
	t.Helper()
	select {
	case b := <-ch:
		return b
	case <-time.After(5 * time.Second):
		t.Fatal("no broadcast within 5s")
		return nil
	}
}

// leaseNothing asserts that a worker polling jobType gets no job.
func leaseNothing(t *testing.T, c *nodetest.Core, jobType string) {
	t.Helper()
	jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{jobType}, Max: 10, Worker: "w1"})
	require.NoError(t, err)
	require.Empty(t, jobs, "a worker never leases a broadcast job")
}

// TestADelayedBroadcastReachesEveryListenerOnceWhenDue: three listeners
// each get the broadcast once, with its data, at its due time and not
// before; no worker leases it, before or after; it ends complete, with
// its complete event after its broadcast.
func TestADelayedBroadcastReachesEveryListenerOnceWhenDue(t *testing.T) {
	c, clock := newCore(t)
	listeners := []<-chan *core.Broadcast{listener(t, c, "radio"), listener(t, c, "radio"), listener(t, c, "")}
	other := listener(t, c, "tv")
	completes := events(t, c, c.Client.Subjects().JobEventsOf(bus.EventComplete, "radio"))

	job, err := c.Client.Create(ctx, "radio", map[string]string{"say": "reload prices"},
		&core.CreateOpts{Broadcast: true, Delay: time.Second})
	require.NoError(t, err)
	require.True(t, job.Broadcast)
	require.Equal(t, core.StateDelayed, job.State)
	require.Equal(t, t0.UnixMilli()+1000, job.PromoteAt)
	leaseNothing(t, c, "radio")

	clock.Advance(999 * time.Millisecond)
	mv, err := c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Zero(t, mv.Moved, "one millisecond early is early")
	got, err := c.Client.Get(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateDelayed, got.State)

	clock.Advance(time.Millisecond)
	mv, err = c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 1, mv.Moved)
	for _, ch := range listeners {
		b := nextBroadcast(t, ch)
		require.Equal(t, job.ID, b.ID)
		require.Equal(t, "radio", b.Type)
		require.JSONEq(t, `{"say":"reload prices"}`, string(b.Data))
		require.GreaterOrEqual(t, b.At, job.PromoteAt, "never before it is due")
		require.Equal(t, core.StateComplete, b.Job.State)
	}
	ev := next(t, completes)
	require.Equal(t, job.ID, ev.ID)
	require.Nil(t, ev.Job.Data, "the complete event carries no data, as every other")

	got, err = c.Client.Get(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateComplete, got.State)
	require.True(t, got.Broadcast)
	require.JSONEq(t, `{"say":"reload prices"}`, string(got.Data))
	require.Zero(t, got.Attempts, "no worker ran it")
	n, err := c.Client.Count(ctx, core.StateComplete, "radio")
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	leaseNothing(t, c, "radio")

	// Promoting again publishes nothing: the next broadcast each listener
	// gets is a second job's, which core published after anything it
	// could still have sent of the first (one connection keeps its order).
	mv, err = c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Zero(t, mv.Moved)
	second, err := c.Client.Create(ctx, "radio", json.RawMessage(`2`), &core.CreateOpts{Broadcast: true})
	require.NoError(t, err)
	require.Equal(t, core.StateDelayed, second.State, "a broadcast waits for the promoter even without a delay")
	require.Equal(t, t0.UnixMilli()+1000, second.PromoteAt)
	mv, err = c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 1, mv.Moved)
	for _, ch := range listeners {
		b := nextBroadcast(t, ch)
		require.Equal(t, second.ID, b.ID, "the first broadcast came once")
		require.JSONEq(t, `2`, string(b.Data))
	}
	select {
	case b := <-other:
		t.Fatalf("a listener of another type got broadcast %d", b.ID)
	default:
	}
}

// TestABroadcastThatIsNotABooleanIsInvalid: "broadcast" takes true or
// false only; anything else is invalid, names the field, stores nothing.
func TestABroadcastThatIsNotABooleanIsInvalid(t *testing.T) {
	c, _ := newCore(t)
	for _, body := range []string{
		`{"type":"radio","broadcast":"yes"}`,
		`{"type":"radio","broadcast":1}`,
		`{"type":"radio","broadcast":null,"data":{}}`,
	} {
		msg, err := c.NATS.Conn.Request(c.Client.Subjects().Core(bus.MethodCreate), []byte(body), 5*time.Second)
		require.NoError(t, err)
		if body == `{"type":"radio","broadcast":null,"data":{}}` {
			// JSON's null is "not given", as for every other field.
			require.Empty(t, msg.Header.Get(bus.HeaderKuebusCode), string(msg.Data))
			continue
		}
		require.Equal(t, "invalid", msg.Header.Get(bus.HeaderKuebusCode), body)
		require.Contains(t, msg.Header.Get(bus.HeaderError), "broadcast", body)
	}
	msg, err := c.NATS.Conn.Request(c.Client.Subjects().Core(bus.MethodCreateBulk),
		[]byte(`{"jobs":[{"type":"radio","broadcast":true},{"type":"radio","broadcast":"yes"}]}`), 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, "invalid", msg.Header.Get(bus.HeaderKuebusCode))
	require.Contains(t, msg.Header.Get(bus.HeaderError), "broadcast")
	n, err := c.Client.Count(ctx, "", "radio")
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "only the create with null stored a job")
}

// TestBulkCreatedBroadcastsGoOutEachOnce: create_bulk takes broadcast
// specs beside ordinary ones; the broadcasts reach their listener, each
// once, and the ordinary job is leased as usual.
func TestBulkCreatedBroadcastsGoOutEachOnce(t *testing.T) {
	c, _ := newCore(t)
	ch := listener(t, c, "radio")
	jobs, err := c.Client.CreateBulk(ctx, []core.Spec{
		{Type: "radio", Data: json.RawMessage(`"a"`), Broadcast: true},
		{Type: "radio", Data: json.RawMessage(`"work"`)},
		{Type: "radio", Data: json.RawMessage(`"b"`), Broadcast: true},
	})
	require.NoError(t, err)
	require.Len(t, jobs, 3)
	require.True(t, jobs[0].Broadcast)
	require.False(t, jobs[1].Broadcast)
	require.Equal(t, core.StateInactive, jobs[1].State)

	mv, err := c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 2, mv.Moved)
	seen := map[int64]string{}
	for range 2 {
		b := nextBroadcast(t, ch)
		seen[b.ID] = string(b.Data)
	}
	require.Equal(t, map[int64]string{jobs[0].ID: `"a"`, jobs[2].ID: `"b"`}, seen)

	leased, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"radio"}, Max: 10, Worker: "w1"})
	require.NoError(t, err)
	require.Len(t, leased, 1, "the ordinary job, alone")
	require.Equal(t, jobs[1].ID, leased[0].ID)
}

// TestAScheduleOfBroadcastsBroadcastsEachTick: "at 09:00 every day, tell
// every node": a schedule whose spec is a broadcast makes, at each tick, a
// broadcast job, which the next promote publishes.
func TestAScheduleOfBroadcastsBroadcastsEachTick(t *testing.T) {
	c, clock := newCore(t)
	ch := listener(t, c, "prices")
	every := time.Minute
	_, err := c.Client.SetSchedule(ctx, &core.ScheduleSetRequest{Name: "reload", Every: &every,
		Spec: core.Spec{Type: "prices", Data: json.RawMessage(`{"do":"reload"}`), Broadcast: true}})
	require.NoError(t, err)
	for tick := range 2 {
		clock.Advance(time.Minute)
		fired, err := c.Client.FireSchedules(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, 1, fired.Fired, "tick %d", tick)
		leaseNothing(t, c, "prices")
		mv, err := c.Client.Promote(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, 1, mv.Moved, "tick %d", tick)
		b := nextBroadcast(t, ch)
		require.JSONEq(t, `{"do":"reload"}`, string(b.Data))
		require.Equal(t, "reload", b.Job.Schedule)
	}
}

// TestABroadcastWhoseCoreDiedGoesOutAfterItsClaim: a core that ran the
// promote's script, and took the broadcast to publish it, then died (here:
// the store calls alone, no publish) leaves it recorded; promote publishes
// it once the 5 s claim ran out, not before, and says when to come back.
func TestABroadcastWhoseCoreDiedGoesOutAfterItsClaim(t *testing.T) {
	c, clock := newCore(t)
	ch := listener(t, c, "radio")
	job, err := c.Client.Create(ctx, "radio", json.RawMessage(`"lost?"`), &core.CreateOpts{Broadcast: true})
	require.NoError(t, err)
	now := clock.Now().UnixMilli()
	moved, _, err := c.Store.Promote(ctx, now, 10)
	require.NoError(t, err)
	require.Len(t, moved, 1)
	taken, _, err := c.Store.TakeBroadcasts(ctx, now, now+5000, 10)
	require.NoError(t, err)
	require.Len(t, taken, 1)

	mv, err := c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Zero(t, mv.Moved)
	require.Equal(t, now+5000, mv.NextDue, "the promoter comes back when the claim runs out")

	clock.Advance(5 * time.Second)
	_, err = c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	b := nextBroadcast(t, ch)
	require.Equal(t, job.ID, b.ID)
	require.GreaterOrEqual(t, b.At, now+5000, "not while the dead core's claim held")
	require.JSONEq(t, `"lost?"`, string(b.Data))
	n, err := c.Client.Count(ctx, core.StateComplete, "radio")
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
}

// TestABroadcastMovedByHandIsBroadcastNotLeased: set_state → inactive and
// a bulk promote make a broadcast due at once (an enqueue event and
// queue.due, which wakes the promoter), never ready; the next promote
// broadcasts it, and a finished one runs again that way.
func TestABroadcastMovedByHandIsBroadcastNotLeased(t *testing.T) {
	c, clock := newCore(t)
	ch := listener(t, c, "radio")
	dues := events(t, c, c.Client.Subjects().Queue(bus.QueueDue))
	enqueues := events(t, c, c.Client.Subjects().JobEventsOf(bus.EventEnqueue, "radio"))
	job, err := c.Client.Create(ctx, "radio", json.RawMessage(`"now"`), &core.CreateOpts{Broadcast: true, Delay: time.Hour})
	require.NoError(t, err)
	require.Equal(t, job.PromoteAt, next(t, dues).DueAt)
	require.True(t, next(t, enqueues).New)

	clock.Advance(time.Second)
	reply, err := c.Client.Bulk(ctx, core.BulkActionRequest{Action: core.BulkPromote, State: core.StateDelayed, Type: "radio"})
	require.NoError(t, err)
	require.Equal(t, 1, reply.Done)
	ev := next(t, enqueues)
	require.Equal(t, core.StateDelayed, ev.Job.State, "due at once, not inactive")
	require.Equal(t, clock.Now().UnixMilli(), ev.Job.PromoteAt)
	require.Equal(t, clock.Now().UnixMilli(), next(t, dues).DueAt)
	leaseNothing(t, c, "radio")
	mv, err := c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 1, mv.Moved)
	require.Equal(t, job.ID, nextBroadcast(t, ch).ID)

	// Run it again by hand, as the dashboard's button does.
	got, err := c.Client.SetState(ctx, job.ID, core.StateInactive)
	require.NoError(t, err)
	require.Equal(t, core.StateDelayed, got.State)
	require.Equal(t, got.PromoteAt, next(t, dues).DueAt)
	leaseNothing(t, c, "radio")
	mv, err = c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 1, mv.Moved)
	b := nextBroadcast(t, ch)
	require.Equal(t, job.ID, b.ID)
	require.JSONEq(t, `"now"`, string(b.Data))
}

// TestABroadcastWhoseCoreDiedAfterThePromoteGoesOutWithinASweep: a core
// that ran the promote's script and died before it took the broadcast
// leaves it recorded; another core's promote, which completed no
// broadcast itself, finds it at its next sweep (every 5 s).
func TestABroadcastWhoseCoreDiedAfterThePromoteGoesOutWithinASweep(t *testing.T) {
	c, clock := newCore(t)
	ch := listener(t, c, "radio")
	_, err := c.Client.Promote(ctx, 0) // a sweep: the next is 5 s from now
	require.NoError(t, err)
	job, err := c.Client.Create(ctx, "radio", json.RawMessage(`"late"`), &core.CreateOpts{Broadcast: true})
	require.NoError(t, err)
	now := clock.Now().UnixMilli()
	moved, _, err := c.Store.Promote(ctx, now, 10) // the core that dies
	require.NoError(t, err)
	require.Len(t, moved, 1)

	clock.Advance(5 * time.Second)
	mv, err := c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Zero(t, mv.Moved)
	b := nextBroadcast(t, ch)
	require.Equal(t, job.ID, b.ID)
	require.JSONEq(t, `"late"`, string(b.Data))
}
