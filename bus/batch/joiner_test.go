package batch_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/batch"
)

var errClosed = errors.New("closed")

// gate is a Flush that records each batch and holds the first one until
// released, so that the calls made meanwhile must wait for the next batch.
type gate struct {
	mu      sync.Mutex
	batches [][]int
	entered chan struct{} // closed when the first batch is in Flush
	release chan struct{}
	fail    error // returned for batches after the first
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) flush(_ context.Context, items []int) ([]string, error) {
	g.mu.Lock()
	g.batches = append(g.batches, append([]int(nil), items...))
	first := len(g.batches) == 1
	g.mu.Unlock()
	if first {
		close(g.entered)
		<-g.release
	} else if g.fail != nil {
		return nil, g.fail
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = string(rune('a' + it))
	}
	return out, nil
}

// Eventually's bounds: generous, since the machine may be loaded.
const (
	testWait = 10 * time.Second
	testTick = time.Millisecond
)

// runCalls makes the calls concurrently and returns each one's outcome.
func runCalls(t *testing.T, b *batch.Joiner[int, string], items [][]int) ([][]string, []error) {
	t.Helper()
	out, errs := make([][]string, len(items)), make([]error, len(items))
	var wg sync.WaitGroup
	for i, its := range items {
		wg.Go(func() { out[i], errs[i] = b.Do(context.Background(), its...) })
	}
	wg.Wait()
	return out, errs
}

// TestJoinerJoinsWhatArrivesWhileABatchIsOut: a lone call is flushed at
// once, alone; the calls made while it is out go together in the next
// batch, within MaxItems, each getting its own results in order. The same
// holds when callers send their own batches (CallerSends), and when a
// lone caller sends itself (SendsAlone).
func TestJoinerJoinsWhatArrivesWhileABatchIsOut(t *testing.T) {
	for _, mode := range []string{"", "CallerSends", "SendsAlone"} {
		t.Run("mode="+mode, func(t *testing.T) {
			testJoinerJoins(t, mode)
		})
	}
}

func testJoinerJoins(t *testing.T, mode string) {
	g := newGate()
	b := batch.New(batch.Config[int, string]{Flush: g.flush, MaxItems: 4, Stopped: errClosed,
		CallerSends: mode == "CallerSends", SendsAlone: mode == "SendsAlone"})
	defer b.Stop()

	first := make(chan []string)
	go func() {
		out, _ := b.Do(context.Background(), 0) // nil on an error: the check below fails
		first <- out
	}()
	<-g.entered // the lone call is out, alone

	// Hand over five calls (six items) while it is out, then let it go.
	var later sync.WaitGroup
	later.Add(1)
	var out [][]string
	var errs []error
	go func() {
		defer later.Done()
		out, errs = runCalls(t, b, [][]int{{1}, {2, 3}, {4}, {5}, {6}})
	}()
	require.Eventually(t, func() bool { return b.Waiting() == 5 }, testWait, testTick, "five calls wait behind the first batch")
	close(g.release)
	require.Equal(t, []string{"a"}, <-first)
	later.Wait()

	for i, want := range [][]string{{"b"}, {"c", "d"}, {"e"}, {"f"}, {"g"}} {
		require.NoError(t, errs[i])
		require.Equal(t, want, out[i], "call %d got its own results", i)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	require.Equal(t, []int{0}, g.batches[0], "the lone call went alone")
	total := 0
	for _, items := range g.batches[1:] {
		require.LessOrEqual(t, len(items), 4, "MaxItems holds")
		total += len(items)
	}
	require.Equal(t, 6, total)
	require.Less(t, len(g.batches)-1, 5, "the waiting calls shared batches")
}

// goroutineID is the id of the calling goroutine, from its stack's first
// line ("goroutine 7 [running]:").
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}

// TestJoinerCallerSendsALoneCallItself: with CallerSends, a lone call's
// batch is flushed in the caller's own goroutine (no hand-off); without
// it, in a sender goroutine.
func TestJoinerCallerSendsALoneCallItself(t *testing.T) {
	for _, callerSends := range []bool{false, true} {
		var flushedIn string
		b := batch.New(batch.Config[int, string]{Stopped: errClosed, CallerSends: callerSends,
			Flush: func(_ context.Context, items []int) ([]string, error) {
				flushedIn = goroutineID()
				return make([]string, len(items)), nil
			}})
		out, err := b.Do(context.Background(), 1)
		require.NoError(t, err)
		require.Len(t, out, 1)
		b.Stop()
		require.Equal(t, callerSends, flushedIn == goroutineID(), "CallerSends=%v: flushed in the caller's goroutine", callerSends)
	}
}

