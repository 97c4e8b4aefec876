package redisstore

import (
	"context"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
)

// Lease hands up to max ready jobs to a worker, best priority first across
// the types that are not paused. For one type, one script reads the head
// of ready and leases it (lease_head.lua). For several, it reads the head
// of ready (merged over those types), then leases those jobs in one script
// per type; a job
// another core leased in between is skipped, and the read is tried again
// for what is missing. A type paused in between hands out nothing: the
// script checks again. paused lists the types the last read found paused.
//
// A type whose Redis fails (on Cluster: the master that owns its slot) is
// skipped for the rest of the call while the other types are leased from,
// and so is a type that failed a moment ago (downTypes, shards.go); the
// error is then a *service.TypesError naming the failed types, beside what
// was leased. When every type failed, it is the plain coded error.
func (s *Store) Lease(ctx context.Context, p *service.LeaseParams) (leased []core.Job, paused []string, err error) {
	now, types, max, worker, token, ttl := p.Now, p.Types, p.Max, p.Worker, p.Token, p.TTL
	failed := typeErrs{}
	tried, started := s.down.skip(now, types, failed) // shards.go: not those down a moment ago
	if distinct(tried) == 1 {
		// One type: its head is read in the lease script itself, one
		// round trip; nothing to merge across types.
		t := tried[0]
		jobs, held, err := s.runLeaseHead(ctx, s.keys.ofType(t), now, worker, token, ttl, max)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, nil, ctx.Err()
		case err != nil:
			failed[t] = s.fail("lease", err)
		case held.paused:
			paused = []string{t}
		case held.limited:
			p.NoteLimited(t, held.until)
		}
		leased = jobs
		s.down.note(now, tried, failed, time.Since(started))
		return leased, paused, failed.result(distinct(types))
	}
	s.multiLease.Lock()
	defer s.multiLease.Unlock()
	limited := map[string]bool{} // the types their policy held back
	woke := false                // the groups of the types with group limits (wakeGroups)
	for try := 0; try < 3 && len(leased) < max; try++ {
		var picks []entry
		// A type its policy held back is read no more in this call: its
		// head would stand in the way of the other types' jobs.
		read := tried
		if len(limited) > 0 {
			read = slices.DeleteFunc(slices.Clone(tried), func(t string) bool { return limited[t] })
		}
		var grouped []string
		picks, paused, grouped, err = s.readyHeads(ctx, read, max-len(leased), failed)
		if err != nil {
			return leased, nil, err
		}
		if !woke && len(grouped) > 0 {
			woke = true
			back, err := s.wakeGroups(ctx, now, grouped, failed)
			if err != nil {
				return leased, nil, err
			}
			if back > 0 {
				if picks, paused, _, err = s.readyHeads(ctx, read, max-len(leased), failed); err != nil {
					return leased, nil, err
				}
			}
		}
		if len(picks) == 0 {
			break
		}
		got := 0
		for _, g := range groupEntries(picks) {
			jobs, held, err := s.runLeaseJobs(ctx, s.keys.ofType(g.jobType), now, worker, token, ttl, g.members)
			if err != nil {
				if ctx.Err() != nil {
					return leased, paused, ctx.Err()
				}
				failed[g.jobType] = s.fail("lease", err)
				continue
			}
			if held.limited {
				limited[g.jobType] = true
				p.NoteLimited(g.jobType, held.until)
			}
			leased = append(leased, jobs...)
			got += len(jobs)
		}
		if got == len(picks) {
			break // nobody raced us: what was ready is leased
		}
	}
	s.down.note(now, tried, failed, time.Since(started))
	return leased, paused, failed.result(distinct(types))
}

