package kuebustest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kuebus/kuebus/core"
)

// Enqueued is a job created of A's type, with its data decoded.
type Enqueued[A core.Args] struct {
	Job  core.Job
	Args A
}

// RequireOpts narrow the jobs an assertion looks at; a zero field does
// not narrow. nil: every job of the type.
type RequireOpts struct {
	// State is the job's state.
	State core.State
	// Priority is the job's priority.
	Priority *core.Priority
	// MaxAttempts is the job's max_attempts.
	MaxAttempts int
	// UniqueKey is the job's unique key.
	UniqueKey string
	// Schedule is the name of the schedule that made the job.
	Schedule string
}

// requireTimeout bounds the calls an assertion makes.
const requireTimeout = 10 * time.Second

// EnqueuedOf lists the jobs of A's type in every state, oldest first,
// with their data decoded, that opts (nil: none) lets through.
func EnqueuedOf[A core.Args](ctx context.Context, c *core.Client, opts *RequireOpts) ([]Enqueued[A], error) {
	var zero A
	jobType := zero.JobType()
	var out []Enqueued[A]
	for _, st := range core.States {
		if opts != nil && opts.State != "" && opts.State != st {
			continue
		}
		req := core.RangeRequest{State: st, Type: jobType, Order: core.OrderAsc, Limit: core.MaxRangeSize}
		for {
			page, err := c.RangePage(ctx, req)
			if err != nil {
				return nil, fmt.Errorf("kuebustest: jobs of %s in %s: %w", jobType, st, err)
			}
			for _, j := range page.Jobs {
				if !opts.match(&j) {
					continue
				}
				e := Enqueued[A]{Job: j}
				if len(j.Data) > 0 {
					if err := json.Unmarshal(j.Data, &e.Args); err != nil {
						return nil, fmt.Errorf("kuebustest: job %d: data is no %T: %w", j.ID, e.Args, err)
					}
				}
				out = append(out, e)
			}
			if page.Cursor == "" {
				break
			}
			req.Cursor = page.Cursor
		}
	}
	sortByCreation(out)
	return out, nil
}

// RequireEnqueued fails the test unless exactly one job of A's type (and
// of opts) was created, and returns it with its data decoded: compare
// Args with what the code under test should have sent.
func RequireEnqueued[A core.Args](tb testing.TB, c *core.Client, opts *RequireOpts) Enqueued[A] {
	tb.Helper()
	jobs := listFor[A](tb, c, opts)
	if len(jobs) != 1 {
		tb.Fatalf("kuebustest: want 1 job of %s%s, found %d%s", typeOf[A](), opts.String(), len(jobs), summary(jobs))
	}
	return jobs[0]
}

// RequireManyEnqueued fails the test unless exactly n jobs of A's type
// (and of opts) were created, and returns them, oldest first.
func RequireManyEnqueued[A core.Args](tb testing.TB, c *core.Client, n int, opts *RequireOpts) []Enqueued[A] {
	tb.Helper()
	jobs := listFor[A](tb, c, opts)
	if len(jobs) != n {
		tb.Fatalf("kuebustest: want %d jobs of %s%s, found %d%s", n, typeOf[A](), opts.String(), len(jobs), summary(jobs))
	}
	return jobs
}

// RequireNotEnqueued fails the test when a job of A's type (and of opts)
// was created.
func RequireNotEnqueued[A core.Args](tb testing.TB, c *core.Client, opts *RequireOpts) {
	tb.Helper()
	if jobs := listFor[A](tb, c, opts); len(jobs) > 0 {
		tb.Fatalf("kuebustest: want no job of %s%s, found %d%s", typeOf[A](), opts.String(), len(jobs), summary(jobs))
	}
}

func listFor[A core.Args](tb testing.TB, c *core.Client, opts *RequireOpts) []Enqueued[A] {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requireTimeout)
	defer cancel()
	jobs, err := EnqueuedOf[A](ctx, c, opts)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	return jobs
}

func typeOf[A core.Args]() string {
	var zero A
	return fmt.Sprintf("type %q (%T)", zero.JobType(), zero)
}

// match reports whether job is one opts lets through.
func (o *RequireOpts) match(job *core.Job) bool {
	switch {
	case o == nil:
		return true
	case o.State != "" && job.State != o.State,
		o.Priority != nil && job.Priority != *o.Priority,
		o.MaxAttempts != 0 && job.MaxAttempts != o.MaxAttempts,
		o.UniqueKey != "" && job.UniqueKey != o.UniqueKey,
		o.Schedule != "" && job.Schedule != o.Schedule:
		return false
	}
	return true
}

// String words opts for a failure message: " (state inactive, ...)".
func (o *RequireOpts) String() string {
	if o == nil {
		return ""
	}
	var parts []string
	if o.State != "" {
		parts = append(parts, "state "+string(o.State))
	}
	if o.Priority != nil {
		parts = append(parts, fmt.Sprintf("priority %d", *o.Priority))
	}
	if o.MaxAttempts != 0 {
		parts = append(parts, fmt.Sprintf("max_attempts %d", o.MaxAttempts))
	}
	if o.UniqueKey != "" {
		parts = append(parts, fmt.Sprintf("unique key %q", o.UniqueKey))
	}
	if o.Schedule != "" {
		parts = append(parts, fmt.Sprintf("schedule %q", o.Schedule))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// summary lists jobs for a failure message: ": 3 inactive {...}, 4 ...".
func summary[A core.Args](jobs []Enqueued[A]) string {
	if len(jobs) == 0 {
		return ""
	}
	parts := make([]string, 0, min(len(jobs), 10))
	for _, e := range jobs[:min(len(jobs), 10)] {
		parts = append(parts, fmt.Sprintf("%d %s %s", e.Job.ID, e.Job.State, e.Job.Data))
	}
	if len(jobs) > 10 {
		parts = append(parts, "…")
	}
	return ": " + strings.Join(parts, ", ")
}

// sortByCreation orders jobs by creation, then id (ids come in blocks per
// type, so creation is the order a person means).
func sortByCreation[A core.Args](jobs []Enqueued[A]) {
	slices.SortFunc(jobs, func(a, b Enqueued[A]) int {
		return cmp.Or(cmp.Compare(a.Job.CreatedAt, b.Job.CreatedAt), cmp.Compare(a.Job.ID, b.Job.ID))
	})
}
