package batch

import (
	"context"
	"sync"

	"github.com/kuebus/kuebus/bus"
)

// Joiner joins concurrent calls into batches: what arrives while a batch
// is on its way goes in the next one. A lone call is its own batch and
// waits for nothing (no timer); n concurrent calls cost about n / batch
// size round trips instead of n. Each call gets its own results back, in
// the order of its items. core's client sends concurrent creates as one
// create_bulk through it, and core's service stores concurrent creates
// with one script call.
type Joiner[T, R any] struct {
	cfg     Config[T, R]
	mu      sync.Mutex
	waiting []*batchCall[T, R] // handed over, not yet in a batch
	sending int                // senders running
	stopped bool
	senders sync.WaitGroup
}

// Config configures a Joiner.
type Config[T, R any] struct {
	// Flush runs one batch: one result per item, in order, or an error for
	// the whole batch (every call in it gets that error). ctx is the
	// caller's when the batch is one caller's alone (SendsAlone), else
	// context.Background(): a batch of several callers outlives each of
	// them. Required.
	Flush func(ctx context.Context, items []T) ([]R, error)
	// Senders is how many batches may be on their way at once. Default 1.
	Senders int
	// MaxItems bounds the items of one batch. Default 1000.
	MaxItems int
	// Size, with MaxSize, bounds a batch by weight (e.g. bytes on the
	// wire): a call joins a batch only while the batch stays within
	// MaxSize. A call heavier than MaxSize alone is a batch of its own.
	// Default: no bound.
	Size    func(T) int
	MaxSize int
	// Stopped is what Do answers once Stop has been called. Required.
	Stopped error
	// CallerSends lets a call that finds a sender free send its batch
	// itself, in its own goroutine, instead of handing it to a new
	// goroutine and waiting to be woken: a lone call then pays no
	// goroutine hand-off, which on a busy machine is a scheduler round
	// each way. Such a caller waits for its batch whatever ctx does, so
	// it is for callers whose ctx does not end early anyway (core's
	// service, whose creates must be stored or failed once handed over).
	CallerSends bool
	// SendsAlone lets a call that finds a sender free and no other call
	// waiting, once the calls about to join have had their chance
	// (Gather), send itself as its own batch, in its own goroutine and
	// under its own ctx: a lone call then pays no goroutine hand-off each
	// way, and its ctx bounds it as if there were no joiner. When others
	// joined meanwhile, the batch goes to a sender goroutine as usual and
	// the call waits for it as any call does. For a client's calls, whose
	// ctx may end early (core's client creates); see CallerSends for a
	// caller that may send others' items too.
	SendsAlone bool
}

type batchCall[T, R any] struct {
	items []T
	out   []R
	err   error
	done  chan struct{}
}

// New returns a joiner. It runs no goroutine while idle: a sender
// starts when calls wait and none is free, and ends when none waits.
func New[T, R any](cfg Config[T, R]) *Joiner[T, R] {
	if cfg.Flush == nil || cfg.Stopped == nil {
		panic("batch: New needs Flush and Stopped")
	}
	cfg.Senders = max(cfg.Senders, 1)
	if cfg.MaxItems <= 0 {
		cfg.MaxItems = 1000
	}
	return &Joiner[T, R]{cfg: cfg}
}

// Do hands items over and waits for their results. ctx bounds the wait;
// once handed over, the items are flushed whatever ctx does, so a caller
// that needs to know the outcome (a create must not be reported failed
// after it was stored) passes a context that does not end early. (A call
// that SendsAlone sends as a batch of its own is flushed under ctx: it is
// then what the call would be without a joiner.)
func (b *Joiner[T, R]) Do(ctx context.Context, items ...T) ([]R, error) {
	call := &batchCall[T, R]{items: items, done: make(chan struct{})}
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return nil, b.cfg.Stopped
	}
	b.waiting = append(b.waiting, call)
	if b.sending < b.cfg.Senders {
		b.sending++
		if b.cfg.CallerSends {
			b.senders.Add(1)
			b.mu.Unlock()
			b.sendUntil(call)
			return call.out, call.err
		}
		if b.cfg.SendsAlone {
			b.senders.Add(1)
			b.mu.Unlock()
			if b.sendAlone(ctx, call) {
				return call.out, call.err
			}
			return b.wait(ctx, call)
		}
		b.senders.Go(b.send)
	}
	b.mu.Unlock()
	return b.wait(ctx, call)
}

