package service

import (
	"context"
	"sync"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// createBatcher stores the jobs of concurrent create calls together: what
// arrives while a batch is on its way to Redis goes in the next one. Sixteen
// producers then cost Redis a few round trips and script calls instead of
// sixteen, and a lone create pays only a channel hand-off, no wait.
//
// The specs of a batch are independent: each call gets its own jobs back.
// Only a failure of Redis itself fails the batch, and then every call in it.
// errStopping answers a call that arrives while core stops.
var errStopping = bus.Errorf(bus.CodeUnavailable, "core is stopping")

type createBatcher struct {
	s    *Service
	in   chan *createCall
	quit chan struct{}
	wg   sync.WaitGroup
}

type createCall struct {
	specs    []core.Spec
	jobs     []core.Job
	existing []bool
	err      error
	done     chan struct{}
}

const (
	// batchSenders is how many batches may be on their way at once.
	batchSenders = 2
	// batchMaxSpecs bounds the specs of one batch (one script call per type).
	batchMaxSpecs = 1000
)

func newCreateBatcher(s *Service) *createBatcher {
	b := &createBatcher{s: s, in: make(chan *createCall, 4096), quit: make(chan struct{})}
	for range batchSenders {
		b.wg.Go(b.loop)
	}
	return b
}

// create stores specs, alone or with those of concurrent calls.
func (b *createBatcher) create(ctx context.Context, specs []core.Spec) ([]core.Job, []bool, error) {
	call := &createCall{specs: specs, done: make(chan struct{})}
	select {
	case b.in <- call:
	case <-b.quit:
		return nil, nil, errStopping
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	// Once handed over the call is stored or failed, whatever ctx does: a
	// create must not be reported failed after its jobs were stored.
	<-call.done
	return call.jobs, call.existing, call.err
}

func (b *createBatcher) loop() {
	for {
		var first *createCall
		select {
		case first = <-b.in:
		case <-b.quit:
			for { // finish what was handed over before the stop
				select {
				case c := <-b.in:
					b.store([]*createCall{c})
				default:
					return
				}
			}
		}
		batch, n := []*createCall{first}, len(first.specs)
	gather:
		for n < batchMaxSpecs {
			select {
			case c := <-b.in:
				batch = append(batch, c)
				n += len(c.specs)
			default:
				break gather
			}
		}
		b.store(batch)
	}
}

func (b *createBatcher) store(batch []*createCall) {
	var specs []core.Spec
	if len(batch) == 1 {
		specs = batch[0].specs
	} else {
		for _, c := range batch {
			specs = append(specs, c.specs...)
		}
	}
	// A batch outlives the calls that made it (see create): its own context.
	jobs, existing, err := b.s.store.Create(context.Background(), b.s.now(), specs)
	at := 0
	for _, c := range batch {
		if err != nil {
			c.err = err
		} else {
			c.jobs, c.existing = jobs[at:at+len(c.specs)], existing[at:at+len(c.specs)]
			at += len(c.specs)
		}
		close(c.done)
	}
}

// stop finishes the calls handed over and ends the loops.
func (b *createBatcher) stop() {
	close(b.quit)
	b.wg.Wait()
}
