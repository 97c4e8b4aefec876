package worker_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/worker"
)

// records is a slog handler that hands every record to a channel, so a
// test can wait for a line and see which levels were logged.
type records chan slog.Record

func (r records) Enabled(context.Context, slog.Level) bool { return true }
func (r records) Handle(_ context.Context, rec slog.Record) error {
	select {
	case r <- rec:
	default:
	}
	return nil
}
func (r records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r records) WithGroup(string) slog.Handler      { return r }

// TestACancelledJobsHandlerSeesErrCancelled: a worker of one type (one
// subscription, job.cancel.*.<type>) and a worker of two (job.cancel.*.*)
// each run a handler that waits on its context; cancelling the job ends
// that context with cause ErrCancelled. The handler's acknowledgement
// (complete, as it returns nil) answers conflict and changes nothing; the
// worker logs it at debug, with no warning and no retry.
func TestACancelledJobsHandlerSeesErrCancelled(t *testing.T) {
	for _, tc := range []struct {
		name  string
		types []string
	}{{"a worker of one type", []string{"long"}}, {"a worker of two types", []string{"other", "long"}}} {
		t.Run(tc.name, func(t *testing.T) {
			c := stack(t)
			logs := make(records, 1000)
			w := newWorker(t, c, worker.Config{Logger: slog.New(logs)})
			started := make(chan struct{})
			causes := make(chan error, 1)
			for _, typ := range tc.types {
				w.Handle(typ, worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
					close(started)
					<-ctx.Done()
					causes <- context.Cause(ctx)
					return nil
				}))
			}
			run(t, w)
			j := create(t, c, "long", nil, &core.CreateOpts{TTL: time.Minute})
			within(t, started, "the handler starts")

			cancelled, err := c.Client.Cancel(ctx, j.ID, "not needed")
			require.NoError(t, err)
			select {
			case cause := <-causes:
				require.ErrorIs(t, cause, worker.ErrCancelled)
			case <-time.After(20 * time.Second):
				t.Fatal("the handler's context was not cancelled within 20s")
			}
			timeout := time.After(20 * time.Second)
			for acked := false; !acked; {
				select {
				case rec := <-logs:
					require.Less(t, rec.Level, slog.LevelWarn, "%s", rec.Message)
					acked = rec.Message == "acknowledgement of a cancelled job: conflict, as expected"
				case <-timeout:
					t.Fatal("no answer to the acknowledgement within 20s")
				}
			}
			got, err := c.Client.Get(ctx, j.ID)
			require.NoError(t, err)
			require.Equal(t, cancelled, got, "the acknowledgement changed nothing")
		})
	}
}

// TestABulkCancelReachesEveryRunningHandler: bulk cancel of the active
// state publishes job.cancel per job, and each running handler's context
// ends with ErrCancelled.
func TestABulkCancelReachesEveryRunningHandler(t *testing.T) {
	c := stack(t)
	w := newWorker(t, c, worker.Config{})
	started := make(chan struct{}, 3)
	causes := make(chan error, 3)
	w.Process("long", 3, func(ctx context.Context, job *worker.Job) error {
		started <- struct{}{}
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	}, nil)
	run(t, w)
	for range 3 {
		create(t, c, "long", nil, &core.CreateOpts{TTL: time.Minute})
	}
	for range 3 {
		within(t, started, "a handler starts")
	}
	total, err := c.Client.BulkAll(ctx, core.BulkActionRequest{Action: core.BulkCancel, State: core.StateActive, Type: "long"}, nil)
	require.NoError(t, err)
	require.Equal(t, 3, total.Done)
	for range 3 {
		select {
		case cause := <-causes:
			require.ErrorIs(t, cause, worker.ErrCancelled)
		case <-time.After(20 * time.Second):
			t.Fatal("a handler's context was not cancelled within 20s")
		}
	}
}
