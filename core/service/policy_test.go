package service_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestTypeSetRefusesABadPolicyNamingTheField: each bad policy is refused
// invalid with the field named, and nothing is stored: the type has no
// policy after them all.
func TestTypeSetRefusesABadPolicyNamingTheField(t *testing.T) {
	c, _ := newCore(t)
	for _, tc := range []struct{ body, field string }{
		{`{"type":""}`, "type"},
		{`{"type":"a.b","concurrency":1}`, "type"},
		{`{"type":"t","concurrency":-1}`, "concurrency"},
		{`{"type":"t","concurrency":1000001}`, "concurrency"},
		{`{"type":"t","concurrency":"5"}`, "concurrency"},
		{`{"type":"t","rate":{"limit":5}}`, "rate.per"},
		{`{"type":"t","rate":{"limit":5,"per":-1}}`, "rate.per"},
		{`{"type":"t","rate":{"limit":-1,"per":1000}}`, "rate.limit"},
		{`{"type":"t","rate":{"limit":0,"per":1000}}`, "rate.limit"},
		{`{"type":"t","rate":{"limit":100001,"per":1000}}`, "rate.limit"},
		{`{"type":"t","group_concurrency":-2}`, "group_concurrency"},
		{`{"type":"t","group_rate":{"limit":1,"per":86400001}}`, "group_rate.per"},
		{`{"type":"t","aging":{"per":-1}}`, "aging.per"},
		{`{"type":"t","defaults":{"ttl":-1}}`, "defaults.ttl"},
		{`{"type":"t","defaults":{"max_attempts":2000000}}`, "defaults.max_attempts"},
		{`{"type":"t","defaults":{"priority":"soon"}}`, "defaults.priority"},
		{`{"type":"t","defaults":{"backoff":{"type":"linear","delay":5}}}`, "defaults.backoff.type"},
		{`{"type":"t","defaults":{"stall_limit":-1}}`, "defaults.stall_limit"},
		{`{"type":"t","defaults":{"remove_on_complete":{"age":-5}}}`, "defaults.remove_on_complete.age"},
	} {
		code, msg := rawError(t, c, bus.MethodTypeSet, tc.body)
		require.Equal(t, string(bus.CodeInvalid), code, "%s: %s", tc.body, msg)
		require.Contains(t, msg, tc.field+":", tc.body)
	}
	body, code := raw(t, c, bus.MethodTypeGet, `{"type":"t"}`)
	require.Empty(t, code, body)
	require.JSONEq(t, `{"type":"t"}`, body, "nothing stored")
	list, err := c.Client.ListTypes(ctx)
	require.NoError(t, err)
	require.Empty(t, list)
	code, msg := rawError(t, c, bus.MethodTypeGet, `{"type":""}`)
	require.Equal(t, string(bus.CodeInvalid), code, msg)
	require.Contains(t, msg, "type:")
}

// rawError sends body to a method and returns the error's code and message.
func rawError(t *testing.T, c *nodetest.Core, method, body string) (string, string) {
	t.Helper()
	msg, err := c.NATS.Conn.Request(c.Client.Subjects().Core(method), []byte(body), 5*time.Second)
	require.NoError(t, err)
	return msg.Header.Get(bus.HeaderKuebusCode), msg.Header.Get(bus.HeaderError)
}

// TestTypeSetGetList: set answers the policy as stored (what sets nothing
// left out), get and list read it back, and a set of nothing removes it.
func TestTypeSetGetList(t *testing.T) {
	c, _ := newCore(t)
	body, code := raw(t, c, bus.MethodTypeSet, `{"type":"email","concurrency":5,"rate":{"limit":100,"per":1000},
		"group_rate":{"limit":0,"per":0},"aging":{"per":0},"defaults":{"max_attempts":3,"ttl":120000}}`)
	require.Empty(t, code, body)
	want := `{"type":"email","concurrency":5,"rate":{"limit":100,"per":1000},"defaults":{"max_attempts":3,"ttl":120000}}`
	require.JSONEq(t, want, body)
	body, code = raw(t, c, bus.MethodTypeGet, `{"type":"email"}`)
	require.Empty(t, code, body)
	require.JSONEq(t, want, body)
	_, err := c.Client.SetType(ctx, &core.TypePolicy{Type: "api", GroupConcurrency: 1})
	require.NoError(t, err)
	body, code = raw(t, c, bus.MethodTypeList, `{}`)
	require.Empty(t, code, body)
	require.JSONEq(t, `{"types":[{"type":"api","group_concurrency":1},`+want+`]}`, body)

	_, err = c.Client.SetType(ctx, &core.TypePolicy{Type: "email"})
	require.NoError(t, err)
	got, err := c.Client.GetType(ctx, "email")
	require.NoError(t, err)
	require.Equal(t, &core.TypePolicy{Type: "email"}, got)
	list, err := c.Client.ListTypes(ctx)
	require.NoError(t, err)
	require.Equal(t, []core.TypePolicy{{Type: "api", GroupConcurrency: 1}}, list)
}

