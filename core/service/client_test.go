package service_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
)

// The typed calls of core.Client that workers and the promoter make, each
// through a real core: what it changes, what it returns, and how its errors
// read.

func TestClientLeaseHolderCallsMoveAJobThroughItsLife(t *testing.T) {
	c, clock := newCore(t)
	created, err := c.Client.Create(ctx, "life", nil, &core.CreateOpts{MaxAttempts: 2, TTL: 5 * time.Second})
	require.NoError(t, err)
	leaseOne := func() core.Job {
		t.Helper()
		jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"life"}, Worker: "w1"})
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		require.Equal(t, created.ID, jobs[0].ID)
		require.NotEmpty(t, jobs[0].Lease)
		return jobs[0]
	}
	holder := func(j core.Job) core.LeaseOp { return core.LeaseOp{ID: j.ID, Lease: j.Lease, Type: j.Type} }

	j := leaseOne()
	require.Equal(t, core.StateActive, j.State)
	require.Equal(t, "w1", j.WorkerID)

	done, total := int64(1), int64(4)
	o := holder(j)
	o.Complete, o.Total = &done, &total
	require.NoError(t, c.Client.Progress(ctx, o))
	got, err := c.Client.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, 25, got.Progress)

	clock.Advance(time.Second)
	until, err := c.Client.Touch(ctx, holder(j))
	require.NoError(t, err)
	require.Equal(t, clock.Now().Add(5*time.Second).UnixMilli(), until.UnixMilli(), "a touch extends by the ttl from now")

	o = holder(j)
	o.Error = "boom"
	failed, err := c.Client.Fail(ctx, o)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, failed.State, "one attempt left: retried")
	require.Equal(t, 1, failed.Attempts)
	require.Equal(t, "boom", failed.Error)

	j = leaseOne()
	o = holder(j)
	o.Delay = new(int64(3000))
	require.NoError(t, c.Client.Rejoin(ctx, o))
	got, err = c.Client.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateDelayed, got.State)
	require.Equal(t, clock.Now().UnixMilli()+3000, got.PromoteAt)
	require.Equal(t, 1, got.Attempts, "a rejoin uses no attempt")

	clock.Advance(3 * time.Second)
	moved, err := c.Client.Promote(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 1, moved.Moved)

	j = leaseOne()
	require.NoError(t, c.Client.Release(ctx, holder(j)))
	got, err = c.Client.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, got.State)
	require.Equal(t, 1, got.Attempts, "a release uses no attempt")

	j = leaseOne()
	o = holder(j)
	o.Result = json.RawMessage(`{"sent":true}`)
	require.NoError(t, c.Client.Complete(ctx, o))
	require.NoError(t, c.Client.Complete(ctx, o), "sent again with the same lease: success, no change")
	got, err = c.Client.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateComplete, got.State)
	require.JSONEq(t, `{"sent":true}`, string(got.Result))

	jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"life"}})
	require.NoError(t, err)
	require.Empty(t, jobs, "nothing ready: no jobs, no error")
}

func TestClientLeaseHolderCallsNameTheirMethodAndKeepTheSentinel(t *testing.T) {
	c, _ := newCore(t)
	created, err := c.Client.Create(ctx, "stale", nil, nil)
	require.NoError(t, err)
	jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"stale"}})
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	stale := core.LeaseOp{ID: created.ID, Lease: "not-the-token", Type: "stale"}
	progress := stale
	one := int64(1)
	progress.Complete, progress.Total = &one, &one

	calls := []struct {
		method string
		call   func() error
	}{
		{bus.MethodComplete, func() error { return c.Client.Complete(ctx, stale) }},
		{bus.MethodFail, func() error { _, err := c.Client.Fail(ctx, stale); return err }},
		{bus.MethodTouch, func() error { _, err := c.Client.Touch(ctx, stale); return err }},
		{bus.MethodRelease, func() error { return c.Client.Release(ctx, stale) }},
		{bus.MethodRejoin, func() error { return c.Client.Rejoin(ctx, stale) }},
		{bus.MethodProgress, func() error { return c.Client.Progress(ctx, progress) }},
	}
	for _, tc := range calls {
		err := tc.call()
		require.ErrorIs(t, err, core.ErrConflict, tc.method)
		require.ErrorContains(t, err, "core."+tc.method+": ", tc.method)
	}

	_, err = c.Client.Lease(ctx, core.LeaseRequest{})
	require.ErrorIs(t, err, core.ErrInvalid)
	require.ErrorContains(t, err, "core.lease: ")
	_, err = c.Client.Batch(ctx, nil)
	require.ErrorIs(t, err, core.ErrInvalid)
	require.ErrorContains(t, err, "core.batch: ")
	_, err = c.Client.Rescue(ctx, &core.RescueRequest{StallLimit: -1})
	require.ErrorIs(t, err, core.ErrInvalid)
	require.ErrorContains(t, err, "core.rescue: ")

	got, err := c.Client.Get(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateActive, got.State, "the stale calls changed nothing")
}