type ctxKey struct{}

// TestJoinerSendsALoneCallUnderItsOwnContext: with SendsAlone, a lone
// call is flushed in its caller's goroutine with its caller's context, so
// a context that ends ends the call as it would without a joiner.
func TestJoinerSendsALoneCallUnderItsOwnContext(t *testing.T) {
	var flushedIn string
	var got any
	b := batch.New(batch.Config[int, string]{Stopped: errClosed, SendsAlone: true,
		Flush: func(ctx context.Context, items []int) ([]string, error) {
			flushedIn, got = goroutineID(), ctx.Value(ctxKey{})
			if items[0] == 2 {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return make([]string, len(items)), nil
		}})
	defer b.Stop()
	out, err := b.Do(context.WithValue(context.Background(), ctxKey{}, "mine"), 1)
	require.NoError(t, err)
	require.Len(t, out, 1)
	require.Equal(t, goroutineID(), flushedIn, "flushed in the caller's goroutine")
	require.Equal(t, "mine", got, "flushed with the caller's context")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := b.Do(ctx, 2)
		done <- err
	}()
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	out, err = b.Do(context.Background(), 3)
	require.NoError(t, err, "the joiner serves on after a call its context ended")
	require.Len(t, out, 1)
}

// TestJoinerFailsEveryCallOfAFailedBatch and keeps the calls of other
// batches apart; after Stop, a call is refused with Stopped.
func TestJoinerFailsEveryCallOfAFailedBatch(t *testing.T) {
	g := newGate()
	boom := errors.New("boom")
	g.fail = boom
	b := batch.New(batch.Config[int, string]{Flush: g.flush, Stopped: errClosed})

	first := make(chan error)
	go func() {
		_, err := b.Do(context.Background(), 0)
		first <- err
	}()
	<-g.entered
	done := make(chan []error)
	go func() {
		_, errs := runCalls(t, b, [][]int{{1}, {2}, {3}})
		done <- errs
	}()
	require.Eventually(t, func() bool { return b.Waiting() == 3 }, testWait, testTick)
	close(g.release)
	require.NoError(t, <-first, "the first batch succeeded")
	for _, err := range <-done {
		require.ErrorIs(t, err, boom)
	}

	b.Stop()
	_, err := b.Do(context.Background(), 9)
	require.ErrorIs(t, err, errClosed)
}

// TestJoinerBoundsABatchBySize: a call that would take the batch past
// MaxSize waits for the next one; a call heavier than MaxSize goes alone.
func TestJoinerBoundsABatchBySize(t *testing.T) {
	g := newGate()
	b := batch.New(batch.Config[int, string]{Flush: g.flush, Stopped: errClosed,
		Size: func(it int) int { return it }, MaxSize: 10})
	defer b.Stop()
	go func() { _, _ = b.Do(context.Background(), 0) }()
	<-g.entered
	done := make(chan struct{})
	go func() {
		runCalls(t, b, [][]int{{4}, {5}, {20}, {3}})
		close(done)
	}()
	require.Eventually(t, func() bool { return b.Waiting() == 4 }, testWait, testTick)
	close(g.release)
	<-done
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, items := range g.batches[1:] {
		sum := 0
		for _, it := range items {
			sum += it
		}
		if len(items) > 1 {
			require.LessOrEqual(t, sum, 10, "batch %v stays within MaxSize", items)
		}
	}
}

// TestJoinerRunsNoGoroutineWhileIdle: senders end when no call waits, so
// a joiner nobody stops leaks nothing (the suite's leak check sees it).
func TestJoinerRunsNoGoroutineWhileIdle(t *testing.T) {
	b := batch.New(batch.Config[int, string]{Stopped: errClosed,
		Flush: func(_ context.Context, items []int) ([]string, error) { return make([]string, len(items)), nil }})
	_, err := b.Do(context.Background(), 1)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return b.Senders() == 0 }, testWait, testTick)
}