// TestTypeDefaultsApplyWhereTheCreateGivesNothing: a create of the type
// takes the policy's defaults for the fields it leaves out, in create and
// create_bulk; what a create gives wins; another type is untouched.
func TestTypeDefaultsApplyWhereTheCreateGivesNothing(t *testing.T) {
	c, _ := newCore(t)
	_, err := c.Client.SetType(ctx, &core.TypePolicy{Type: "mail", Defaults: &core.TypeDefaults{
		Priority: core.PriorityHigh, MaxAttempts: 3, TTL: 2 * time.Minute, Backoff: &core.Backoff{Type: core.BackoffFixed, Delay: 500 * time.Millisecond},
		StallLimit: new(int), RemoveOnComplete: core.RemoveAtOnce, RemoveOnFail: core.Retention{Age: time.Minute},
	}})
	require.NoError(t, err)

	body, code := raw(t, c, bus.MethodCreate, `{"type":"mail"}`)
	require.Empty(t, code, body)
	job := decodeJob(t, body)
	require.Equal(t, core.PriorityHigh, job.Priority)
	require.Equal(t, 3, job.MaxAttempts)
	require.Equal(t, int64(120_000), job.TTL)
	require.Equal(t, &core.Backoff{Type: core.BackoffFixed, Delay: 500 * time.Millisecond}, job.Backoff)
	require.Equal(t, 0, job.StallLimit)
	require.Equal(t, core.RemoveAtOnce, job.RemoveOnComplete)
	require.Equal(t, core.Retention{Age: time.Minute}, job.RemoveOnFail)

	body, code = raw(t, c, bus.MethodCreate, `{"type":"mail","priority":"low","max_attempts":7,"ttl":1000,
		"backoff":{"type":"exponential","delay":10},"stall_limit":4,"remove_on_complete":false,"remove_on_fail":true}`)
	require.Empty(t, code, body)
	job = decodeJob(t, body)
	require.Equal(t, core.PriorityLow, job.Priority)
	require.Equal(t, 7, job.MaxAttempts)
	require.Equal(t, int64(1000), job.TTL)
	require.Equal(t, &core.Backoff{Type: core.BackoffExponential, Delay: 10 * time.Millisecond}, job.Backoff)
	require.Equal(t, 4, job.StallLimit)
	require.Equal(t, core.RemoveAtOnce, job.RemoveOnComplete, "false is \"not given\" on the wire: the default holds")
	require.Equal(t, core.RemoveAtOnce, job.RemoveOnFail)

	jobs, err := c.Client.CreateBulk(ctx, []core.Spec{{Type: "mail"}, {Type: "mail", MaxAttempts: 2}, {Type: "other"}})
	require.NoError(t, err)
	require.Equal(t, []int{3, 2, 1}, []int{jobs[0].MaxAttempts, jobs[1].MaxAttempts, jobs[2].MaxAttempts})
	require.Equal(t, int64(core.TTLDefault), jobs[2].TTL, "a type without a policy keeps the built-in defaults")
	require.Equal(t, 1, jobs[2].StallLimit, "and the core's stall limit")
}

