package runner

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// goid is the running goroutine's id, read from its stack's first line.
func goid() uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	buf = bytes.TrimPrefix(buf, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(buf[:bytes.IndexByte(buf, ' ')]), 10, 64)
	return id
}

func TestPoolReusesAWaitingGoroutineAndEndsOnClose(t *testing.T) {
	r := NewPool(2)
	ids := make(chan uint64, 2)
	r.Run(func() { ids <- goid() })
	first := <-ids
	require.Eventually(t, func() bool { return r.idle.Load() == 1 }, 5*time.Second, time.Millisecond,
		"the runner did not wait for more work")
	r.Run(func() { ids <- goid() })
	require.Equal(t, first, <-ids, "the second request did not run on the waiting runner")

	// Beyond maxIdle, a runner ends instead of waiting.
	var wg sync.WaitGroup
	release := make(chan struct{})
	for range 4 {
		wg.Add(1)
		r.Run(func() { defer wg.Done(); <-release })
	}
	close(release)
	wg.Wait()
	require.Eventually(t, func() bool { return r.idle.Load() <= 2 }, 5*time.Second, time.Millisecond)
	r.Close()
	require.Zero(t, r.idle.Load())
	// close waited for every runner: goleak (TestMain) finds none left.
}
