package kuebustest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/kuebustest"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/worker"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(nodetest.LeakIgnores()...); err != nil {
			fmt.Fprintf(os.Stderr, "kuebustest: goroutines left behind: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// TestWorkTellsEveryOutcome: Work judges a handler's return as a worker
// does, and says the wait a retry asks for.
func TestWorkTellsEveryOutcome(t *testing.T) {
	ctx := t.Context()
	boom := errors.New("boom")
	for _, c := range []struct {
		name    string
		handler worker.HandlerFunc
		outcome worker.Outcome
		retry   time.Duration
		is      error
	}{
		{"nil completes", func(context.Context, *worker.Job) error { return nil }, worker.OutcomeComplete, -1, nil},
		{"an error fails the attempt", func(context.Context, *worker.Job) error { return boom }, worker.OutcomeFail, -1, boom},
		{"Discard fails for good", func(context.Context, *worker.Job) error { return worker.Discard(boom) }, worker.OutcomeDiscard, -1, boom},
		{"RetryAfter puts back", func(context.Context, *worker.Job) error { return worker.RetryAfter(time.Hour) }, worker.OutcomeRetryAfter, time.Hour, nil},
		{"DelayRetry fails and waits", func(context.Context, *worker.Job) error { return worker.DelayRetry(boom, time.Minute) }, worker.OutcomeFail, time.Minute, boom},
		{"past the ttl", func(ctx context.Context, _ *worker.Job) error { <-ctx.Done(); return ctx.Err() }, worker.OutcomeFail, -1, worker.ErrTTLExceeded},
	} {
		t.Run(c.name, func(t *testing.T) {
			job := kuebustest.NewJob("t", nil, &kuebustest.JobOpts{CreateOpts: core.CreateOpts{TTL: 50 * time.Millisecond}})
			res := kuebustest.Work(ctx, c.handler, job)
			require.Equal(t, c.outcome, res.Outcome)
			require.Equal(t, c.retry, res.Retry)
			if c.is != nil {
				require.ErrorIs(t, res.Err, c.is)
			} else if c.outcome == worker.OutcomeComplete {
				require.NoError(t, res.Err)
			}
		})
	}
	res := kuebustest.Work(ctx, worker.HandlerFunc(func(context.Context, *worker.Job) error { panic("oops") }), kuebustest.NewJob("t", nil, nil))
	var p *worker.PanicError
	require.ErrorAs(t, res.Err, &p)
	require.Equal(t, worker.OutcomeFail, res.Outcome)
}

// TestNewJobIsAFirstAttemptWithCoresDefaults: the job a handler gets in a
// test looks like a leased one: attempt 1, core's defaults filled, data as
// JSON, every option as core's create sets it; bad options are the test's mistake and panic.
func TestNewJobIsAFirstAttemptWithCoresDefaults(t *testing.T) {
	job := kuebustest.NewJob("email", Welcome{To: "a"}, nil)
	require.Equal(t, 1, job.Attempts)
	require.Equal(t, 1, job.MaxAttempts)
	require.Equal(t, time.Duration(core.TTLDefault)*time.Millisecond, job.TTLDuration())
	require.Equal(t, core.StateActive, job.State)
	require.JSONEq(t, `{"to":"a"}`, string(job.Data))
	// every option reaches the job, as core's create makes it
	three := 3
	opted := kuebustest.NewJob("email", nil, &kuebustest.JobOpts{CreateOpts: core.CreateOpts{StallLimit: &three, Group: "acme"}})
	require.Equal(t, 3, opted.StallLimit)
	require.Equal(t, "acme", opted.Group)
	require.Panics(t, func() { kuebustest.NewJob("a.b", nil, nil) }, "not a job type")
	require.Panics(t, func() {
		kuebustest.NewJob("t", nil, &kuebustest.JobOpts{CreateOpts: core.CreateOpts{TTL: -time.Second}})
	})
}

// TestWorkRecordsFromManyGoroutines: a handler that logs from goroutines
// of its own has every line recorded.
func TestWorkRecordsFromManyGoroutines(t *testing.T) {
	res := kuebustest.Work(t.Context(), worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Go(func() { _ = job.Log(ctx, fmt.Sprint(i)) })
		}
		wg.Wait()
		return nil
	}), kuebustest.NewJob("t", nil, nil))
	require.Len(t, res.Logs, 10)
}

