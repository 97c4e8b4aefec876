package worker_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/worker"
)

// logBuffer collects a logger's lines; safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the lines that contain s.
func (b *logBuffer) lines(s string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var got []string
	for l := range strings.Lines(b.buf.String()) {
		if strings.Contains(l, s) {
			got = append(got, l)
		}
	}
	return got
}

// TestAStopWithAcknowledgementsUnansweredEndsWithinItsGrace: a handler
// finishes while the only thing serving core.batch takes requests and never
// answers. The worker is stopped with a grace of 200 ms; its ack call in
// flight would hold it for 3 s (the ack call timeout). The stop gives the
// acknowledgement up when the grace ends, cutting the call short, and says
// so in one warning line.
func TestAStopWithAcknowledgementsUnansweredEndsWithinItsGrace(t *testing.T) {
	cs := newCores(t)
	a := cs.start(nil)
	var logs logBuffer
	started, finish := make(chan struct{}), make(chan struct{})
	w := cs.worker(worker.Config{ShutdownTimeout: 200 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	w.Process("ack", 1, func(ctx context.Context, job *worker.Job) error {
		close(started)
		<-finish
		return nil
	}, nil)
	stop := run(t, w)
	_, err := cs.client().Create(ctx, "ack", nil, &core.CreateOpts{TTL: time.Minute})
	require.NoError(t, err)
	within(t, started, "the handler's start")

	a.Close()
	swallowed, _ := cs.hang()
	close(finish)
	within(t, swallowed, "the acknowledgement reaching the hung core")

	began := time.Now()
	require.NoError(t, stop(), "the handler finished: a clean stop")
	took := time.Since(began)
	require.Less(t, took, 2*time.Second, "the stop waited for the ack call in flight")
	t.Logf("stopped in %s", took.Round(time.Millisecond))

	warned := logs.lines("acknowledgements")
	require.Len(t, warned, 1, "one line, not one per batch or try: %q", warned)
	require.Contains(t, warned[0], "level=WARN")
	require.Contains(t, warned[0], "undelivered")
	require.Contains(t, warned[0], "jobs=1")
}

// TestAcknowledgementsWithNoCoreLogOneLineEachNotOneATry: with no core at
// all, an acknowledgement is tried again and again (with backoff) for the
// stop's grace of 1 s. The log says once that it is being sent again, and
// once, at the stop, that it was given up: two lines, however many tries.
func TestAcknowledgementsWithNoCoreLogOneLineEachNotOneATry(t *testing.T) {
	cs := newCores(t)
	a := cs.start(nil)
	var logs logBuffer
	started, finish := make(chan struct{}), make(chan struct{})
	w := cs.worker(worker.Config{ShutdownTimeout: time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	w.Process("ack", 1, func(ctx context.Context, job *worker.Job) error {
		close(started)
		<-finish
		return nil
	}, nil)
	stop := run(t, w)
	_, err := cs.client().Create(ctx, "ack", nil, &core.CreateOpts{TTL: time.Minute})
	require.NoError(t, err)
	within(t, started, "the handler's start")

	a.Close() // nobody serves core.batch: each try fails at once
	close(finish)
	require.Eventually(t, func() bool { return len(logs.lines("sending them again")) > 0 }, 20*time.Second, 10*time.Millisecond)
	require.NoError(t, stop())

	lines := logs.lines("acknowledgements")
	require.Len(t, lines, 2, "%q", lines)
	require.Contains(t, lines[0], "sending them again")
	require.Contains(t, lines[1], "undelivered")
}

// TestAStopWithHandlersRunningAndNoCoreEndsWithinTwoGraces: the handler
// runs past the grace of 200 ms while the only thing serving core.batch
// never answers. Its job is released, and the release is an acknowledgement
// like the others: retried for one more grace, then given up, with the
// same one line. (A release call of its own waited 10 s.)
func TestAStopWithHandlersRunningAndNoCoreEndsWithinTwoGraces(t *testing.T) {
	cs := newCores(t)
	a := cs.start(nil)
	var logs logBuffer
	started := make(chan struct{})
	w := cs.worker(worker.Config{ShutdownTimeout: 200 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	w.Process("slow", 1, func(ctx context.Context, job *worker.Job) error {
		close(started)
		<-ctx.Done()
		return context.Cause(ctx)
	}, nil)
	stop := run(t, w)
	_, err := cs.client().Create(ctx, "slow", nil, &core.CreateOpts{TTL: time.Minute})
	require.NoError(t, err)
	within(t, started, "the handler's start")

	a.Close()
	cs.hang()
	began := time.Now()
	require.ErrorIs(t, stop(), worker.ErrShutdown, "the grace ran out with the handler running")
	took := time.Since(began)
	require.Less(t, took, 2*time.Second, "the stop waited for the release call")
	t.Logf("stopped in %s", took.Round(time.Millisecond))

	undelivered := logs.lines("undelivered")
	require.Len(t, undelivered, 1, "%q", undelivered)
	require.Contains(t, undelivered[0], "jobs=1")
}
