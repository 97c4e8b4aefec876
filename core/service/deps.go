package service

import (
	"context"
	"fmt"
	"strconv"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// Dependencies and flows (DESIGN §10.2): create_flow, dependencies,
// dependents, the events of the jobs a dependency's outcome moves, and
// the leader's sweep of unfinished hand-overs.

// DepsStore is the part of the Store that dependencies use.
type DepsStore interface {
	// OnSettled sets what the store calls with the jobs that left waiting
	// by a dependency's outcome (released, failed or cancelled by their
	// rule), once it has stored that.
	OnSettled(fn func([]core.Job))
	// HandOver finishes the dependency steps recorded at or before upTo
	// whose second half did not run (a crash): how many it finished.
	HandOver(ctx context.Context, now, upTo int64) (int, error)
	// Dependencies lists the jobs id depends on, with their state and
	// result; Dependents the jobs that wait or waited for id.
	Dependencies(ctx context.Context, id int64) ([]core.DepJob, error)
	Dependents(ctx context.Context, id int64) ([]core.DepJob, error)
	// Pending lists the dependencies a waiting job still waits for.
	Pending(ctx context.Context, id int64) ([]int64, error)
}

// handOverAge is how old a recorded hand-over is before the sweep runs
// it: younger ones the core that recorded it is finishing right now (the
// sweep running one too would change nothing, only cost).
const handOverAge = 1000 // ms

// announceSettled publishes what a dependency's outcome did to jobs that
// waited: a release is a promotion (to inactive, or to delayed when the
// job has a delay), a rule that ended the job is its failed or cancel.
func (s *Service) announceSettled(jobs []core.Job) {
	for i := range jobs {
		job := &jobs[i]
		switch job.State {
		case core.StateFailed:
			s.publish(bus.EventFailed, job, func(ev *core.Event) { ev.Error, ev.Attempts = job.Error, job.Attempts })
		case core.StateCancelled:
			s.publish(bus.EventCancel, job, nil)
		default:
			s.publish(bus.EventPromotion, job, nil)
			if job.State == core.StateDelayed {
				s.announceDue(job.PromoteAt)
			}
		}
	}
}

// sweepHandOvers is the leader's sweep, run with each promote: it
// finishes the hand-overs a crash left half done. A failure is reported
// and tried again next time.
func (s *Service) sweepHandOvers(ctx context.Context, now int64) {
	n, err := s.store.HandOver(ctx, now, now-handOverAge)
	if err != nil {
		s.errs.report(bus.MethodPromote, fmt.Errorf("core: hand-overs of dependencies: %w", err))
		return
	}
	if n > 0 {
		s.log.Info("dependency hand-overs finished by the sweep", "count", n)
	}
}

func (s *Service) dependencies(ctx context.Context, req *core.IDRequest) (*core.DepsReply, error) {
	if err := checkID(req.ID); err != nil {
		return nil, err
	}
	jobs, err := s.store.Dependencies(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	return &core.DepsReply{Jobs: nonNil(jobs)}, nil
}

func (s *Service) dependents(ctx context.Context, req *core.IDRequest) (*core.DepsReply, error) {
	if err := checkID(req.ID); err != nil {
		return nil, err
	}
	jobs, err := s.store.Dependents(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	return &core.DepsReply{Jobs: nonNil(jobs)}, nil
}

func nonNil(jobs []core.DepJob) []core.DepJob {
	if jobs == nil {
		return []core.DepJob{}
	}
	return jobs
}

// checkFlow checks a flow and orders it: every spec normalized, refs
// unique and known, no cycle. It returns the specs in an order where each
// comes after the jobs of the flow it depends on (their DependsOnRefs
// index that order), and order[k], the request's index of the k-th.
func (s *Service) checkFlow(req *core.FlowRequest) (specs []core.Spec, order []int, err error) {
	n := len(req.Jobs)
	if n == 0 {
		return nil, nil, core.Invalidf("jobs", "no jobs given")
	}
	if n > core.MaxFlowJobs {
		return nil, nil, core.Invalidf("jobs", "%d jobs is over the limit of %d per flow", n, core.MaxFlowJobs)
	}
	refs := make(map[string]int, n)
	for i := range req.Jobs {
		fj := &req.Jobs[i]
		field := "jobs[" + strconv.Itoa(i) + "]"
		if fj.Ref == "" {
			return nil, nil, core.Invalidf(field+".ref", "missing: every job of a flow has a ref")
		}
		if len(fj.Ref) > core.MaxRefLen {
			return nil, nil, core.Invalidf(field+".ref", "%d bytes is longer than %d", len(fj.Ref), core.MaxRefLen)
		}
		if j, dup := refs[fj.Ref]; dup {
			return nil, nil, core.Invalidf(field+".ref", "%q is the ref of jobs[%d] too", fj.Ref, j)
		}
		refs[fj.Ref] = i
		if len(fj.Spec.DependsOnRefs) > 0 {
			return nil, nil, core.Invalidf(field+".spec", "refs go in the job's depends_on")
		}
	}
	// each job's dependencies: refs (as request indexes) and ids, merged
	// with the spec's own depends_on ids
	deps := make([][]int, n)
	for i := range req.Jobs {
		fj := &req.Jobs[i]
		field := "jobs[" + strconv.Itoa(i) + "]"
		seenRef := map[int]bool{}
		for k, d := range fj.DependsOn {
			switch {
			case d.Ref != "":
				j, ok := refs[d.Ref]
				if !ok {
					return nil, nil, core.Invalidf(fmt.Sprintf("%s.depends_on[%d]", field, k), "%q is no ref of this flow", d.Ref)
				}
				if j == i {
					return nil, nil, core.Invalidf(fmt.Sprintf("%s.depends_on[%d]", field, k), "%q is the job itself", d.Ref)
				}
				if seenRef[j] {
					return nil, nil, core.Invalidf(fmt.Sprintf("%s.depends_on[%d]", field, k), "%q is given twice", d.Ref)
				}
				if req.Jobs[j].Spec.Broadcast {
					return nil, nil, core.Invalidf(fmt.Sprintf("%s.depends_on[%d]", field, k), "%q is a broadcast, which no job may depend on (it is published, not run, and has no result)", d.Ref)
				}
				seenRef[j] = true
				deps[i] = append(deps[i], j)
			default:
				fj.Spec.DependsOn = append(fj.Spec.DependsOn, d.ID)
			}
		}
		if len(deps[i])+len(fj.Spec.DependsOn) > core.MaxDependencies {
			return nil, nil, core.Invalidf(field+".depends_on", "%d dependencies is over the limit of %d", len(deps[i])+len(fj.Spec.DependsOn), core.MaxDependencies)
		}
		if err := fj.Spec.Normalize(s.cfg.MaxDataBytes); err != nil {
			return nil, nil, bus.Errorf(bus.CodeInvalid, "%s.spec.%s", field, bus.MessageOf(err))
		}
		s.withNodeDefaults(&fj.Spec)
	}
	order, cyc := topoOrder(deps)
	if cyc >= 0 {
		return nil, nil, core.Invalidf("jobs["+strconv.Itoa(cyc)+"].depends_on", "the flow has a cycle through %q", req.Jobs[cyc].Ref)
	}
	pos := make([]int, n) // request index → place in order
	for k, i := range order {
		pos[i] = k
	}
	specs = make([]core.Spec, n)
	for k, i := range order {
		sp := req.Jobs[i].Spec
		for _, j := range deps[i] {
			sp.DependsOnRefs = append(sp.DependsOnRefs, pos[j])
		}
		specs[k] = sp
	}
	return specs, order, nil
}

// topoOrder orders the jobs so that each comes after those it depends on
// (Kahn's algorithm, taking jobs in request order when free to), or
// returns a job on a cycle (cyc >= 0).
func topoOrder(deps [][]int) (order []int, cyc int) {
	n := len(deps)
	waits := make([]int, n)
	dependents := make([][]int, n)
	for i, ds := range deps {
		waits[i] = len(ds)
		for _, j := range ds {
			dependents[j] = append(dependents[j], i)
		}
	}
	var free []int
	for i := range n {
		if waits[i] == 0 {
			free = append(free, i)
		}
	}
	for len(free) > 0 {
		i := free[0]
		free = free[1:]
		order = append(order, i)
		for _, d := range dependents[i] {
			if waits[d]--; waits[d] == 0 {
				free = append(free, d)
			}
		}
	}
	if len(order) < n {
		for i := range n {
			if waits[i] > 0 {
				return nil, i
			}
		}
	}
	return order, -1
}

// createFlow stores a flow in one store call (not the create batcher,
// whose calls merge several requests: a flow's refs index its own call).
func (s *Service) createFlow(ctx context.Context, req *core.FlowRequest) (*core.FlowReply, error) {
	specs, order, err := s.checkFlow(req)
	if err != nil {
		return nil, err
	}
	withHeaderTrace(ctx, specs)
	jobs, existing, err := s.store.Create(context.WithoutCancel(ctx), s.now(), specs)
	if err != nil {
		return nil, err
	}
	s.announceCreated(jobs, existing)
	out := make([]core.FlowCreated, len(jobs))
	for k, i := range order {
		out[i] = core.FlowCreated{Ref: req.Jobs[i].Ref, ID: jobs[k].ID, State: jobs[k].State}
	}
	return &core.FlowReply{Jobs: out}, nil
}
