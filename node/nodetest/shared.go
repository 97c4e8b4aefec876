package nodetest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// shared is a set of servers one test binary shares (its Redis Cluster,
// its Sentinel set): started by the first test that asks for it, stopped
// by Main. Starting one costs seconds, so tests share it and keep apart by
// key prefix.
type shared[T interface{ Stop() error }] struct {
	what    string        // "a Redis Cluster", for messages
	timeout time.Duration // bounds the start
	start   func(context.Context) (T, error)

	once    sync.Once
	v       T
	started bool
	err     error
}

// get returns the servers, starting them on first use. When they cannot
// start, the test fails (and so does every later one that asks): a test
// that skips proves nothing.
func (s *shared[T]) get(t testing.TB) T {
	t.Helper()
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		s.v, s.err = s.start(ctx)
		s.started = s.err == nil
	})
	if s.err != nil {
		t.Fatalf("nodetest: cannot start %s: %v", s.what, s.err)
	}
	return s.v
}

// stop stops the servers if a test started them.
func (s *shared[T]) stop() {
	if !s.started {
		return
	}
	if err := s.v.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "nodetest: stop %s: %v\n", s.what, err)
	}
}