// TestConcurrencyHoldsAcrossLeasers: with concurrency 3, four leasers
// asking for 5 each at once get 3 in all; a lease that then waits is woken
// by a completion (its wait is far longer than the test), and gets one.
func TestConcurrencyHoldsAcrossLeasers(t *testing.T) {
	t.Parallel()
	waiting := make(chan struct{}, 8)
	c := nodetest.NewCore(t, service.Config{OnLeaseWait: func([]string) { waiting <- struct{}{} }})
	_, err := c.Client.SetType(ctx, &core.TypePolicy{Type: "db", Concurrency: 3})
	require.NoError(t, err)
	specs := make([]core.Spec, 20)
	for i := range specs {
		specs[i] = core.Spec{Type: "db"}
	}
	_, err = c.Client.CreateBulk(ctx, specs)
	require.NoError(t, err)

	var mu sync.Mutex
	var leased []core.Job
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"db"}, Max: 5, Worker: "w" + itoa(int64(i))})
			require.NoError(t, err)
			mu.Lock()
			leased = append(leased, jobs...)
			mu.Unlock()
		})
	}
	wg.Wait()
	require.Len(t, leased, 3, "3 active at most, deployment-wide")
	active, err := c.Client.Count(ctx, core.StateActive, "db")
	require.NoError(t, err)
	require.Equal(t, int64(3), active)

	reply := make(chan []core.Job, 1)
	go func() {
		jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"db"}, Max: 5, Worker: "late", Wait: core.MaxLeaseWait})
		if err != nil {
			t.Error(err)
		}
		reply <- jobs
	}()
	<-waiting
	require.NoError(t, c.Client.Complete(ctx, core.LeaseOp{ID: leased[0].ID, Lease: leased[0].Lease, Type: "db"}))
	select {
	case jobs := <-reply:
		require.Len(t, jobs, 1, "the completion made room for one")
	case <-time.After(10 * time.Second):
		t.Fatal("the completion did not wake the waiting lease")
	}
}

// TestRateHoldsInEveryWindow: with a rate of 5 per second, leases over
// three seconds of core's clock start no more than 5 jobs in any window
// of 1000 ms (checked on the jobs' started_at); a lease the rate holds
// back waits for the next slot by a timer, with no event to wake it.
func TestRateHoldsInEveryWindow(t *testing.T) {
	t.Parallel()
	clock := nodetest.NewClock(t0)
	waiting := make(chan struct{}, 8)
	c := nodetest.NewCore(t, service.Config{Now: clock.Now, OnLeaseWait: func([]string) { waiting <- struct{}{} }})
	_, err := c.Client.SetType(ctx, &core.TypePolicy{Type: "api", Rate: &core.Rate{Limit: 5, Per: time.Second}})
	require.NoError(t, err)
	specs := make([]core.Spec, 40)
	for i := range specs {
		specs[i] = core.Spec{Type: "api"}
	}
	_, err = c.Client.CreateBulk(ctx, specs)
	require.NoError(t, err)

	var starts []int64
	for range 30 { // 3 s in steps of 100 ms, each asking for 3
		for _, j := range lease(t, c, core.LeaseRequest{Types: []string{"api"}, Max: 3}) {
			starts = append(starts, j.StartedAt)
		}
		clock.Advance(100 * time.Millisecond)
	}
	require.Len(t, starts, 15, "5 in each of 3 seconds")
	for i, s := range starts {
		in := 0
		for _, o := range starts[i:] {
			if o < s+1000 {
				in++
			}
		}
		require.LessOrEqual(t, in, 5, "the window from %d holds %d starts", s, in)
	}

	// Held back (the 2 of 2100 are in the window after these 3), a waiting
	// lease wakes when the slot comes: the clock moves on, and no job
	// event follows.
	require.Len(t, lease(t, c, core.LeaseRequest{Types: []string{"api"}, Max: 5}), 3)
	body, code := raw(t, c, bus.MethodLease, `{"types":["api"],"max":1}`)
	require.Empty(t, code, body)
	require.JSONEq(t, `{"jobs":[],"until":`+itoa(t0.UnixMilli()+3100)+`}`, body,
		"a lease that does not wait hears when the rate allows the next start: as the starts of 2100 leave the window")
	reply := make(chan []core.Job, 1)
	go func() {
		jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"api"}, Max: 1, Wait: core.MaxLeaseWait})
		if err != nil {
			t.Error(err)
		}
		reply <- jobs
	}()
	<-waiting
	clock.Advance(time.Second)
	select {
	case jobs := <-reply:
		require.Len(t, jobs, 1)
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting lease did not wake at the rate's next slot")
	}
}

