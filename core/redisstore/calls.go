package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
)

// The typed wrapper of each script of lua/: it lays out KEYS and ARGV as the
// script's header says, and decodes the reply by position. Errors are
// Redis's, for the caller to word (Store.fail).

// createJobsOutcome is what create_jobs says of one spec: the job stored;
// or, when it was not stored (duplicate), the unfinished job that has its
// unique key.
type createJobsOutcome struct {
	job       core.Job
	duplicate bool
}

// runCreateJobs stores the jobs of one type: one script on the type's slot,
// their ids' blocks reserved before (ids.go), so a create that fails
// leaves nothing behind, and one that runs twice stores each job once.
// Each job is built here (core.Spec.NewJob) and written by the script field for
// field, so the job returned is the job stored; the script replies a job
// only when it did not store the one given: the job that has its unique
// key, or the job an earlier run of the same create stored.
// deps, nil when no job waits, are each job's dependencies as its script
// checks them (lua/includes/deps.lua). The jobs' places, which order them
// in the type's jobs index (lua/includes/jobs_order.lua), are first +
// idx: idx their indexes in the create call's specs, ascending, first the
// place of the call's first job (createOrder).
func (s *Store) runCreateJobs(ctx context.Context, now int64, jobType string, ids []int64, specs []*core.Spec, deps []newJobDeps, first int, idx []int) ([]createJobsOutcome, error) {
	tk := s.keys.ofType(jobType)
	out := make([]createJobsOutcome, len(ids))
	for n, id := range ids {
		out[n].job = specs[n].NewJob(id, now)
	}
	// ARGV: the shared fields' values once, then each job's own
	// (create_jobs.lua's header).
	args := make([]any, 0, 1+len(newJobShared)+(len(newJobOwn)+1)*len(ids))
	args = append(args, createPlaces(first, idx))
	for _, enc := range newJobShared {
		args = append(args, enc(&out[0].job))
	}
	for n := range out {
		if deps != nil {
			args = appendNewJob(args, &out[n].job, deps[n].pairs()...)
			continue
		}
		args = appendNewJob(args, &out[n].job)
	}
	res, err := s.eval(ctx, createJobs, append(tk.fixed(), tk.job(0), tk.errors(0)), args...).Slice()
	if err != nil {
		return nil, err
	}
	if len(res) < len(ids) {
		return nil, fmt.Errorf("create_jobs: %d replies for %d jobs", len(res), len(ids))
	}
	existing := res[len(ids):] // row, errors of each job not stored as built
	for n, r := range res[:len(ids)] {
		switch code := codeOf(r); code {
		case codeDone: // stored as built
		case codeWaiting: // stored, waiting for its dependencies
			out[n].job.State = core.StateWaiting
			out[n].job.Pending = strings.Count(deps[n].check, ",") + 1 // at most
		case codeDuplicate, codeRepeated:
			var job core.Job
			if len(existing) < 2 || !decodeRowInto(&job, existing[0]) {
				return nil, fmt.Errorf("create_jobs: job %d: no row", ids[n])
			}
			job.Errors = decodeErrors(strs(existing[1]))
			existing = existing[2:]
			out[n] = createJobsOutcome{job: job, duplicate: code == codeDuplicate}
		default:
			return nil, fmt.Errorf("create_jobs: job %d: code %d", ids[n], code)
		}
	}
	return out, nil
}

// createPlaces is create_jobs.lua's ARGV[1], the places first + idx: the
// place of the first job when they follow one another (a call of one
// type: one number, whatever the count), else every place,
// comma-separated.
func createPlaces(first int, idx []int) string {
	for n, i := range idx {
		if i != idx[0]+n {
			parts := make([]string, len(idx))
			for k, i := range idx {
				parts[k] = strconv.Itoa(first + i)
			}
			return strings.Join(parts, ",")
		}
	}
	if len(idx) == 0 {
		return strconv.Itoa(first)
	}
	return strconv.Itoa(first + idx[0])
}

// runPromoteDue moves the due jobs among ids to ready: the next due time
// (0: none) and the jobs moved.
func (s *Store) runPromoteDue(ctx context.Context, tk typeKeys, now int64, ids []int64) (int64, []core.Job, error) {
	keys := append(tk.fixed(), tk.broadcasts())
	args := make([]any, 0, 1+len(ids))
	args = append(args, now)
	for _, id := range ids {
		keys = append(keys, tk.job(id))
		args = append(args, id)
	}
	res, err := s.eval(ctx, promoteDue, keys, args...).Slice()
	if err != nil {
		return 0, nil, err
	}
	return num(res[0]), decodeRows(res[1:]), nil
}