// wait waits for call's batch, or for ctx.
func (b *Joiner[T, R]) wait(ctx context.Context, call *batchCall[T, R]) ([]R, error) {
	select {
	case <-call.done:
		return call.out, call.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// send flushes batches while calls wait, then ends.
func (b *Joiner[T, R]) send() {
	for {
		Gather(b.Waiting)
		b.mu.Lock()
		batch := b.take()
		if batch == nil {
			b.sending--
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.flush(context.Background(), batch)
	}
}

// sendAlone flushes call as a batch of its own, under ctx, when no other
// call waits once Gather has let the arriving ones in, and says so; else it
// hands the waiting calls, call among them, to a sender goroutine, which
// keeps the caller's place among the senders, and says false.
func (b *Joiner[T, R]) sendAlone(ctx context.Context, call *batchCall[T, R]) bool {
	defer b.senders.Done()
	Gather(b.Waiting)
	b.mu.Lock()
	if len(b.waiting) != 1 || b.waiting[0] != call {
		b.senders.Go(b.send)
		b.mu.Unlock()
		return false
	}
	b.waiting = nil
	b.mu.Unlock()
	b.flush(ctx, []*batchCall[T, R]{call})
	b.mu.Lock()
	b.passOn()
	b.mu.Unlock()
	return true
}

// passOn hands a caller's place among the senders to a sender goroutine
// when calls wait, and gives it up when none does. b.mu is held.
func (b *Joiner[T, R]) passOn() {
	if len(b.waiting) > 0 {
		b.senders.Go(b.send)
	} else {
		b.sending--
	}
}

// sendUntil flushes batches, in the caller's goroutine, until call is
// done; what still waits then goes to a sender goroutine, which keeps the
// caller's place among the senders. When another sender took call, it
// leaves and waits for it like any call.
func (b *Joiner[T, R]) sendUntil(call *batchCall[T, R]) {
	defer b.senders.Done()
	for {
		Gather(b.Waiting)
		b.mu.Lock()
		select {
		case <-call.done:
			b.passOn()
			b.mu.Unlock()
			return
		default:
		}
		batch := b.take()
		if batch == nil { // call is on its way in another sender's batch
			b.sending--
			b.mu.Unlock()
			<-call.done
			return
		}
		b.mu.Unlock()
		b.flush(context.Background(), batch)
	}
}

// take removes the next batch from the waiting calls: the first call, and
// those after it while the batch stays within MaxItems and MaxSize. b.mu
// is held.
func (b *Joiner[T, R]) take() []*batchCall[T, R] {
	if len(b.waiting) == 0 {
		return nil
	}
	n, size, k := 0, 0, 0
	for _, c := range b.waiting {
		cs := b.size(c)
		if k > 0 && (n+len(c.items) > b.cfg.MaxItems || (b.cfg.MaxSize > 0 && size+cs > b.cfg.MaxSize)) {
			break
		}
		n, size, k = n+len(c.items), size+cs, k+1
	}
	batch := b.waiting[:k:k]
	b.waiting = b.waiting[k:]
	if len(b.waiting) == 0 {
		b.waiting = nil // let the array go
	}
	return batch
}

func (b *Joiner[T, R]) size(c *batchCall[T, R]) int {
	if b.cfg.Size == nil {
		return 0
	}
	s := 0
	for _, it := range c.items {
		s += b.cfg.Size(it)
	}
	return s
}

func (b *Joiner[T, R]) flush(ctx context.Context, batch []*batchCall[T, R]) {
	var items []T
	if len(batch) == 1 {
		items = batch[0].items
	} else {
		for _, c := range batch {
			items = append(items, c.items...)
		}
	}
	out, err := b.cfg.Flush(ctx, items)
	if err == nil && len(out) != len(items) {
		err = bus.Errorf(bus.CodeInternal, "batch: %d results for %d items", len(out), len(items))
	}
	at := 0
	for _, c := range batch {
		if err != nil {
			c.err = err
		} else {
			c.out = out[at : at+len(c.items)]
			at += len(c.items)
		}
		close(c.done)
	}
}

// Stop refuses new calls, and returns once the calls handed over are
// flushed.
func (b *Joiner[T, R]) Stop() {
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
	b.senders.Wait()
}

// Waiting is how many calls wait for a batch (a gauge, and what tests wait
// on).
func (b *Joiner[T, R]) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiting)
}

// Senders is how many senders run: 0 while idle.
func (b *Joiner[T, R]) Senders() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sending
}
