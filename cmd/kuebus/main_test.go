package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kuebus/kuebus/node/nodetest"
)

// TestMain gives the --redis-url test a shared Redis and checks for leaked
// goroutines (see nodetest.Main for its ignore list). The `kuebus dev` tests
// start their own redis-server child, as the command does. No test reads
// the contexts file of the user who runs them (context.go): each sees an
// empty configuration directory unless it sets one of its own.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kuebus-config-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	code := nodetest.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// waitTimeout bounds every wait on a signal; generous for slow machines.
const waitTimeout = 15 * time.Second

// result is what one run of the command line gave.
type result struct {
	code           int
	stdout, stderr string
}

// kuebus runs the command line in-process, as main does.
func kuebus(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// output is a writer for a command that runs on another goroutine: safe for
// concurrent use, and it tells waitFor when it grows.
type output struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	grew chan struct{}
}

func newOutput() *output { return &output{grew: make(chan struct{}, 1)} }

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	n, err := o.buf.Write(p)
	o.mu.Unlock()
	select {
	case o.grew <- struct{}{}:
	default:
	}
	return n, err
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// waitFor waits until the output contains s. One waiter at a time.
func (o *output) waitFor(t *testing.T, s string) {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	for !strings.Contains(o.String(), s) {
		select {
		case <-o.grew:
		case <-timer.C:
			t.Fatalf("no %q in the output after %s; got:\n%s", s, waitTimeout, o.String())
		}
	}
}

// background is a long-running command (dev, events) on its own goroutine,
// stopped like a signal stops it: by cancelling its context.
type background struct {
	stdout, stderr *output
	cancel         context.CancelFunc
	done           chan int
	once           sync.Once
	code           int
}

func start(t *testing.T, ctx context.Context, args ...string) *background {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	b := &background{stdout: newOutput(), stderr: newOutput(), cancel: cancel, done: make(chan int, 1)}
	go func() { b.done <- run(ctx, args, b.stdout, b.stderr) }()
	t.Cleanup(func() { b.stop(t) })
	return b
}

// stop cancels the command, waits for it to return, and gives its exit code.
func (b *background) stop(t *testing.T) int {
	t.Helper()
	b.once.Do(func() {
		b.cancel()
		select {
		case b.code = <-b.done:
		case <-time.After(waitTimeout):
			t.Fatalf("still running %s after it was stopped; stderr:\n%s", waitTimeout, b.stderr.String())
		}
	})
	return b.code
}

// devProcess is a `kuebus dev` that has said it is ready.
type devProcess struct {
	*background
	info devInfo
}

// startDev runs `kuebus dev` with args and waits until it is ready.
func startDev(t *testing.T, args ...string) *devProcess {
	t.Helper()
	ready := make(chan devInfo, 1)
	ctx := withReadyHook(context.Background(), func(i devInfo) { ready <- i })
	// Any free HTTP port: tests run in parallel, and 8080 may be taken. A
	// later --http-listen in args wins.
	b := start(t, ctx, append([]string{"dev", "--log-level", "debug", "--http-listen", "127.0.0.1:0"}, args...)...)
	select {
	case info := <-ready:
		return &devProcess{background: b, info: info}
	case code := <-b.done:
		b.done <- code // for stop
		t.Fatalf("kuebus dev exited with %d before it was ready; stderr:\n%s", code, b.stderr.String())
	case <-time.After(waitTimeout):
		t.Fatalf("kuebus dev not ready after %s; stderr:\n%s", waitTimeout, b.stderr.String())
	}
	return nil
}

var _ io.Writer = (*output)(nil)