// runBroadcastTake claims the broadcasts among ids that are due by now
// until `until`: the earliest time still in the type's broadcasts (0:
// none) and the jobs taken, data included.
func (s *Store) runBroadcastTake(ctx context.Context, tk typeKeys, now, until int64, ids []int64) (int64, []core.Job, error) {
	args := make([]any, 0, 2+len(ids))
	args = append(args, now, until)
	for _, id := range ids {
		args = append(args, id)
	}
	res, err := s.eval(ctx, broadcastTake, append(tk.fixed(), tk.broadcasts(), tk.job(0)), args...).Slice()
	if err != nil {
		return 0, nil, err
	}
	return num(res[0]), decodeRows(res[1:]), nil
}

// runBroadcastSent marks the broadcasts of ids published: how many were
// still waiting to be.
func (s *Store) runBroadcastSent(ctx context.Context, tk typeKeys, ids []int64) (int64, error) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return s.eval(ctx, broadcastSent, append(tk.fixed(), tk.broadcasts(), tk.job(0), tk.log(0), tk.errors(0)), args...).Int64()
}

// decodeRows decodes rows, leaving out any of a job that does not exist.
func decodeRows(rows []any) []core.Job {
	jobs := make([]core.Job, 0, len(rows))
	for _, r := range rows {
		if j, ok := decodeRow(r); ok {
			jobs = append(jobs, j)
		}
	}
	return jobs
}

// runRemoveJob deletes a job, its log and its error history: the job as
// it was, nil when there was none.
func (s *Store) runRemoveJob(ctx context.Context, tk typeKeys, id int64) (*core.Job, error) {
	res, err := s.eval(ctx, removeJob, append(tk.fixed(), tk.job(id), tk.log(id), tk.errors(id)), id).Slice()
	return jobOf(res, err)
}

// jobOf is the job of a script's row reply, nil for {}.
func jobOf(row []any, err error) (*core.Job, error) {
	if err != nil {
		return nil, err
	}
	j, ok := decodeRow(row)
	if !ok {
		return nil, nil
	}
	return &j, nil
}

// runAddLog appends a line to a job's log: the job, nil when there is none.
func (s *Store) runAddLog(ctx context.Context, tk typeKeys, id, now int64, line string) (*core.Job, error) {
	res, err := s.eval(ctx, addLog, append(tk.fixed(), tk.job(id), tk.log(id)), line, s.maxLogLines, now).Slice()
	return jobOf(res, err)
}

// runSetState moves a job by hand: the job after, nil when there is none,
// and whether it changed.
func (s *Store) runSetState(ctx context.Context, tk typeKeys, id, now int64, state core.State) (*core.Job, bool, error) {
	res, err := s.eval(ctx, setState, append(tk.fixed(), tk.job(id)), now, string(state)).Slice()
	if err != nil || len(res) == 0 {
		return nil, false, err
	}
	job, err := jobOf(res[1].([]any), nil)
	return job, codeOf(res[0]) == codeDone, err
}

// runSetPriority changes a job's priority: the job, nil when there is none.
func (s *Store) runSetPriority(ctx context.Context, tk typeKeys, id, now int64, p core.Priority) (*core.Job, error) {
	res, err := s.eval(ctx, setPriority, append(tk.fixed(), tk.job(id)), now, int64(p)).Slice()
	return jobOf(res, err)
}

// runLeaseJobs leases the jobs of ready members of one type under token, for
// ttl ms each (0: each job's own ttl): the jobs leased, data and token
// included.
func (s *Store) runLeaseJobs(ctx context.Context, tk typeKeys, now int64, worker, token string, ttl int64, members []string) ([]core.Job, leaseHeld, error) {
	keys := append(tk.fixed(), tk.policy(), tk.starts())
	args := make([]any, 0, 4+len(members))
	args = append(args, now, worker, token, ttl)
	for _, m := range members {
		keys = append(keys, tk.job(readyID(m)))
		args = append(args, m)
	}
	res, err := s.eval(ctx, leaseJobs, keys, args...).Slice()
	if err != nil {
		return nil, leaseHeld{}, err
	}
	if len(res) == 0 {
		return nil, leaseHeld{}, fmt.Errorf("lease: an empty reply")
	}
	held, rows := leaseReply(res)
	return leased(rows, now, worker, token, ttl), held, nil
}

