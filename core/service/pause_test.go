package service_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// raw sends a request as any NATS client would and returns the reply's
// body and its error code ("" for none).
func raw(t *testing.T, c *nodetest.Core, method, body string) (string, string) {
	t.Helper()
	msg, err := c.NATS.Conn.Request(c.Client.Subjects().Core(method), []byte(body), 5*time.Second)
	require.NoError(t, err)
	return string(msg.Data), msg.Header.Get(bus.HeaderKuebusCode)
}

// TestAPausedTypeLeasesNothingWhileAnotherLeases: pause answers the type
// and its flag; a paused type's jobs stay inactive while another type's
// are leased; types and stats list it; resume leases it again.
func TestAPausedTypeLeasesNothingWhileAnotherLeases(t *testing.T) {
	c, _ := newCore(t)
	a, err := c.Client.Create(ctx, "a", nil, &core.CreateOpts{Priority: core.PriorityCritical})
	require.NoError(t, err)
	b, err := c.Client.Create(ctx, "b", nil, nil)
	require.NoError(t, err)

	body, code := raw(t, c, bus.MethodPause, `{"type":"a"}`)
	require.Empty(t, code)
	require.JSONEq(t, `{"type":"a","paused":true}`, body)

	jobs := lease(t, c, core.LeaseRequest{Types: []string{"a", "b"}, Max: 10})
	require.Len(t, jobs, 1)
	require.Equal(t, b.ID, jobs[0].ID, "b's job; a is paused, although its job comes first")
	body, _ = raw(t, c, bus.MethodTypes, `{}`)
	require.JSONEq(t, `{"types":["a","b"],"paused":["a"]}`, body)
	st, err := c.Client.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, st.Paused)
	require.Equal(t, int64(1), st.Types["a"].Inactive, "a's job is kept")

	body, code = raw(t, c, bus.MethodResume, `{"type":"a"}`)
	require.Empty(t, code)
	require.JSONEq(t, `{"type":"a","paused":false}`, body)
	jobs = lease(t, c, core.LeaseRequest{Types: []string{"a", "b"}, Max: 10})
	require.Len(t, jobs, 1)
	require.Equal(t, a.ID, jobs[0].ID)
	body, _ = raw(t, c, bus.MethodTypes, `{}`)
	require.JSONEq(t, `{"types":["a","b"]}`, body, "no paused field when none is paused")
}

// TestPauseAndResumePublishOnceEach: a repeated pause or resume answers
// the same and publishes nothing. Events of one publisher arrive in order,
// so each event read is the one of the call just before it.
func TestPauseAndResumePublishOnceEach(t *testing.T) {
	c, clock := newCore(t)
	evs := events(t, c, c.Client.Subjects().AllQueueEvents())
	for _, step := range []struct {
		paused bool
		event  string // "" for none
	}{{true, "pause"}, {true, ""}, {false, "resume"}, {false, ""}, {true, "pause"}} {
		if step.paused {
			require.NoError(t, c.Client.Pause(ctx, "nojobs"))
		} else {
			require.NoError(t, c.Client.Resume(ctx, "nojobs"))
		}
		if step.event != "" {
			ev := next(t, evs)
			require.Equal(t, &core.Event{Event: step.event, Type: "nojobs", At: clock.Now().UnixMilli()}, ev)
		}
	}
	select {
	case ev := <-evs:
		t.Fatalf("an event more: %+v", ev)
	default:
	}
	types, err := c.Client.Types(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"nojobs"}, types, "a type paused before it has jobs is listed")
}

// TestPauseRefusesBadInputAndStoresNothing: a missing or invalid type, or a
// body that is not JSON, answers invalid and stores nothing.
func TestPauseRefusesBadInputAndStoresNothing(t *testing.T) {
	c, _ := newCore(t)
	for _, method := range []string{bus.MethodPause, bus.MethodResume} {
		for _, body := range []string{`{}`, `{"type":""}`, `{"type":"a.b"}`, `{"type":"a b"}`, `{"type":7}`, `nope`} {
			_, code := raw(t, c, method, body)
			require.Equal(t, "invalid", code, "%s %s", method, body)
		}
	}
	err := c.Client.Pause(ctx, "")
	require.ErrorIs(t, err, core.ErrInvalid)
	types, err := c.Store.Types(ctx)
	require.NoError(t, err)
	require.Empty(t, types, "nothing stored")
}

