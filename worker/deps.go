package worker

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kuebus/kuebus/core"
)

// Dependencies lists what the jobs this one depends on (depends_on, a
// flow's refs) became, in the order it named them: each one's id, type,
// state and, once complete, its result. A job released from waiting runs
// once every dependency completed, so their results are all there (a
// dependency that failed under the ignore rule shows its state and error
// instead).
func (j *Job) Dependencies(ctx context.Context) ([]core.DepJob, error) {
	if len(j.DependsOn) == 0 || j.calls == nil {
		return nil, nil
	}
	deps, err := j.calls.Dependencies(ctx, j.ID)
	if err != nil {
		return nil, fmt.Errorf("worker: dependencies of job %d: %w", j.ID, err)
	}
	return deps, nil
}

// Results is the fan-in helper: it decodes the result of every complete
// dependency into a T, in the order the job named them, and says which ids
// it skipped (not complete: failed or cancelled under the ignore rule, or
// removed). A zip job that waits for 200 resize jobs reads their outputs
// with one call:
//
//	sizes, skipped, err := worker.Results[Thumb](ctx, job)
func Results[T any](ctx context.Context, j *Job) (results []T, skipped []int64, err error) {
	deps, err := j.Dependencies(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range deps {
		if d.State != core.StateComplete {
			skipped = append(skipped, d.ID)
			continue
		}
		var v T
		if len(d.Result) > 0 {
			if err := json.Unmarshal(d.Result, &v); err != nil {
				return nil, nil, fmt.Errorf("worker: result of dependency %d of job %d: %w", d.ID, j.ID, err)
			}
		}
		results = append(results, v)
	}
	return results, skipped, nil
}