// leaseHeld is what held a lease script back, beside the jobs it leased.
type leaseHeld struct {
	paused  bool  // the type is paused: nothing leased
	limited bool  // its concurrency or rate held back some or all
	until   int64 // limited by its rate: when the next start may be (unix ms); else 0
}

// leaseReply splits a lease script's reply into what held it back and the
// jobs' rows: {PAUSED}, {LIMITED, until, job...} or {DONE, job...}.
func leaseReply(res []any) (leaseHeld, []any) {
	switch codeOf(res[0]) {
	case codePaused:
		return leaseHeld{paused: true}, nil
	case codeLimited:
		return leaseHeld{limited: true, until: num(res[1])}, res[2:]
	}
	return leaseHeld{}, res[1:]
}

// runLeaseHead leases up to max jobs from the head of one type's ready
// (lease_head.lua): the jobs, data and token included, and what held the
// lease back (the type paused: then none; its policy).
func (s *Store) runLeaseHead(ctx context.Context, tk typeKeys, now int64, worker, token string, ttl int64, max int) ([]core.Job, leaseHeld, error) {
	res, err := s.eval(ctx, leaseHead, append(tk.fixed(), tk.job(0), tk.policy(), tk.starts()), now, worker, token, ttl, max).Slice()
	if err != nil {
		return nil, leaseHeld{}, err
	}
	if len(res) == 0 {
		return nil, leaseHeld{}, fmt.Errorf("lease_head: an empty reply")
	}
	held, rows := leaseReply(res)
	return leased(rows, now, worker, token, ttl), held, nil
}

// runRescueExpired takes back the jobs among ids whose lease ran out: the
// next expiry (0: none) and the jobs taken back; the job's state, and
// Stalls against StallLimit, say what became of each.
func (s *Store) runRescueExpired(ctx context.Context, tk typeKeys, now int64, stallLimit int, ids []int64) (int64, []core.Job, error) {
	keys := tk.fixed()
	args := make([]any, 0, 3+len(ids))
	args = append(args, now, stallLimit, int64(core.MaxDelay))
	for _, id := range ids {
		keys = append(keys, tk.job(id), tk.errors(id))
		args = append(args, id)
	}
	res, err := s.eval(ctx, rescueExpired, keys, args...).Slice()
	if err != nil {
		return 0, nil, err
	}
	return num(res[0]), decodeRows(res[1:]), nil
}

// opScript is how the script of one kind of lease holder's operation is
// called (lua/includes/lease_holder.lua): head is what ARGV holds after
// now, before the jobs; args appends what it holds per job after id and
// lease, in the order of the script's header.
type opScript struct {
	script *redis.Script
	head   []any
	args   func(dst []any, o *service.StoreOp) []any
}

var opScripts = map[core.Op]opScript{
	core.OpComplete: {script: completeJobs, args: func(dst []any, o *service.StoreOp) []any {
		return append(dst, string(o.Result), flag(o.Bare))
	}},
	core.OpFail: {script: failJobs, head: []any{int64(core.MaxDelay)}, args: func(dst []any, o *service.StoreOp) []any {
		delay := "" // the job's backoff
		if o.Delay != nil {
			delay = strconv.FormatInt(*o.Delay, 10)
		}
		return append(dst, o.Error, flag(o.Final), o.Stack, delay)
	}},
	core.OpTouch:   {script: touchJobs},
	core.OpRelease: {script: releaseJobs},
	core.OpRejoin: {script: rejoinJobs, args: func(dst []any, o *service.StoreOp) []any {
		var delay int64
		if o.Delay != nil {
			delay = *o.Delay
		}
		return append(dst, delay)
	}},
	core.OpProgress: {script: progressJobs, args: func(dst []any, o *service.StoreOp) []any {
		return append(dst, o.Percent)
	}},
}

// opOutcome is what the script of a lease holder's operation says of one job.
type opOutcome struct {
	// code: codeNoJob, codeNotHolder, codeRepeated (an operation done
	// before with this lease), else the operation's own (codeDone; complete:
	// codeCompletedRemoved; fail: codeRetrying, codeFailed,
	// codeFailedRemoved).
	code replyCode
	job  core.Job // after the operation; zero for codeNoJob and codeNotHolder
	// released are the jobs of its type a complete released from waiting,
	// handed how many hand-overs it recorded for its other dependents
	// (lua/includes/deps.lua).
	released []core.Job
	handed   int64
}