// TestRequireEnqueuedOnARealQueue: the assertions see what the code under
// test created, narrowed by the options, and fail the test, naming what
// they found, when it is not what they want.
func TestRequireEnqueuedOnARealQueue(t *testing.T) {
	q := kuebustest.Start(t, nil)
	ctx := t.Context()
	kuebustest.RequireNotEnqueued[Welcome](t, q.Client, nil)
	_, err := core.CreateArgs(ctx, q.Client, Welcome{To: "ada"}, &core.CreateOpts{Priority: core.PriorityHigh})
	require.NoError(t, err)
	got := kuebustest.RequireEnqueued[Welcome](t, q.Client, nil)
	require.Equal(t, "ada", got.Args.To)
	require.Equal(t, core.PriorityHigh, got.Job.Priority)

	_, err = core.CreateArgsBulk(ctx, q.Client, []Welcome{{To: "bob"}, {To: "cy"}}, &core.CreateOpts{Delay: time.Hour})
	require.NoError(t, err)
	delayed := kuebustest.RequireManyEnqueued[Welcome](t, q.Client, 2, &kuebustest.RequireOpts{State: core.StateDelayed})
	require.Equal(t, []string{"bob", "cy"}, []string{delayed[0].Args.To, delayed[1].Args.To})
	high := core.PriorityHigh
	kuebustest.RequireEnqueued[Welcome](t, q.Client, &kuebustest.RequireOpts{Priority: &high})

	msg := fails(t, func(tb testing.TB) { kuebustest.RequireEnqueued[Welcome](tb, q.Client, nil) })
	require.Contains(t, msg, `want 1 job of type "welcome" (kuebustest_test.Welcome), found 3: `)
	msg = fails(t, func(tb testing.TB) {
		kuebustest.RequireNotEnqueued[Welcome](tb, q.Client, &kuebustest.RequireOpts{State: core.StateInactive})
	})
	require.Contains(t, msg, `want no job of type "welcome" (kuebustest_test.Welcome) (state inactive), found 1: `)
	require.Contains(t, msg, `{"to":"ada"}`)
}

// TestAWorkerOnTheQueue: a worker started by the queue runs the jobs of
// the code under test until the test ends.
func TestAWorkerOnTheQueue(t *testing.T) {
	q := kuebustest.Start(t, nil)
	w := q.NewWorker(t, worker.Config{})
	worker.HandleArgs(w, sendWelcome, nil)
	q.Run(t, w)
	job, err := core.CreateArgs(t.Context(), q.Client, Welcome{To: "ada"}, nil)
	require.NoError(t, err)
	done := q.Await(t, job.ID)
	require.Equal(t, core.StateComplete, done.State)
	require.JSONEq(t, `{"sent":true}`, string(done.Result))
	logs, err := q.Client.Log(t.Context(), job.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"sending to ada"}, logs)
}

// failingTB is a testing.TB whose Fatalf records the message and ends the
// goroutine, as the real one does: to test that an assertion fails.
type failingTB struct {
	testing.TB
	msg string
}

func (f *failingTB) Helper() {}

func (f *failingTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fails runs fn with a failingTB and returns the failure it reported; the
// test fails when there was none.
func fails(t *testing.T, fn func(testing.TB)) string {
	t.Helper()
	tb := &failingTB{TB: t}
	var wg sync.WaitGroup
	wg.Go(func() { fn(tb) })
	wg.Wait()
	require.NotEmpty(t, tb.msg, "the assertion did not fail")
	return tb.msg
}
