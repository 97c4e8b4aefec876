package runner

import (
	"sync"
	"sync/atomic"
)

// Pool runs functions (bus.Server's requests, a worker's handlers) on
// goroutines, its runners, that stay for the next one. A goroutine made
// per request starts with the smallest stack, which decoding, the handler,
// go-redis and encoding grow again every time: stack growth was 8-9% of
// core's CPU in a profile of creates. A runner keeps its grown stack from one request
// to the next (until a GC finds it idle and shrinks it). Runners beyond
// maxIdle end when they finish instead of waiting, so a burst leaves no
// crowd behind.
type Pool struct {
	work    chan func() // unbuffered: a send succeeds only when a runner waits
	idle    atomic.Int32
	maxIdle int32
	quit    chan struct{}
	stop    sync.Once
	wg      sync.WaitGroup
}

// NewPool returns a pool of which at most maxIdle runners wait for work.
func NewPool(maxIdle int32) *Pool {
	return &Pool{work: make(chan func()), maxIdle: maxIdle, quit: make(chan struct{})}
}

// Run runs fn on a waiting runner, or on a new one when none waits. It
// never blocks.
func (r *Pool) Run(fn func()) {
	select {
	case r.work <- fn:
	default:
		r.wg.Add(1)
		go r.loop(fn)
	}
}

func (r *Pool) loop(fn func()) {
	defer r.wg.Done()
	for {
		fn()
		if r.idle.Add(1) > r.maxIdle {
			r.idle.Add(-1)
			return
		}
		select {
		case fn = <-r.work:
			r.idle.Add(-1)
		case <-r.quit:
			r.idle.Add(-1)
			return
		}
	}
}

// Close ends the waiting runners and waits until every runner has ended.
// Nothing may be run after it: bus.Server calls it once its requests are
// done and no new one can arrive.
func (r *Pool) Close() {
	r.Stop()
	r.wg.Wait()
}

// Stop ends the waiting runners, and each busy one once its function
// returns, without waiting for them: for an owner that may leave functions
// running it no longer waits for (a worker's handlers past the grace
// period). Nothing may be run after it.
func (r *Pool) Stop() { r.stop.Do(func() { close(r.quit) }) }
