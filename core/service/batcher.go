package service

import (
	"context"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/batch"
	"github.com/kuebus/kuebus/core"
)

// Creates of concurrent requests are stored together (batch.Joiner): what
// arrives while a batch is on its way to Redis goes in the next one.
// Sixteen producers then cost Redis a few round trips and script calls
// instead of sixteen, and a lone create pays only a channel hand-off, no
// wait. The specs of a batch are independent: each call gets its own jobs
// back. Only a failure of Redis itself fails the batch, and then every call
// in it.

// errStopping answers a call that arrives while core stops.
var errStopping = bus.Errorf(bus.CodeUnavailable, "core is stopping")

// stored is one spec's outcome: its job, and whether that is an existing
// unfinished job that holds the spec's unique key.
type stored struct {
	job      core.Job
	existing bool
}

const (
	// createSenders is how many batches may be on their way to Redis at once.
	createSenders = 2
	// createMaxSpecs bounds the specs of one batch (one script call per type).
	createMaxSpecs = 1000
)

func newCreateBatcher(s *Service) *batch.Joiner[core.Spec, stored] {
	return batch.New(batch.Config[core.Spec, stored]{
		Senders:     createSenders,
		MaxItems:    createMaxSpecs,
		Stopped:     errStopping,
		CallerSends: true, // createJobs waits whatever ctx does

		Flush: func(_ context.Context, specs []core.Spec) ([]stored, error) {
			// A batch outlives the calls that made it: its own context.
			jobs, existing, err := s.store.Create(context.Background(), s.now(), specs)
			if err != nil {
				return nil, err
			}
			out := make([]stored, len(jobs))
			for i := range jobs {
				out[i] = stored{jobs[i], existing[i]}
			}
			return out, nil
		},
	})
}

// createJobs stores specs, alone or with those of concurrent calls. Once handed
// over they are stored or failed whatever ctx does: a create must not be
// reported failed after its jobs were stored.
func (s *Service) createJobs(ctx context.Context, specs []core.Spec) ([]core.Job, []bool, error) {
	for i := range specs {
		if specs[i].Waits() {
			// alone: a dependency that does not exist fails this call,
			// not the others a batch would merge it with
			return s.store.Create(context.WithoutCancel(ctx), s.now(), specs)
		}
	}
	out, err := s.creates.Do(context.WithoutCancel(ctx), specs...)
	if err != nil {
		return nil, nil, err
	}
	jobs, existing := make([]core.Job, len(out)), make([]bool, len(out))
	for i, o := range out {
		jobs[i], existing[i] = o.job, o.existing
	}
	return jobs, existing, nil
}
