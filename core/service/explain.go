package service

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// explain (DESIGN §10.1): why a job is not running. Its reasons are read,
// not kept: the job, then what may hold an inactive job back, in the
// order a lease meets them (paused, concurrency, rate, the job's group's
// concurrency and rate), then whether any
// worker asks for the type, then its place in the queue. A reason is true
// when read; the next lease may change it.

func (s *Service) registerExplain() error {
	return handle(s, bus.MethodExplain, s.explain)
}

func (s *Service) explain(ctx context.Context, req *core.IDRequest) (*core.Explanation, error) {
	if err := checkID(req.ID); err != nil {
		return nil, err
	}
	job, err := s.store.Get(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	ex := &core.Explanation{ID: job.ID, Type: job.Type, State: job.State}
	switch job.State {
	case core.StateDelayed:
		ex.Reason, ex.Until = core.ReasonDelayed, job.PromoteAt
		ex.Detail = "delayed until " + stamp(job.PromoteAt)
	case core.StateActive:
		ex.Reason, ex.Worker, ex.LeaseUntil = core.ReasonActive, job.WorkerID, job.LeaseUntil
		ex.Detail = fmt.Sprintf("running on worker %q, leased until %s", job.WorkerID, stamp(job.LeaseUntil))
	case core.StateInactive:
		if err := s.explainInactive(ctx, job, ex); err != nil {
			return nil, err
		}
	case core.StateWaiting:
		pending, err := s.store.Pending(ctx, job.ID)
		if err != nil {
			return nil, err
		}
		slices.Sort(pending)
		ex.Reason, ex.DependsOn = core.ReasonWaiting, pending
		ex.Detail = "waiting for its dependencies to complete: " + jobList(pending)
	default: // finished
		ex.Reason = string(job.State)
		ex.Detail = "finished: " + string(job.State)
	}
	return ex, nil
}

// explainInactive finds what holds a ready job back.
func (s *Service) explainInactive(ctx context.Context, job *core.Job, ex *core.Explanation) error {
	now := s.dueNow()
	p, err := s.policies.get(ctx, s.store, job.Type)
	if err != nil {
		return err
	}
	var rate core.Rate
	if p != nil && p.Rate != nil {
		rate = *p.Rate
	}
	var groupRate core.Rate
	if p != nil && p.GroupRate != nil {
		groupRate = *p.GroupRate
	}
	h, err := s.store.Holding(ctx, job, now, rate.Per.Milliseconds(), groupRate.Per.Milliseconds())
	if err != nil {
		return err
	}
	switch {
	case h.Paused:
		ex.Reason, ex.Detail = core.ReasonPaused, "its type "+job.Type+" is paused"
	case p != nil && p.Concurrency > 0 && h.Active >= p.Concurrency:
		ex.Reason, ex.Active, ex.Limit = core.ReasonConcurrency, h.Active, p.Concurrency
		ex.Detail = fmt.Sprintf("its type has %d of %d jobs active, its concurrency", h.Active, p.Concurrency)
	case rate.Limit > 0 && h.Starts >= rate.Limit:
		ex.Reason, ex.Until = core.ReasonRate, h.OldestStart+rate.Per.Milliseconds()
		ex.Detail = fmt.Sprintf("its type started %d jobs in the last %s, its rate; the next may start at %s",
			h.Starts, rate.Per, stamp(ex.Until))
	case job.Group != "" && p != nil && p.GroupConcurrency > 0 && h.GroupActive >= p.GroupConcurrency:
		ex.Reason, ex.Active, ex.Limit = core.ReasonGroupConcurrency, h.GroupActive, p.GroupConcurrency
		ex.Detail = fmt.Sprintf("its group %q has %d of %d jobs active, its type's group_concurrency", job.Group, h.GroupActive, p.GroupConcurrency)
	case job.Group != "" && groupRate.Limit > 0 && h.GroupStarts >= groupRate.Limit:
		ex.Reason, ex.Until = core.ReasonGroupRate, h.GroupOldestStart+groupRate.Per.Milliseconds()
		ex.Detail = fmt.Sprintf("its group %q started %d jobs in the last %s, its type's group_rate; the next may start at %s",
			job.Group, h.GroupStarts, groupRate.Per, stamp(ex.Until))
	default:
		asked, err := s.asked(ctx, job.Type)
		if err != nil {
			return err
		}
		if !asked {
			ex.Reason = core.ReasonNoWorker
			ex.Detail = "no live worker asks for type " + job.Type
			return nil
		}
		ahead := max(h.Ahead, 0)
		ex.Reason, ex.Ahead = core.ReasonQueued, &ahead
		ex.Detail = fmt.Sprintf("queued: %d jobs of its type run before it", ahead)
	}
	return nil
}

// asked says whether a worker asks for jobType: a live worker's heartbeat
// names it, or a lease of it waits on this core (a client that leases
// without heartbeats).
func (s *Service) asked(ctx context.Context, jobType string) (bool, error) {
	if s.waits.has(jobType) {
		return true, nil
	}
	list, err := s.store.Workers(ctx, s.now()-core.WorkerSeenWithin)
	if err != nil {
		return false, err
	}
	for _, w := range list {
		if slices.Contains(w.Types, jobType) {
			return true, nil
		}
	}
	return false, nil
}

// stamp writes a unix ms time for a detail.
func stamp(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }

// jobList names jobs for a person: "job 4", "jobs 4, 7 and 9", the first
// ten of more with how many others.
func jobList(ids []int64) string {
	const shown = 10
	words := make([]string, 0, min(len(ids), shown))
	for _, id := range ids[:min(len(ids), shown)] {
		words = append(words, strconv.FormatInt(id, 10))
	}
	switch {
	case len(ids) == 1:
		return "job " + words[0]
	case len(ids) > shown:
		return fmt.Sprintf("jobs %s and %d others", strings.Join(words, ", "), len(ids)-shown)
	case len(ids) > 1:
		return "jobs " + strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
	}
	return "no job (its last dependency is settling)"
}