func TestClientBatchAnswersEachOperationInOrder(t *testing.T) {
	c, clock := newCore(t)
	for range 3 {
		_, err := c.Client.Create(ctx, "many", nil, &core.CreateOpts{TTL: 2 * time.Second})
		require.NoError(t, err)
	}
	jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"many"}, Max: 3})
	require.NoError(t, err)
	require.Len(t, jobs, 3)
	results, err := c.Client.Batch(ctx, []core.LeaseOp{
		{Op: core.OpComplete, ID: jobs[0].ID, Lease: jobs[0].Lease, Type: "many"},
		{Op: core.OpTouch, ID: jobs[1].ID, Lease: jobs[1].Lease, Type: "many"},
		{Op: core.OpRelease, ID: jobs[2].ID, Lease: "stale", Type: "many"},
	})
	require.NoError(t, err)
	require.Equal(t, []core.OpResult{
		{ID: jobs[0].ID, State: core.StateComplete},
		{ID: jobs[1].ID, State: core.StateActive, LeaseUntil: clock.Now().UnixMilli() + 2000},
		{ID: jobs[2].ID, Error: results[2].Error},
	}, results)
	require.NotNil(t, results[2].Error)
	require.Equal(t, string(bus.CodeConflict), results[2].Error.Code)
}

func TestClientRescueSendsAnExpiredLeaseBack(t *testing.T) {
	c, clock := newCore(t)
	created, err := c.Client.Create(ctx, "lost", nil, &core.CreateOpts{TTL: time.Second})
	require.NoError(t, err)
	jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"lost"}})
	require.NoError(t, err)
	require.Len(t, jobs, 1)

	mv, err := c.Client.Rescue(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, 0, mv.Moved, "the lease still holds")

	clock.Advance(2 * time.Second)
	mv, err = c.Client.Rescue(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, 1, mv.Moved)
	got, err := c.Client.Get(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, got.State)
	require.Equal(t, 1, got.Stalls)
}

