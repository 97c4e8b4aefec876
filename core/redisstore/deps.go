package redisstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/core"
)

// Dependencies (issue 26; lua/includes/deps.lua has the scripts' half).
// A create whose jobs wait records, in each job's slot, the dependencies
// of its type it checked at once, and links ("l:...", one record for all
// its links to one type) for those of another type, which may be on
// another Redis Cluster shard. A completion records a settle ("s:...")
// for each dependent of another type; those of its own type it releases
// in its own script. finishHandovers runs each recorded
// step's second half in the other slot, then forgets it there: a crash in
// between leaves it recorded, and the leader's sweep (HandOver) runs it
// again, which changes nothing twice.

// handoverBatch bounds the hand-overs read per call (a create's links to
// one type are one, as many as its jobs), and handoverRounds
// the calls one finishHandovers makes (a failure carrying down a deep graph
// records more as it goes; the sweep finishes what is left).
const (
	handoverBatch  = 1000
	handoverRounds = 1000
)

// OnSettled sets what the store tells of the jobs that left waiting by a
// dependency's outcome (released, failed or cancelled by their rule),
// after it stored that, so that their events go out.
func (s *Store) OnSettled(fn func([]core.Job)) { s.settled.Store(&fn) }

func (s *Store) tellSettled(jobs []core.Job) {
	if fn := s.settled.Load(); fn != nil && len(jobs) > 0 {
		(*fn)(jobs)
	}
}

// encodeIDs writes ids as the depends_on field holds them: "5,7".
func encodeIDs(ids []int64) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}

// decodeIDs reads ids written by encodeIDs (a job's depends_on): nil for
// none.
func decodeIDs(s string) []int64 {
	if s == "" {
		return nil
	}
	return parseIDs(strings.Split(s, ","))
}

// depState is an existing dependency as a create found it.
type depState struct {
	jobType string
	state   core.State // "" when it does not exist
}

