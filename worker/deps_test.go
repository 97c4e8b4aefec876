package worker_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/worker"
)

// TestAFanInHandlerReadsWhatItsDependenciesReturned: 20 resize jobs of a
// flow, then a zip job that waits for them all and sums their results
// with worker.Results.
func TestAFanInHandlerReadsWhatItsDependenciesReturned(t *testing.T) {
	c := stack(t)
	w := newWorker(t, c, worker.Config{})
	type size struct{ Bytes int }
	w.Process("resize", 4, func(ctx context.Context, job *worker.Job) error {
		var in struct{ N int }
		if err := job.Decode(&in); err != nil {
			return err
		}
		return job.SetResult(size{Bytes: in.N})
	}, nil)
	w.Process("zip", 1, func(ctx context.Context, job *worker.Job) error {
		sizes, skipped, err := worker.Results[size](ctx, job)
		if err != nil {
			return err
		}
		total := 0
		for _, s := range sizes {
			total += s.Bytes
		}
		return job.SetResult(map[string]int{"total": total, "parts": len(sizes), "skipped": len(skipped)})
	}, nil)
	run(t, w)
	jobs := []core.FlowJob{{Ref: "zip", Spec: core.Spec{Type: "zip"}}}
	want := 0
	for i := range 20 {
		ref := fmt.Sprint("img", i)
		jobs = append(jobs, core.FlowJob{Ref: ref, Spec: core.Spec{Type: "resize", Data: []byte(fmt.Sprintf(`{"n":%d}`, i+1))}})
		jobs[0].DependsOn = append(jobs[0].DependsOn, core.Ref(ref))
		want += i + 1
	}
	flow, err := c.Client.CreateFlow(ctx, jobs...)
	require.NoError(t, err)
	done := await(t, c, flow.IDOf("zip"))
	require.Equal(t, core.StateComplete, done.State)
	require.JSONEq(t, fmt.Sprintf(`{"total":%d,"parts":20,"skipped":0}`, want), string(done.Result))
}
