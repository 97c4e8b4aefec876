package worker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/promoter"
	"github.com/kuebus/kuebus/worker"
)

var ctx = context.Background()

// stack is a core with the promote and rescue loops running, as `kuebus
// dev` runs them.
func stack(t *testing.T) *nodetest.Core {
	t.Helper()
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	loopCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = promoter.RunLoop(loopCtx, promoter.LoopConfig{Core: c.Client, MaxSleep: 100 * time.Millisecond})
	})
	wg.Go(func() {
		_ = promoter.RunRescueLoop(loopCtx, promoter.RescueConfig{Core: c.Client, Interval: 50 * time.Millisecond})
	})
	t.Cleanup(func() { stop(); wg.Wait() })
	return c
}

// newWorker returns a worker on its own connection to the stack's NATS.
func newWorker(t *testing.T, c *nodetest.Core, cfg worker.Config) *worker.Worker {
	t.Helper()
	cfg.Conn = bustest.Connect(t, c.NATS.ClientURL())
	w, err := worker.New(cfg)
	require.NoError(t, err)
	return w
}

// run starts w.Run and returns a function that stops it and returns Run's error.
func run(t *testing.T, w *worker.Worker) (stop func() error) {
	t.Helper()
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("worker.Run did not return within 30s of its context ending")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func await(t *testing.T, c *nodetest.Core, id int64) *core.Job {
	t.Helper()
	waitCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	job, err := c.Client.Await(waitCtx, id)
	require.NoError(t, err, "job %d did not finish", id)
	return job
}

func create(t *testing.T, c *nodetest.Core, typ string, data any, opts *core.CreateOpts) *core.Job {
	t.Helper()
	job, err := c.Client.Create(ctx, typ, data, opts)
	require.NoError(t, err)
	return job
}

func within(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not happen within 20s", what)
	}
}