// runOps runs one kind of lease holder's operation over jobs of one type.
func (s *Store) runOps(ctx context.Context, call opScript, tk typeKeys, now int64, ops []*service.StoreOp) ([]opOutcome, error) {
	// each job's keys are built in the script from these (lease_holder.lua)
	keys := append(tk.fixed(), tk.job(0), tk.log(0), tk.errors(0))
	args := make([]any, 0, 1+len(call.head)+3*len(ops))
	args = append(args, now)
	args = append(args, call.head...)
	for _, o := range ops {
		args = append(args, o.ID, o.Lease)
		if call.args != nil {
			args = call.args(args, o)
		}
	}
	res, err := s.eval(ctx, call.script, keys, args...).Slice()
	if err != nil {
		return nil, err
	}
	out := make([]opOutcome, len(res))
	for n, r := range res {
		pair := r.([]any)
		out[n].code = codeOf(pair[0])
		decodeRowInto(&out[n].job, pair[1]) // {} (a bare reply, or no job) leaves it zero
		if len(pair) > 3 {
			rows, _ := pair[2].([]any)
			out[n].released, out[n].handed = decodeRows(rows), num(pair[3])
		}
	}
	return out, nil
}

// runTypeSet stores a type's policy (type_set.lua): the whole as JSON, and
// the numbers the scripts act on; it says whether the type's aging changed.
func (s *Store) runTypeSet(ctx context.Context, tk typeKeys, p *core.TypePolicy) (bool, error) {
	doc := ""
	if !p.IsZero() {
		b, err := json.Marshal(p)
		if err != nil {
			return false, err
		}
		doc = string(b)
	}
	var limit, per int64
	if p.Rate != nil {
		limit, per = p.Rate.Limit, p.Rate.Per.Milliseconds()
	}
	var aging int64
	if p.Aging != nil {
		aging = p.Aging.Per.Milliseconds()
	}
	var glimit, gper int64
	if p.GroupRate != nil {
		glimit, gper = p.GroupRate.Limit, p.GroupRate.Per.Milliseconds()
	}
	res, err := s.eval(ctx, typeSet, []string{tk.stats(), tk.policy(), tk.starts()}, doc, p.Concurrency, limit, per, aging,
		p.GroupConcurrency, glimit, gper).Result()
	if err != nil {
		return false, err
	}
	return codeOf(res) == codeDone, nil
}

// runGroupWake takes back into ready the parked jobs of the type's groups
// whose wait ended by now (group_wake.lua): how many came back.
func (s *Store) runGroupWake(ctx context.Context, tk typeKeys, now int64) (int64, error) {
	return s.eval(ctx, groupWake, tk.fixed(), now).Int64()
}

// jobsPlace is a place in a type's jobs index: a score, as Redis wrote it
// in a reply (so given back exactly), and a member, a job id.
type jobsPlace struct{ score, member string }

// placeArgs are a place as the scripts that walk jobs take it: "" for
// the start.
func placeArgs(p *jobsPlace) (score, member string) {
	if p == nil {
		return "", ""
	}
	return p.score, p.member
}

// runAgingRerank re-scores up to limit of a type's ready jobs after the
// place after (nil: from the first) in its jobs index (aging_rerank.lua):
// the place to go on after, nil when done.
func (s *Store) runAgingRerank(ctx context.Context, tk typeKeys, after *jobsPlace, limit int) (*jobsPlace, error) {
	score, member := placeArgs(after)
	res, err := s.eval(ctx, agingRerank, append(tk.fixed(), tk.job(0)), score, member, limit).StringSlice()
	if err != nil || len(res) < 2 {
		return nil, err
	}
	return &jobsPlace{score: res[0], member: res[1]}, nil
}

// runPause pauses (paused) or resumes a type: whether it changed.
func (s *Store) runPause(ctx context.Context, tk typeKeys, paused bool) (bool, error) {
	res, err := s.eval(ctx, pauseType, tk.fixed(), flag(paused)).Result()
	return codeOf(res) == codeDone, err
}

// runCancel cancels a job: the job after, nil when there is none, and
// whether it changed (false: it had finished already, and is as it was).
func (s *Store) runCancel(ctx context.Context, tk typeKeys, id, now int64) (*core.Job, bool, error) {
	res, err := s.eval(ctx, cancelJob, append(tk.fixed(), tk.job(id)), now).Slice()
	if err != nil || len(res) == 0 {
		return nil, false, err
	}
	job, err := jobOf(res[1].([]any), nil)
	return job, codeOf(res[0]) == codeDone, err
}