func decodeJob(t *testing.T, body string) core.Job {
	t.Helper()
	var j core.Job
	require.NoError(t, json.Unmarshal([]byte(body), &j))
	return j
}

// TestAScheduledJobTakesItsTypesDefaults: a schedule's tick, and a run of
// it by hand, make a job that takes its type's defaults for what the
// schedule's spec left out.
func TestAScheduledJobTakesItsTypesDefaults(t *testing.T) {
	c, clock := newCore(t)
	_, err := c.Client.SetType(ctx, &core.TypePolicy{Type: "report", Defaults: &core.TypeDefaults{
		Priority: core.PriorityHigh, Backoff: &core.Backoff{Type: core.BackoffFixed, Delay: 100 * time.Millisecond}}})
	require.NoError(t, err)
	every := time.Second
	_, err = c.Client.SetSchedule(ctx, &core.ScheduleSetRequest{Name: "s", Every: &every, Spec: core.Spec{Type: "report"}})
	require.NoError(t, err)
	clock.Advance(time.Second)
	fired, err := c.Client.FireSchedules(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 1, fired.Fired)
	jobs := lease(t, c, core.LeaseRequest{Types: []string{"report"}})
	require.Len(t, jobs, 1)
	require.Equal(t, core.PriorityHigh, jobs[0].Priority)
	require.Equal(t, &core.Backoff{Type: core.BackoffFixed, Delay: 100 * time.Millisecond}, jobs[0].Backoff)

	// A run by hand (schedule_run) takes them as a tick does (a moment
	// later: a run and a tick never take the same one).
	clock.Advance(time.Millisecond)
	run, err := c.Client.RunSchedule(ctx, "s")
	require.NoError(t, err)
	require.Equal(t, core.PriorityHigh, run.Priority)
	require.Equal(t, &core.Backoff{Type: core.BackoffFixed, Delay: 100 * time.Millisecond}, run.Backoff)
}

// TestALimitedLeaseWakesOnAnotherCoresComplete: a lease held back by its
// type's concurrency wakes on the job.complete another core publishes
// (here: the job completed behind this core's back, and the event sent by
// hand), its wait being far longer than the test.
func TestALimitedLeaseWakesOnAnotherCoresComplete(t *testing.T) {
	t.Parallel()
	parked := make(chan struct{}, 10)
	c := nodetest.NewCore(t, service.Config{OnLeaseWait: func([]string) { parked <- struct{}{} }})
	_, err := c.Client.SetType(ctx, &core.TypePolicy{Type: "one", Concurrency: 1})
	require.NoError(t, err)
	_, err = c.Client.CreateBulk(ctx, []core.Spec{{Type: "one"}, {Type: "one"}})
	require.NoError(t, err)
	running := lease(t, c, core.LeaseRequest{Types: []string{"one"}, Max: 1})[0]
	got := make(chan []core.Job, 1)
	go func() {
		jobs, _ := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{"one"}, Wait: core.MaxLeaseWait})
		got <- jobs
	}()
	waitFor(t, parked, "the lease waits, held back")
	res, err := c.Store.Apply(ctx, time.Now().UnixMilli(), core.OpComplete, []service.StoreOp{{ID: running.ID, Lease: running.Lease, Type: "one"}})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	ev, err := json.Marshal(core.Event{Event: bus.EventComplete, ID: running.ID, Type: "one", At: 1})
	require.NoError(t, err)
	require.NoError(t, c.NATS.Conn.Publish(c.Client.Subjects().Job(bus.EventComplete, running.ID, "one"), ev))
	select {
	case leased := <-got:
		require.Len(t, leased, 1)
	case <-time.After(10 * time.Second):
		t.Fatal("job.complete from another core did not wake the held-back lease")
	}
}