// wakeGroups runs group_wake.lua for each of types, those that have had
// group limits (readyHeads tells), so that the groups whose wait ended
// have their jobs back in ready: a type whose ready jobs are all parked
// has no head, and no lease script would run to take them back. It says
// how many jobs came back. A type whose Redis fails joins failed.
func (s *Store) wakeGroups(ctx context.Context, now int64, types []string, failed typeErrs) (int64, error) {
	var back int64
	for _, t := range types {
		n, err := s.runGroupWake(ctx, s.keys.ofType(t), now)
		if err != nil {
			if ctx.Err() != nil {
				return back, ctx.Err()
			}
			failed[t] = s.fail("lease: wake groups", err)
			continue
		}
		back += n
	}
	return back, nil
}

// groupLimitedField is the flag of a type's stats hash set once its policy
// had a group limit (lua/type_set.lua).
const groupLimitedField = "glimited"

// readyHeads reads, in one round trip (one per master on Cluster), whether
// each type is paused and the first n members of its ready index, and
// returns the first n of the types not paused, merged in queue order.
// Paused types are left out here, not only in the script, so that the head
// of a paused type never stands in the way of another type's ready jobs.
// It also returns the paused types, and the types that have had group
// limits (for wakeGroups). Types in failed are not read; a type
// whose read fails is added to failed and left out.
func (s *Store) readyHeads(ctx context.Context, types []string, n int, failed typeErrs) ([]entry, []string, []string, error) {
	if len(failed) > 0 {
		types = slices.DeleteFunc(slices.Clone(types), failed.has)
	}
	if len(types) == 0 {
		return nil, nil, nil, nil
	}
	pipe := s.rdb.Pipeline()
	flags := make([]*redis.SliceCmd, len(types)) // HMGET: a missing field is nil, no error
	heads := make([]*redis.ZSliceCmd, len(types))
	for i, t := range types {
		tk := s.keys.ofType(t)
		flags[i] = pipe.HMGet(ctx, tk.stats(), pausedField, groupLimitedField)
		heads[i] = pipe.ZRangeWithScores(ctx, tk.ready(), 0, int64(n-1))
	}
	_, err := pipe.Exec(ctx)
	if err := s.perType(ctx, "read ready jobs", err, types, func(i int) []redis.Cmder { return []redis.Cmder{flags[i], heads[i]} }, failed); err != nil {
		return nil, nil, nil, err
	}
	var all []entry
	var paused, grouped []string
	for i, t := range types {
		if failed.has(t) {
			continue
		}
		f := flags[i].Val()
		if isPaused(f[0]) {
			paused = append(paused, t)
			continue
		}
		if f[1] == "1" {
			grouped = append(grouped, t)
		}
		all = toEntries(heads[i].Val(), t, all)
	}
	if len(types) > 1 {
		slices.SortFunc(all, compareEntries)
	}
	return all[:min(n, len(all))], paused, grouped, nil
}

type entryGroup struct {
	jobType string
	members []string
}

// groupEntries groups index entries by type, types in order of first entry.
func groupEntries(entries []entry) []entryGroup {
	pos := map[string]int{}
	var groups []entryGroup
	for _, e := range entries {
		i, ok := pos[e.jobType]
		if !ok {
			i = len(groups)
			pos[e.jobType] = i
			groups = append(groups, entryGroup{jobType: e.jobType})
		}
		groups[i].members = append(groups[i].members, e.member)
	}
	return groups
}