// TestAnEnqueueOfAPausedTypeWakesNoWaitingLease: a lease waiting on a
// paused type p and on q is not woken by p's enqueue (the first attempt
// learnt that p is paused): it wakes once, for q's job, and leaves p's. A
// lease waiting on p alone is handed p's job when p is resumed.
func TestAnEnqueueOfAPausedTypeWakesNoWaitingLease(t *testing.T) {
	t.Parallel()
	parked := make(chan struct{}, 10)
	c := nodetest.NewCore(t, service.Config{OnLeaseWait: func([]string) { parked <- struct{}{} }})
	require.NoError(t, c.Client.Pause(ctx, "p"))
	waiting := func(types ...string) <-chan []core.Job {
		got := make(chan []core.Job, 1)
		go func() {
			jobs, _ := c.Client.Lease(ctx, core.LeaseRequest{Types: types, Max: 10, Wait: 60_000})
			got <- jobs
		}()
		waitFor(t, parked, "the lease waits")
		return got
	}
	got := waiting("p", "q")
	jp, err := c.Client.Create(ctx, "p", nil, nil)
	require.NoError(t, err)
	jq, err := c.Client.Create(ctx, "q", nil, nil)
	require.NoError(t, err)
	select {
	case jobs := <-got:
		require.Len(t, jobs, 1)
		require.Equal(t, jq.ID, jobs[0].ID, "q's job, not the paused p's")
	case <-time.After(10 * time.Second):
		t.Fatal("q's enqueue did not wake the waiting lease (wait was 60 s)")
	}
	require.Empty(t, parked, "the lease waited once: p's enqueue did not wake it")

	got = waiting("p")
	require.NoError(t, c.Client.Resume(ctx, "p"))
	select {
	case jobs := <-got:
		require.Len(t, jobs, 1)
		require.Equal(t, jp.ID, jobs[0].ID)
	case <-time.After(10 * time.Second):
		t.Fatal("resume did not wake the waiting lease (wait was 60 s)")
	}
}

// TestAWaitingLeaseWakesOnAnotherCoresResume: the type is resumed in the
// store behind this core's back, as another core would, and only the
// queue.resume event that core publishes reaches this one.
func TestAWaitingLeaseWakesOnAnotherCoresResume(t *testing.T) {
	t.Parallel()
	parked := make(chan struct{}, 10)
	c := nodetest.NewCore(t, service.Config{OnLeaseWait: func([]string) { parked <- struct{}{} }})
	_, err := c.Client.Create(ctx, "p", nil, nil)
	require.NoError(t, err)
	require.NoError(t, c.Client.Pause(ctx, "p"))
	got := make(chan []core.Job, 1)
	go func() {
		jobs, _ := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"p"}, Wait: 60_000})
		got <- jobs
	}()
	waitFor(t, parked, "the lease waits")
	_, err = c.Store.Pause(ctx, "p", false)
	require.NoError(t, err)
	ev, err := json.Marshal(core.Event{Event: bus.QueueResume, Type: "p", At: 1})
	require.NoError(t, err)
	require.NoError(t, c.NATS.Conn.Publish(c.Client.Subjects().Queue(bus.QueueResume), ev))
	select {
	case jobs := <-got:
		require.Len(t, jobs, 1)
	case <-time.After(10 * time.Second):
		t.Fatal("queue.resume did not wake the waiting lease (wait was 60 s)")
	}
}

// TestAPauseOutlivesItsCore: a new core on the same store finds the type
// paused.
func TestAPauseOutlivesItsCore(t *testing.T) {
	c, _ := newCore(t)
	_, err := c.Client.Create(ctx, "p", nil, nil)
	require.NoError(t, err)
	require.NoError(t, c.Client.Pause(ctx, "p"))
	require.NoError(t, c.Service.Stop(ctx))

	s2, err := service.New(service.Config{Store: c.Store, Conn: bustest.Connect(t, c.NATS.ClientURL())})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s2.Stop(context.Background()) })
	body, code := raw(t, c, bus.MethodTypes, `{}`)
	require.Empty(t, code)
	require.JSONEq(t, `{"types":["p"],"paused":["p"]}`, body)
	require.Empty(t, lease(t, c, core.LeaseRequest{Types: []string{"p"}}), "still paused")
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out: " + what)
	}
}