// TestAgingLetsAnOldLowJobPassAFreshHighOne: with aging of 100 ms per step
// of priority, a low job (10) 3 s old runs before a high one (-10) just
// created (3000 ms older beats 2000 ms of priority); without aging the
// high one runs first, however old the low one.
func TestAgingLetsAnOldLowJobPassAFreshHighOne(t *testing.T) {
	c, clock := newCore(t)
	_, err := c.Client.SetType(ctx, &core.TypePolicy{Type: "aged", Aging: &core.Aging{Per: 100 * time.Millisecond}})
	require.NoError(t, err)
	oldAged, err := c.Client.Create(ctx, "aged", nil, &core.CreateOpts{Priority: core.PriorityLow})
	require.NoError(t, err)
	oldStrict, err := c.Client.Create(ctx, "strict", nil, &core.CreateOpts{Priority: core.PriorityLow})
	require.NoError(t, err)
	clock.Advance(3 * time.Second)
	_, err = c.Client.Create(ctx, "aged", nil, &core.CreateOpts{Priority: core.PriorityHigh})
	require.NoError(t, err)
	freshStrict, err := c.Client.Create(ctx, "strict", nil, &core.CreateOpts{Priority: core.PriorityHigh})
	require.NoError(t, err)

	require.Equal(t, oldAged.ID, lease(t, c, core.LeaseRequest{Types: []string{"aged"}})[0].ID, "aging: the old low job first")
	require.Equal(t, freshStrict.ID, lease(t, c, core.LeaseRequest{Types: []string{"strict"}})[0].ID, "strict: the high job first")
	require.Equal(t, oldStrict.ID, lease(t, c, core.LeaseRequest{Types: []string{"strict"}})[0].ID)
}

// TestLimitsHoldAcrossTwoCores: with two cores on one Redis (requests
// spread over them by the queue group), a concurrency of 3 gives 3 jobs to
// four leasers asking for 5 each, and a rate of 4 per minute starts 4 for
// four others.
func TestLimitsHoldAcrossTwoCores(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	nodetest.AddCore(t, c, service.Config{})
	_, err := c.Client.SetType(ctx, &core.TypePolicy{Type: "db", Concurrency: 3})
	require.NoError(t, err)
	_, err = c.Client.SetType(ctx, &core.TypePolicy{Type: "api", Rate: &core.Rate{Limit: 4, Per: time.Minute}})
	require.NoError(t, err)
	specs := make([]core.Spec, 0, 40)
	for range 20 {
		specs = append(specs, core.Spec{Type: "db"}, core.Spec{Type: "api"})
	}
	_, err = c.Client.CreateBulk(ctx, specs)
	require.NoError(t, err)

	var mu sync.Mutex
	byType := map[string]int{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			jobType := []string{"db", "api"}[i%2]
			jobs, err := c.Client.Lease(ctx, core.LeaseRequest{Types: []string{jobType}, Max: 5})
			require.NoError(t, err)
			mu.Lock()
			byType[jobType] += len(jobs)
			mu.Unlock()
		})
	}
	wg.Wait()
	require.Equal(t, map[string]int{"db": 3, "api": 4}, byType)
}

// TestAGroupOfThreeIsNotStuckBehindAGroupOfSixty: over NATS, three jobs of
// one group created after sixty of another are among the first six
// leased; a bad group is invalid, naming the field.
func TestAGroupOfThreeIsNotStuckBehindAGroupOfSixty(t *testing.T) {
	c, _ := newCore(t)
	specs := make([]core.Spec, 0, 60)
	for range 60 {
		specs = append(specs, core.Spec{Type: "shop", Group: "acme"})
	}
	_, err := c.Client.CreateBulk(ctx, specs)
	require.NoError(t, err)
	for range 3 {
		_, err := c.Client.Create(ctx, "shop", nil, &core.CreateOpts{Group: "tiny"})
		require.NoError(t, err)
	}
	tiny := 0
	for _, j := range lease(t, c, core.LeaseRequest{Types: []string{"shop"}, Max: 6}) {
		if j.Group == "tiny" {
			tiny++
		}
	}
	require.Equal(t, 3, tiny)

	code, msg := rawError(t, c, bus.MethodCreate, `{"type":"shop","group":"a.b"}`)
	require.Equal(t, string(bus.CodeInvalid), code)
	require.Contains(t, msg, "group:")
}