// Apply runs lease holders' operations of one kind: one script per job type.
func (s *Store) Apply(ctx context.Context, now int64, op core.Op, ops []service.StoreOp) ([]service.Applied, error) {
	call, ok := opScripts[op]
	if !ok {
		return nil, bus.Errorf(bus.CodeInvalid, "op: %q is not an operation", op)
	}
	out := make([]service.Applied, len(ops))
	types, err := s.typesOf(ctx, ops)
	if err != nil {
		return nil, err
	}
	groups := map[string][]int{}
	var order []string
	for i, t := range types {
		if t == "" {
			out[i].Err = core.JobNotFound(ops[i].ID)
			continue
		}
		if _, seen := groups[t]; !seen {
			order = append(order, t)
		}
		groups[t] = append(groups[t], i)
	}
	var handedIn []int // the ops whose scripts recorded hand-overs
	var handedTypes []string
	for _, t := range order {
		idx := groups[t]
		group := make([]*service.StoreOp, len(idx))
		for n, i := range idx {
			group[n] = &ops[i]
		}
		res, err := s.runOps(ctx, call, s.keys.ofType(t), now, group)
		if err != nil {
			return nil, s.fail(string(op), err)
		}
		handed := false
		for n, i := range idx {
			out[i].Settled = res[n].released
			// a completion's hand-overs, or a failure for good's (which
			// records one per dependent when it has any)
			if res[n].handed > 0 || res[n].code == codeFailed || res[n].code == codeFailedRemoved {
				handed, handedIn = true, append(handedIn, i)
			}
			switch res[n].code {
			case codeNoJob:
				out[i].Err = core.JobNotFound(ops[i].ID)
			case codeNotHolder:
				out[i].Err = bus.Errorf(bus.CodeConflict, "job %d: lease %q is not the job's current lease (it expired and the job went back, or the job was moved by hand)", ops[i].ID, ops[i].Lease)
			default:
				if ops[i].Bare && op == core.OpComplete {
					res[n].job = completedBare(ops[i].ID, t) // no row replied
				}
				out[i].Job = &res[n].job
				out[i].Repeated = res[n].code == codeRepeated
				if res[n].code == codeCompletedRemoved || res[n].code == codeFailedRemoved {
					out[i].Removed = true
				}
			}
		}
		if handed {
			handedTypes = append(handedTypes, t)
		}
	}
	if len(handedTypes) > 0 {
		// Done right after, in the other slots; a failure here leaves them
		// recorded for the leader's sweep (HandOver). What they moved goes
		// out with the last op that recorded some (which op caused which
		// is not kept), after its own event.
		moved, _ := s.finishHandovers(ctx, now, handedTypes)
		last := handedIn[len(handedIn)-1]
		if out[last].Err == nil {
			out[last].Settled = append(out[last].Settled, moved...)
		} else {
			s.tellSettled(moved)
		}
	}
	return out, nil
}

// typesOf returns each op's job type: the one given, or the one on record
// ("" when the id is unknown), looked up for all in one call.
func (s *Store) typesOf(ctx context.Context, ops []service.StoreOp) ([]string, error) {
	types := make([]string, len(ops))
	var lookup []int
	for i, o := range ops {
		types[i] = o.Type
		if o.Type == "" {
			lookup = append(lookup, i)
		}
	}
	if len(lookup) == 0 {
		return types, nil
	}
	ids := make([]int64, len(lookup))
	for n, i := range lookup {
		ids[n] = ops[i].ID
	}
	found, err := s.typesOfIDs(ctx, ids)
	if err != nil {
		return nil, s.fail("find job types", err)
	}
	for n, i := range lookup {
		types[i] = found[n]
	}
	return types, nil
}

// Rescue takes back jobs whose lease ran out: to inactive within their stall
// limit, else as a failed attempt (see rescueExpired). Types whose Redis
// fails are skipped, as sweep says.
func (s *Store) Rescue(ctx context.Context, now int64, limit, stallLimit int) ([]core.Job, int64, error) {
	return s.sweep(ctx, now, limit, typeKeys.leases, func(tk typeKeys, ids []int64) (int64, []core.Job, error) {
		next, jobs, err := s.runRescueExpired(ctx, tk, now, stallLimit, ids)
		if err != nil {
			return 0, nil, s.fail("rescue", err)
		}
		if i := slices.IndexFunc(jobs, func(j core.Job) bool { return j.State == core.StateFailed }); i >= 0 {
			s.settleAfter(ctx, now, jobs[i].Type) // failed for good: those waiting apply their rule
		}
		return next, jobs, nil
	})
}