// runClean removes, of the candidates ids (read oldest first from the
// state's index at rank cursor; atEnd when they reach the newest), those
// their retention or rule (the type's default) no longer keeps: the ids
// removed.
func (s *Store) runClean(ctx context.Context, tk typeKeys, now int64, state core.State, rule core.Retention, cursor int64, atEnd bool, ids []string) ([]string, error) {
	keys := tk.fixed()
	args := make([]any, 0, 5+len(ids))
	args = append(args, now, string(state), encodeLimit(rule), cursor, flag(atEnd))
	for _, id := range ids {
		n, _ := strconv.ParseInt(id, 10, 64)
		keys = append(keys, tk.job(n), tk.log(n), tk.errors(n))
		args = append(args, id)
	}
	return s.eval(ctx, cleanJobs, keys, args...).StringSlice()
}

// newJobDeps is what create_jobs.lua stores of a new job's dependencies
// beside its fields: check, the dependencies it checks and waits for
// (deps_check: "id" of its type, "id:type" of another; "" for none), and
// dependents, how many jobs of the same call wait for it (its dependents
// field, written with the job rather than after).
type newJobDeps struct {
	check      string
	dependents int
}

// pairs are d's name-value pairs, deps_check last: new_job.lua stores
// the job's pairs but that one, which it finds there without a search.
func (d newJobDeps) pairs() []any {
	var out []any
	if d.dependents > 0 {
		out = append(out, "dependents", d.dependents)
	}
	if d.check != "" {
		out = append(out, "deps_check", d.check)
	}
	return out
}

// settleItem is one hand-over's second step, in the dependent's slot:
// job id takes note that dep completed ("c") or failed ("f").
type settleItem struct {
	id, dep int64
	outcome string
}

// runDepSettle settles items, all of jobs of tk's type: the jobs that
// left waiting, and how many hand-overs it recorded for their dependents.
func (s *Store) runDepSettle(ctx context.Context, tk typeKeys, now int64, items []settleItem) ([]core.Job, int64, error) {
	args := make([]any, 0, 1+3*len(items))
	args = append(args, now)
	for _, it := range items {
		args = append(args, it.id, it.dep, it.outcome)
	}
	res, err := s.eval(ctx, depSettle, tk.fixed(), args...).Slice()
	if err != nil || len(res) == 0 {
		return nil, 0, err
	}
	return decodeRows(res[1:]), num(res[0]), nil
}

// linkItem is one link's second step, in the dependency's slot: member
// ("<type>:<id>") waits for job dep.
type linkItem struct {
	dep    int64
	member string
}

// linkChunk bounds the dependents of one dependency dep_link.lua enters
// in one SADD (it unpacks them from ARGV, which takes about 8000 at most);
// more come as another group of the same dependency.
const linkChunk = 4000

// runDepLink enters each item's member among the dependents of its
// dependency, of tk's type: each dependency's state ("" when it is gone);
// one that has finished was not entered. The items go by dependency, in
// the order each first comes, so that a fan-out's root is read and
// written once (lua/dep_link.lua).
func (s *Store) runDepLink(ctx context.Context, tk typeKeys, items []linkItem) ([]core.State, error) {
	var deps []int64
	members := map[int64][]string{}
	for _, it := range items {
		if _, ok := members[it.dep]; !ok {
			deps = append(deps, it.dep)
		}
		members[it.dep] = append(members[it.dep], it.member)
	}
	args := make([]any, 0, 2*len(deps)+len(items))
	var groups []int64 // the dependency of each group, as the reply has them
	for _, dep := range deps {
		for m := members[dep]; len(m) > 0; m = m[min(len(m), linkChunk):] {
			part := m[:min(len(m), linkChunk)]
			args = append(args, dep, len(part))
			for _, member := range part {
				args = append(args, member)
			}
			groups = append(groups, dep)
		}
	}
	res, err := s.eval(ctx, depLink, tk.fixed(), args...).StringSlice()
	if err != nil {
		return nil, err
	}
	if len(res) != len(groups) {
		return nil, fmt.Errorf("dep_link: %d states for %d dependencies", len(res), len(groups))
	}
	state := make(map[int64]core.State, len(deps))
	for i, st := range res {
		state[groups[i]] = core.State(st)
	}
	out := make([]core.State, len(items))
	for i, it := range items {
		out[i] = state[it.dep]
	}
	return out, nil
}

// runHandoverDone forgets finished hand-overs of tk's slot.
func (s *Store) runHandoverDone(ctx context.Context, tk typeKeys, entries []string) error {
	args := make([]any, len(entries))
	for i, e := range entries {
		args[i] = e
	}
	return s.eval(ctx, handoverDone, tk.fixed(), args...).Err()
}