// The bodies the typed calls put on the wire are the ones docs/protocol.md
// documents: a listener beside core sees each request as sent.
func TestClientSendsTheDocumentedBodies(t *testing.T) {
	c, _ := newCore(t)
	nc := bustest.Connect(t, c.NATS.ClientURL())
	wire, err := nc.SubscribeSync(c.Client.Subjects().AllCore())
	require.NoError(t, err)
	require.NoError(t, nc.Flush(), "the server knows the listener before the first call")
	sent := func(method string) string {
		t.Helper()
		msg, err := wire.NextMsg(10 * time.Second)
		require.NoError(t, err)
		require.Equal(t, c.Client.Subjects().Core(method), msg.Subject)
		return string(msg.Data)
	}

	created, err := c.Client.Create(ctx, "w", nil, nil)
	require.NoError(t, err)
	sent(bus.MethodCreate)
	jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"w"}, Max: 2, Worker: "w1"})
	require.NoError(t, err)
	require.Equal(t, `{"types":["w"],"max":2,"worker":"w1"}`, sent(bus.MethodLease))
	id, lease := created.ID, jobs[0].Lease
	holder := core.LeaseOp{ID: id, Lease: lease, Type: "w"}
	want := func(rest string) string { return fmt.Sprintf(`{"id":%d,"lease":%q,"type":"w"%s}`, id, lease, rest) }

	three, four := int64(3), int64(4)
	progress := holder
	progress.Complete, progress.Total = &three, &four
	require.NoError(t, c.Client.Progress(ctx, progress))
	require.Equal(t, want(`,"complete":3,"total":4`), sent(bus.MethodProgress))

	_, err = c.Client.Touch(ctx, holder)
	require.NoError(t, err)
	require.Equal(t, want(""), sent(bus.MethodTouch))

	touch := holder
	touch.Op = core.OpTouch
	_, err = c.Client.Batch(ctx, []core.LeaseOp{touch})
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf(`{"ops":[{"op":"touch","id":%d,"lease":%q,"type":"w"}]}`, id, lease), sent(bus.MethodBatch))

	complete := holder
	complete.Result = json.RawMessage(`{"ok":1}`)
	require.NoError(t, c.Client.Complete(ctx, complete))
	require.Equal(t, want(`,"result":{"ok":1}`), sent(bus.MethodComplete))

	_, err = c.Client.Rescue(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, `{}`, sent(bus.MethodRescue))

	require.NoError(t, c.Client.Pause(ctx, "w"))
	require.Equal(t, `{"type":"w"}`, sent(bus.MethodPause))
	require.NoError(t, c.Client.Resume(ctx, "w"))
	require.Equal(t, `{"type":"w"}`, sent(bus.MethodResume))

	_, err = c.Client.Cancel(ctx, 999, "why")
	require.ErrorIs(t, err, core.ErrNotFound)
	require.Equal(t, `{"id":999,"reason":"why"}`, sent(bus.MethodCancel))
	_, err = c.Client.Cancel(ctx, 999, "")
	require.ErrorIs(t, err, core.ErrNotFound)
	require.Equal(t, `{"id":999}`, sent(bus.MethodCancel))
	_, err = c.Client.Bulk(ctx, core.BulkActionRequest{Action: core.BulkRetry, State: core.StateFailed})
	require.NoError(t, err)
	require.Equal(t, `{"action":"retry","state":"failed"}`, sent(bus.MethodBulk))
	every := int64(5000)
	_, err = c.Client.SetSchedule(ctx, &core.ScheduleSetRequest{Name: "s", Every: new(time.Duration(every) * time.Millisecond), Spec: core.Spec{Type: "w"}})
	require.NoError(t, err)
	require.Equal(t, `{"name":"s","every":5000,"spec":{"type":"w"}}`, sent(bus.MethodScheduleSet))
	_, err = c.Client.Schedules(ctx)
	require.NoError(t, err)
	require.Equal(t, `{}`, sent(bus.MethodScheduleList))
	_, err = c.Client.FireSchedules(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, `{}`, sent(bus.MethodScheduleFire))
	require.NoError(t, c.Client.RemoveSchedule(ctx, "s"))
	require.Equal(t, `{"name":"s"}`, sent(bus.MethodScheduleRemove))
	_, err = c.Client.SetType(ctx, &core.TypePolicy{Type: "w", Concurrency: 2})
	require.NoError(t, err)
	require.Equal(t, `{"type":"w","concurrency":2}`, sent(bus.MethodTypeSet))
	_, err = c.Client.GetType(ctx, "w")
	require.NoError(t, err)
	require.Equal(t, `{"type":"w"}`, sent(bus.MethodTypeGet))
	_, err = c.Client.ListTypes(ctx)
	require.NoError(t, err)
	require.Equal(t, `{}`, sent(bus.MethodTypeList))
	_, err = c.Client.Explain(ctx, 999)
	require.ErrorIs(t, err, core.ErrNotFound)
	require.Equal(t, `{"id":999}`, sent(bus.MethodExplain))
}

func TestClientReportsEveryCallToOnCall(t *testing.T) {
	c, _ := newCore(t)
	type report struct {
		method string
		err    error
	}
	var mu sync.Mutex
	var reports []report
	client, err := core.NewClient(bustest.Connect(t, c.NATS.ClientURL()), &core.ClientOptions{
		OnCall: func(method string, took time.Duration, err error) {
			require.Positive(t, took)
			mu.Lock()
			defer mu.Unlock()
			reports = append(reports, report{method, err})
		},
	})
	require.NoError(t, err)

	_, err = client.Stats(ctx)
	require.NoError(t, err)
	_, getErr := client.Get(ctx, 404)
	require.ErrorIs(t, getErr, core.ErrNotFound)
	_, err = client.Lease(ctx, core.LeaseRequest{Types: []string{"none"}})
	require.NoError(t, err)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reports, 3)
	require.Equal(t, report{bus.MethodStats, nil}, reports[0])
	require.Equal(t, report{bus.MethodGet, getErr}, reports[1], "the hook sees the error the caller gets")
	require.Equal(t, report{bus.MethodLease, nil}, reports[2])
}