// readDeps reads the type and state of every existing job the specs
// depend on; an unknown one is invalid, naming its spec when there are
// several.
func (s *Store) readDeps(ctx context.Context, specs []core.Spec) (map[int64]depState, error) {
	var ids []int64
	seen := map[int64]bool{}
	for i := range specs {
		for _, id := range specs[i].DependsOn {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	out := make(map[int64]depState, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	types, err := s.typesOfIDs(ctx, ids)
	if err != nil {
		return nil, s.fail("find dependencies' types", err)
	}
	pipe := s.rdb.Pipeline()
	states := make([]*redis.SliceCmd, len(ids))
	for i, id := range ids {
		if types[i] != "" {
			states[i] = pipe.HMGet(ctx, s.keys.ofType(types[i]).job(id), "state", "broadcast")
		}
	}
	if err := execReads(ctx, pipe); err != nil {
		return nil, s.fail("read dependencies", err)
	}
	broadcast := map[int64]bool{}
	for i, id := range ids {
		d := depState{jobType: types[i]}
		if states[i] != nil {
			v := states[i].Val()
			d.state, broadcast[id] = core.State(str(v[0])), str(v[1]) == "1"
		}
		out[id] = d
	}
	for i := range specs {
		for _, id := range specs[i].DependsOn {
			field := "depends_on"
			if len(specs) > 1 {
				field = fmt.Sprintf("jobs[%d].depends_on", i)
			}
			switch {
			case out[id].state == "":
				return nil, core.Invalidf(field, "job %d does not exist", id)
			case broadcast[id]:
				return nil, core.Invalidf(field, "job %d is a broadcast, which no job may depend on (it is published, not run, and has no result)", id)
			}
		}
	}
	return out, nil
}

// createWaiting is Create for specs of which some wait: ids are reserved
// for every spec first, so that a spec may depend on another of the call
// (DependsOnRefs, which must come before it: the service orders a flow);
// then each type's jobs are stored in one script, and the links to
// dependencies of other types are finished.
func (s *Store) createWaiting(ctx context.Context, now int64, specs []core.Spec) ([]core.Job, []bool, error) {
	jobs, existing, types, err := s.storeWaiting(ctx, now, specs)
	if err != nil {
		return nil, nil, err
	}
	// The jobs are stored: a hand-over that fails now stays recorded, for
	// the leader's sweep (HandOver); the create succeeded.
	moved, _ := s.finishHandovers(ctx, now, types)
	at := make(map[int64]int, len(jobs))
	for i := range jobs {
		at[jobs[i].ID] = i
	}
	var others []core.Job
	for _, m := range moved {
		if i, ok := at[m.ID]; ok && !existing[i] {
			// a script's row has none of data and dependencies
			m.Data, m.DependsOn, m.OnDependencyFailure = jobs[i].Data, jobs[i].DependsOn, jobs[i].OnDependencyFailure
			jobs[i] = m // the create's reply and event tell where it is now
			continue
		}
		others = append(others, m)
	}
	s.tellSettled(others)
	return jobs, existing, nil
}

// storeWaiting is createWaiting's first step: it stores the jobs, each
// type's in one script, which records the hand-overs left to finish in
// the slots of types, the types of the jobs.
func (s *Store) storeWaiting(ctx context.Context, now int64, specs []core.Spec) (jobs []core.Job, existing []bool, types []string, err error) {
	deps, err := s.readDeps(ctx, specs)
	if err != nil {
		return nil, nil, nil, err
	}
	groups := groupByType(specs)
	ids := make([]int64, len(specs))
	for _, g := range groups {
		got, err := s.reserveIDs(ctx, specs[g[0]].Type, len(g))
		if err != nil {
			return nil, nil, nil, s.fail("reserve ids", err)
		}
		for n, i := range g {
			ids[i] = got[n]
		}
	}
	// each spec as stored: every dependency by id; and what its script
	// checks (deps_check): "id" of its type, "id:type" of another, but
	// not a job of another type found complete (created as usual when
	// nothing else waits)
	stored := make([]core.Spec, len(specs))
	more := make([]newJobDeps, len(specs))
	for i := range specs {
		sp := specs[i]
		all := append([]int64{}, sp.DependsOn...)
		var check []string
		add := func(id int64, jobType string) {
			if jobType == sp.Type {
				check = append(check, strconv.FormatInt(id, 10))
			} else {
				check = append(check, strconv.FormatInt(id, 10)+":"+jobType)
			}
		}
		for _, id := range sp.DependsOn {
			if d := deps[id]; d.jobType == sp.Type || d.state != core.StateComplete {
				add(id, d.jobType)
			}
		}
		for _, j := range sp.DependsOnRefs {
			all = append(all, ids[j])
			add(ids[j], specs[j].Type)
			if specs[j].Type == sp.Type {
				// one of another type is counted by its link, which
				// adds what it enters (lua/dep_link.lua)
				more[j].dependents++
			}
		}
		sp.DependsOn, sp.DependsOnRefs = all, nil
		stored[i], more[i].check = sp, strings.Join(check, ",")
	}
	jobs, existing = make([]core.Job, len(specs)), make([]bool, len(specs))
	var done []int64 // for the rollback
	first := s.order.take(now, len(specs))
	for _, g := range groups {
		jobType := specs[g[0]].Type
		group, gids, gmore := make([]*core.Spec, len(g)), make([]int64, len(g)), make([]newJobDeps, len(g))
		for n, i := range g {
			group[n], gids[n], gmore[n] = &stored[i], ids[i], more[i]
		}
		res, err := s.runCreateJobs(ctx, now, jobType, gids, group, gmore, first, g)
		if err != nil {
			s.rollback(ctx, done)
			return nil, nil, nil, s.fail("create jobs", err)
		}
		for n, i := range g {
			jobs[i], existing[i] = res[n].job, res[n].duplicate
			if !res[n].duplicate {
				done = append(done, gids[n])
			}
		}
		types = append(types, jobType)
	}
	return jobs, existing, types, nil
}

// settleAfter finishes at once the hand-overs that jobs of types ending
// (failed for good, cancelled, moved by hand) recorded, and tells of the
// jobs they moved. A failure leaves them to the sweep.
func (s *Store) settleAfter(ctx context.Context, now int64, types ...string) {
	moved, _ := s.finishHandovers(ctx, now, types)
	s.tellSettled(moved)
}

// HandOver is the leader's sweep: it finishes the hand-overs of every type
// recorded at or before upTo (unix ms) that a crash left half done. It
// returns how many it finished; the jobs they moved go to OnSettled.
func (s *Store) HandOver(ctx context.Context, now, upTo int64) (int, error) {
	all, err := s.Types(ctx)
	if err != nil {
		return 0, err
	}
	// one pipelined read finds the types with hand-overs due: most
	// sweeps find none, at the cost of that one round trip
	pipe := s.rdb.Pipeline()
	counts := make([]*redis.IntCmd, len(all))
	for i, t := range all {
		counts[i] = pipe.ZCount(ctx, s.keys.ofType(t).handover(), "-inf", strconv.FormatInt(upTo, 10))
	}
	if err := execReads(ctx, pipe); err != nil {
		return 0, s.fail("count hand-overs", err)
	}
	var types []string
	for i, t := range all {
		if counts[i].Val() > 0 {
			types = append(types, t)
		}
	}
	if len(types) == 0 {
		return 0, nil
	}
	moved, n, err := s.handOver(ctx, now, types, upTo)
	s.tellSettled(moved)
	return n, err
}

// finishHandovers finishes the hand-overs now recorded in types' slots,
// and those they record in turn: the jobs they moved.
func (s *Store) finishHandovers(ctx context.Context, now int64, types []string) ([]core.Job, error) {
	moved, _, err := s.handOver(ctx, now, types, 0)
	return moved, err
}

// handOver finishes the hand-overs recorded in types' slots (those
// recorded at or before upTo; 0: all), following the types they hand on
// to, for at most handoverRounds batches: per batch of a slot, one call
// per type it links to, one per type it settles in, and one that forgets
// the batch.
func (s *Store) handOver(ctx context.Context, now int64, types []string, upTo int64) ([]core.Job, int, error) {
	queue := append([]string{}, types...)
	inQueue := map[string]bool{}
	for _, t := range queue {
		inQueue[t] = true
	}
	max := "+inf"
	if upTo > 0 {
		max = strconv.FormatInt(upTo, 10)
	}
	var moved []core.Job
	finished := 0
	for round := 0; len(queue) > 0 && round < handoverRounds; round++ {
		t := queue[0]
		tk := s.keys.ofType(t)
		entries, err := s.rdb.ZRangeByScore(ctx, tk.handover(), &redis.ZRangeBy{Min: "-inf", Max: max, Count: handoverBatch}).Result()
		if err != nil {
			return moved, finished, s.fail("read hand-overs", err)
		}
		if len(entries) < handoverBatch {
			queue, inQueue[t] = queue[1:], false
		}
		if len(entries) == 0 {
			continue
		}
		jobs, next, err := s.finishBatch(ctx, now, t, entries)
		moved = append(moved, jobs...)
		if err != nil {
			return moved, finished, s.fail("hand over", err)
		}
		if err := s.runHandoverDone(ctx, tk, entries); err != nil {
			return moved, finished, s.fail("forget hand-overs", err)
		}
		finished += len(entries)
		for _, n := range next {
			if !inQueue[n] {
				queue, inQueue[n] = append(queue, n), true
			}
		}
	}
	return moved, finished, nil
}

// finishBatch runs the second step of hand-overs entries, recorded in the
// slot of type t: the jobs they moved, and the types in whose slots they
// recorded hand-overs in turn.
func (s *Store) finishBatch(ctx context.Context, now int64, t string, entries []string) ([]core.Job, []string, error) {
	links, settles := map[string][]linkItem{}, map[string][]settleItem{}
	var linkTypes, settleTypes []string
	addSettle := func(jobType string, it settleItem) {
		if _, ok := settles[jobType]; !ok {
			settleTypes = append(settleTypes, jobType)
		}
		settles[jobType] = append(settles[jobType], it)
	}
	for _, e := range entries {
		if strings.HasPrefix(e, "l:") {
			// l:<dep type>:<dep id>:<id>[,<dep id>:<id>...]: each job <id>
			// of t waits for its <dep id> (a create's links to one type)
			u, pairs, _ := strings.Cut(e[2:], ":")
			if _, ok := links[u]; !ok && u != "" {
				linkTypes = append(linkTypes, u)
			}
			for _, p := range strings.Split(pairs, ",") {
				d, x, found := strings.Cut(p, ":")
				dep, err1 := strconv.ParseInt(d, 10, 64)
				_, err2 := strconv.ParseInt(x, 10, 64)
				if u == "" || !found || err1 != nil || err2 != nil {
					return nil, nil, fmt.Errorf("hand-over %q: not a link", e)
				}
				links[u] = append(links[u], linkItem{dep: dep, member: t + ":" + x})
			}
			continue
		}
		f := strings.Split(e, ":")
		switch {
		case len(f) == 5 && f[0] == "s": // s:<type>:<id>:<dep id>:<c|f>
			id, _ := strconv.ParseInt(f[2], 10, 64)
			dep, _ := strconv.ParseInt(f[3], 10, 64)
			addSettle(f[1], settleItem{id: id, dep: dep, outcome: f[4]})
		default:
			return nil, nil, fmt.Errorf("hand-over %q: not a hand-over", e)
		}
	}
	for _, u := range linkTypes {
		items := links[u]
		states, err := s.runDepLink(ctx, s.keys.ofType(u), items)
		if err != nil {
			return nil, nil, err
		}
		for i, st := range states {
			outcome := ""
			switch st {
			case core.StateComplete:
				outcome = "c"
			case "", core.StateFailed, core.StateCancelled:
				outcome = "f"
			}
			if outcome != "" { // finished before the link: settle it now
				_, x, _ := strings.Cut(items[i].member, ":")
				id, _ := strconv.ParseInt(x, 10, 64)
				addSettle(t, settleItem{id: id, dep: items[i].dep, outcome: outcome})
			}
		}
	}
	var moved []core.Job
	var next []string
	for _, u := range settleTypes {
		jobs, handed, err := s.runDepSettle(ctx, s.keys.ofType(u), now, settles[u])
		if err != nil {
			return moved, next, err
		}
		moved = append(moved, jobs...)
		if handed > 0 {
			next = append(next, u)
		}
	}
	return moved, next, nil
}

// Pending lists the dependencies job id still waits for (none unless it
// is waiting); not_found when there is no such job. A waiting job of one
// dependency has no pending set: that one is pending (lua/includes/deps.lua).
func (s *Store) Pending(ctx context.Context, id int64) ([]int64, error) {
	tk, _, err := s.typeOf(ctx, id)
	if err != nil {
		return nil, err
	}
	pipe := s.rdb.Pipeline()
	members := pipe.SMembers(ctx, tk.pending(id))
	v := pipe.HMGet(ctx, tk.job(id), "state", "depends_on")
	if err := execReads(ctx, pipe); err != nil {
		return nil, s.fail("read pending dependencies", err)
	}
	if ids := decodeIDs(str(v.Val()[1])); len(members.Val()) == 0 && len(ids) == 1 && core.State(str(v.Val()[0])) == core.StateWaiting {
		return ids, nil
	}
	return parseIDs(members.Val()), nil
}

// Dependencies lists the jobs job id depends on, in the order it named
// them, each with its state and result.
func (s *Store) Dependencies(ctx context.Context, id int64) ([]core.DepJob, error) {
	tk, _, err := s.typeOf(ctx, id)
	if err != nil {
		return nil, err
	}
	v, err := s.rdb.HMGet(ctx, tk.job(id), "id", "depends_on").Result()
	if err != nil {
		return nil, s.fail("read dependencies", err)
	}
	if v[0] == nil {
		return nil, core.JobNotFound(id)
	}
	ids := decodeIDs(str(v[1]))
	types, err := s.typesOfIDs(ctx, ids)
	if err != nil {
		return nil, s.fail("find dependencies' types", err)
	}
	return s.depJobs(ctx, ids, types)
}

// Dependents lists the jobs that wait (or waited) for job id.
func (s *Store) Dependents(ctx context.Context, id int64) ([]core.DepJob, error) {
	tk, jobType, err := s.typeOf(ctx, id)
	if err != nil {
		return nil, err
	}
	pipe := s.rdb.Pipeline()
	exists := pipe.Exists(ctx, tk.job(id))
	members := pipe.SMembers(ctx, tk.dependents(id))
	if err := execReads(ctx, pipe); err != nil {
		return nil, s.fail("read dependents", err)
	}
	if exists.Val() == 0 {
		return nil, core.JobNotFound(id)
	}
	ids := make([]int64, 0, len(members.Val()))
	types := make([]string, 0, len(members.Val()))
	for _, m := range members.Val() {
		t, x, found := strings.Cut(m, ":")
		if !found {
			t, x = jobType, m
		}
		n, _ := strconv.ParseInt(x, 10, 64)
		ids, types = append(ids, n), append(types, t)
	}
	jobs, err := s.depJobs(ctx, ids, types)
	slices.SortFunc(jobs, func(a, b core.DepJob) int { return cmp.Compare(a.ID, b.ID) })
	return jobs, err
}

// depJobs reads each job's type, state, result and error; a job gone (or
// of an unknown type) is marked so.
func (s *Store) depJobs(ctx context.Context, ids []int64, types []string) ([]core.DepJob, error) {
	pipe := s.rdb.Pipeline()
	reads := make([]*redis.SliceCmd, len(ids))
	for i, id := range ids {
		if types[i] != "" {
			reads[i] = pipe.HMGet(ctx, s.keys.ofType(types[i]).job(id), "state", "result", "error")
		}
	}
	if err := execReads(ctx, pipe); err != nil {
		return nil, s.fail("read dependencies", err)
	}
	out := make([]core.DepJob, len(ids))
	for i, id := range ids {
		out[i] = core.DepJob{ID: id, Type: types[i]}
		if reads[i] == nil || reads[i].Val()[0] == nil {
			out[i].Gone = true
			continue
		}
		v := reads[i].Val()
		out[i].State, out[i].Result, out[i].Error = core.State(str(v[0])), raw(v[1]), str(v[2])
	}
	return out, nil
}
