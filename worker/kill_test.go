package worker_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/worker"
)

// childEnv carries the NATS URL to the worker process the SIGKILL test starts.
const childEnv = "KUEBUS_TEST_WORKER_NATS"

// childWorker is that process: a real worker that reports every run it
// starts on kill.ran, so the test can count runs, duplicates included.
func childWorker() int {
	nc, err := bus.Connect(os.Getenv(childEnv), "kill-test-worker")
	if err != nil {
		return 3
	}
	w, err := worker.New(worker.Config{Conn: nc, Concurrency: 8})
	if err != nil {
		return 3
	}
	w.Process("kill", 8, func(ctx context.Context, job *worker.Job) error {
		_ = nc.Publish("kill.ran", []byte(strconv.FormatInt(job.ID, 10)))
		// Some work, so the SIGKILL lands in the middle of handlers.
		t := time.NewTimer(10 * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}, nil)
	_ = w.Run(context.Background()) // until killed
	return 0
}

func startChild(t *testing.T, natsURL string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+natsURL)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// TestWorkerProcessKilledMidRunLosesNoJob kills a worker process with
// SIGKILL while it runs a stream of jobs; a second worker process and the
// rescue loop finish the rest. Every job completes; duplicates (jobs that
// ran in the killed process and again) are counted and reported.
func TestWorkerProcessKilledMidRunLosesNoJob(t *testing.T) {
	c := stack(t)
	const n = 300
	var mu sync.Mutex
	runs := map[int64]int{}
	ran := make(chan struct{}, n*2)
	sub, err := c.NATS.Conn.Subscribe("kill.ran", func(m *nats.Msg) {
		id, _ := strconv.ParseInt(string(m.Data), 10, 64)
		mu.Lock()
		runs[id]++
		mu.Unlock()
		ran <- struct{}{}
	})
	require.NoError(t, err)
	defer sub.Unsubscribe()
	require.NoError(t, c.NATS.Conn.Flush())

	specs := make([]core.Spec, n)
	for i := range specs {
		specs[i] = core.Spec{Type: "kill", TTL: 500 * time.Millisecond}
	}
	jobs, err := c.Client.CreateBulk(ctx, specs)
	require.NoError(t, err)

	first := startChild(t, c.NATS.ClientURL())
	for range n / 3 {
		within(t, ran, "a run in the first worker process")
	}
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	startChild(t, c.NATS.ClientURL())

	for _, j := range jobs {
		require.Equal(t, core.StateComplete, await(t, c, j.ID).State, "job %d", j.ID)
	}
	mu.Lock()
	defer mu.Unlock()
	dups := 0
	for _, j := range jobs {
		require.GreaterOrEqual(t, runs[j.ID], 1, "job %d never ran", j.ID)
		dups += runs[j.ID] - 1
	}
	st, err := c.Client.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(n), st.Complete)
	t.Logf("SIGKILL mid-run: %d jobs, all complete; %d ran twice (at least once delivery)", n, dups)
}
