package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kuebus/kuebus/core"
)

// The enqueue phases: N creates, one at a time, from Producers at once, and
// in bulks. Their jobs are never run; the next phase starts without them.

func (b *bench) enqueueSeq(ctx context.Context) error {
	typ := b.st.keys.jobType("seq")
	pctx, cancel := context.WithTimeout(ctx, b.cfg.PhaseTimeout)
	defer cancel()
	done := 0
	start := time.Now()
	for i := range b.cfg.N {
		_, err := b.st.client.Create(pctx, typ, jobData(i, 0), nil)
		if err != nil {
			if phaseTimedOut(ctx, pctx) {
				break
			}
			return err
		}
		done++
	}
	b.throughput("enqueue_seq", done, time.Since(start))
	return nil
}

func (b *bench) enqueueConc(ctx context.Context) error {
	typ := b.st.keys.jobType("conc")
	pctx, cancel := context.WithTimeout(ctx, b.cfg.PhaseTimeout)
	defer cancel()
	var next, done atomic.Int64
	errs := make([]error, b.cfg.Producers)
	var wg sync.WaitGroup
	start := time.Now()
	for p := range b.cfg.Producers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.cfg.N) {
					return
				}
				_, err := b.st.client.Create(pctx, typ, jobData(int(i), 0), nil)
				if err != nil {
					if pctx.Err() == nil {
						errs[p] = err
						cancel() // the others stop too
					}
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if pctx.Err() != nil && !phaseTimedOut(ctx, pctx) {
		return ctx.Err()
	}
	b.throughput(fmt.Sprintf("enqueue_conc%d", b.cfg.Producers), int(done.Load()), elapsed)
	return nil
}

func (b *bench) enqueueBulk(ctx context.Context) error {
	typ := b.st.keys.jobType("bulk")
	pctx, cancel := context.WithTimeout(ctx, b.cfg.PhaseTimeout)
	defer cancel()
	done := 0
	start := time.Now()
	if err := b.createBulk(pctx, typ, b.cfg.N, nil, nil, func(n int) { done += n }); err != nil {
		if !phaseTimedOut(ctx, pctx) {
			return err
		}
	}
	b.throughput("enqueue_bulk", done, time.Since(start))
	return nil
}

// createBulk creates n jobs of a type in bulks of BulkSize, one bulk at a
// time, with opts; after each bulk it calls progress with its size.
func (b *bench) createBulk(ctx context.Context, typ string, n int, opts *core.CreateOpts, groupOf func(i int) string, progress func(int)) error {
	specs := make([]core.Spec, 0, b.cfg.BulkSize)
	for done := 0; done < n; {
		specs = specs[:0]
		for i := done; i < min(done+b.cfg.BulkSize, n); i++ {
			sp, err := opts.Spec(typ, jobData(i, 0))
			if err != nil {
				return err
			}
			if groupOf != nil {
				sp.Group = groupOf(i)
			}
			specs = append(specs, sp)
		}
		// The ids alone, as a producer that enqueues for throughput asks
		// (the peers' addBulk builds its jobs without a reply to decode).
		_, err := b.st.client.CreateBulkIDs(ctx, specs)
		if err != nil {
			return err
		}
		done += len(specs)
		if progress != nil {
			progress(len(specs))
		}
	}
	return nil
}

// throughput prints <name>_throughput for done jobs in elapsed, with a
// warning when the phase ran out of time before N.
func (b *bench) throughput(name string, done int, elapsed time.Duration) {
	if done < b.cfg.N {
		b.r.comment("warning: %s timed out after %s with %d of %d jobs", name, b.cfg.PhaseTimeout, done, b.cfg.N)
	}
	b.r.value(name+"_throughput", float64(done)/elapsed.Seconds(), 0, "jobs/s")
}

// phaseTimedOut tells a phase that ran out of time (pctx) from a run that
// was stopped (ctx).
func phaseTimedOut(ctx, pctx context.Context) bool {
	return ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded)
}

// payload is the data of the bench's jobs: a sequence number and, in the
// latency and delayed phases, a time in unix nanoseconds.
type payload struct {
	I int   `json:"i"`
	T int64 `json:"t"`
}

// jobData encodes a payload without reflection: it is built once per job on
// the producer's hot path.
func jobData(i int, t int64) json.RawMessage {
	b := make([]byte, 0, 48)
	b = append(b, `{"i":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, t, 10)
	return append(b, '}')
}
