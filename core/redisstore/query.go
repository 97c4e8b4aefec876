package redisstore

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
)

// The reads of ranges, counts, ids and stats. Each state has its own index
// per type (see keys.go), ordered the way that state is naturally looked at:
// inactive by queue position, delayed by due time, active by lease expiry,
// complete, failed and cancelled by finish time; no state means every job,
// by creation time (lua/includes/jobs_order.lua).
// Reads over several types merge the per-type indexes in that order.

// indexOf is the key of the index of a state ("" for every job).
func indexOf(tk typeKeys, state core.State) string {
	switch state {
	case core.StateInactive:
		return tk.ready()
	case core.StateDelayed:
		return tk.due()
	case core.StateActive:
		return tk.leases()
	case core.StateComplete:
		return tk.complete()
	case core.StateFailed:
		return tk.failed()
	case core.StateCancelled:
		return tk.cancelled()
	case core.StateWaiting:
		return tk.waiting()
	}
	return tk.jobs()
}

// memberID is the job id in an index member: ready's members are
// "<seq>:<id>", due's the id zero-padded, the others the id.
func memberID(member string) int64 {
	if strings.Contains(member, ":") {
		return readyID(member)
	}
	n, _ := strconv.ParseInt(member, 10, 64)
	return n
}

// entry is one job in a merged index read.
type entry struct {
	score   float64
	member  string
	jobType string
}

// scan reads positions from..to (to = -1: to the end) of the index of state
// over the given types, merged in the index's order.
func (s *Store) scan(ctx context.Context, types []string, state core.State, from, to int64, desc bool) ([]entry, error) {
	if len(types) == 1 {
		// One index: Redis pages it itself.
		tk := s.keys.ofType(types[0])
		zr := redis.ZRangeArgs{Key: indexOf(tk, state), Start: from, Stop: to, Rev: desc}
		zs, err := s.rdb.ZRangeArgsWithScores(ctx, zr).Result()
		if err != nil {
			return nil, s.fail("range", err)
		}
		return toEntries(zs, types[0], nil), nil
	}
	// Several: read each from the start to `to`, merge, then page. A page
	// past the end reads nothing, and `to` shrinks to the last position, so
	// that a request for positions near MaxInt64 costs a count per type, not
	// a read of every index.
	sizes, err := s.sizes(ctx, types, state)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, n := range sizes {
		total += n
	}
	if from >= total {
		return nil, nil
	}
	if to < 0 || to >= total {
		to = total - 1
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.ZSliceCmd, len(types))
	for i, t := range types {
		zr := redis.ZRangeArgs{Key: indexOf(s.keys.ofType(t), state), Start: 0, Stop: to, Rev: desc}
		cmds[i] = pipe.ZRangeArgsWithScores(ctx, zr)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, s.fail("range", err)
	}
	var all []entry
	for i, t := range types {
		all = toEntries(cmds[i].Val(), t, all)
	}
	slices.SortFunc(all, func(a, b entry) int {
		c := compareEntries(a, b)
		if desc {
			return -c
		}
		return c
	})
	if from >= int64(len(all)) {
		return nil, nil
	}
	// to < len-1 rather than to+1 < len: to may be MaxInt64 (a client's
	// number), and to+1 would wrap to a negative bound.
	if to >= 0 && to < int64(len(all))-1 {
		all = all[:to+1]
	}
	return all[from:], nil
}

func compareEntries(a, b entry) int {
	switch {
	case a.score < b.score:
		return -1
	case a.score > b.score:
		return 1
	}
	return strings.Compare(a.member, b.member)
}

func toEntries(zs []redis.Z, jobType string, into []entry) []entry {
	for _, z := range zs {
		into = append(into, entry{score: z.Score, member: z.Member.(string), jobType: jobType})
	}
	return into
}

// typesFor is the one type asked for, or every type.
func (s *Store) typesFor(ctx context.Context, jobType string) ([]string, error) {
	if jobType != "" {
		return []string{jobType}, nil
	}
	return s.Types(ctx)
}

// Range reads a page of a state's index, of one type or of every type
// merged: by position (range.go has the page by cursor), then the jobs'
// rows in one more round trip.
func (s *Store) Range(ctx context.Context, p *service.RangeParams) (*service.RangePage, error) {
	types, err := s.typesFor(ctx, p.Type)
	if err != nil || len(types) == 0 {
		return &service.RangePage{}, err
	}
	var entries []entry
	more := false
	if p.Limit > 0 {
		entries, more, err = s.scanAfter(ctx, types, p.State, p.After, p.Limit, p.Desc)
	} else {
		entries, err = s.scan(ctx, types, p.State, p.From, p.To, p.Desc)
		more = int64(len(entries)) == p.To-p.From+1
	}
	if err != nil {
		return nil, err
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.SliceCmd, len(entries))
	for i, e := range entries {
		cmds[i] = pipe.HMGet(ctx, s.keys.ofType(e.jobType).job(memberID(e.member)), rowWithData...)
	}
	if len(entries) > 0 {
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, s.fail("range jobs", err)
		}
	}
	page := &service.RangePage{Jobs: make([]core.Job, 0, len(entries)), More: more}
	for i, c := range cmds {
		if j, ok := decodeRow(c.Val()); ok { // else removed between the two reads
			page.Jobs = append(page.Jobs, j)
			page.Places = append(page.Places, core.RangeCursor{State: p.State, Score: entries[i].score, Member: entries[i].member})
		}
	}
	return page, nil
}

// IDs lists up to limit ids of a state from a cursor on: type by type in
// name order, each type's index from the cursor's position. Two round trips
// whatever the number of types: the sizes of the indexes, then the slices
// that fill the page. A listing is no snapshot: a job that changes state
// meanwhile may be missed, or listed again in another state.
func (s *Store) IDs(ctx context.Context, state core.State, from core.IDsCursor, limit int) ([]int64, *core.IDsCursor, error) {
	types, err := s.Types(ctx)
	if err != nil {
		return nil, nil, err
	}
	start := from.Position
	i, found := slices.BinarySearch(types, from.Type)
	if !found { // "" or a type that is gone: the next type from its start
		start = 0
	}
	types = types[i:]
	sizes, err := s.sizes(ctx, types, state)
	if err != nil {
		return nil, nil, err
	}
	type slice struct {
		n        int // index into types
		pos, len int64
	}
	var plan []slice
	want := int64(limit)
	for n := range types {
		pos := int64(0)
		if n == 0 {
			pos = start
		}
		if take := min(sizes[n]-pos, want); take > 0 {
			plan = append(plan, slice{n: n, pos: pos, len: take})
			want -= take
		}
		if want == 0 {
			break
		}
	}
	ids := make([]int64, 0, int64(limit)-want)
	if len(plan) == 0 {
		return ids, nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringSliceCmd, len(plan))
	for k, p := range plan {
		cmds[k] = pipe.ZRange(ctx, indexOf(s.keys.ofType(types[p.n]), state), p.pos, p.pos+p.len-1)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, nil, s.fail("ids", err)
	}
	for _, c := range cmds {
		for _, m := range c.Val() {
			ids = append(ids, memberID(m))
		}
	}
	if want > 0 {
		return ids, nil, nil // every index was read to its end
	}
	last := plan[len(plan)-1]
	next := &core.IDsCursor{Type: types[last.n], Position: last.pos + int64(len(cmds[len(cmds)-1].Val()))}
	if last.n == len(types)-1 && next.Position >= sizes[last.n] {
		return ids, nil, nil // the page ends with the last index
	}
	return ids, next, nil
}

// sizes counts the index of a state in each type, in one round trip.
func (s *Store) sizes(ctx context.Context, types []string, state core.State) ([]int64, error) {
	if len(types) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.IntCmd, len(types))
	for i, t := range types {
		cmds[i] = pipe.ZCard(ctx, indexOf(s.keys.ofType(t), state))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, s.fail("count ids", err)
	}
	sizes := make([]int64, len(types))
	for i, c := range cmds {
		sizes[i] = c.Val()
	}
	return sizes, nil
}

// Count counts the jobs of a state (or all) and a type (or all); the
// inactive jobs parked by their group's limit count as inactive, as in
// Stats. A type whose Redis fails (on Cluster: its master is down) fails
// the count, with an error that names it: a count that left it out would
// read as a true total.
func (s *Store) Count(ctx context.Context, state core.State, jobType string) (int64, error) {
	types, err := s.typesFor(ctx, jobType)
	if err != nil {
		return 0, err
	}
	if len(types) == 0 {
		return 0, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.IntCmd, len(types))
	parked := make([]*redis.SliceCmd, len(types))
	for i, t := range types {
		tk := s.keys.ofType(t)
		cmds[i] = pipe.ZCard(ctx, indexOf(tk, state))
		if state == core.StateInactive {
			parked[i] = pipe.HMGet(ctx, tk.stats(), parkedField)
		}
	}
	failed := typeErrs{}
	_, err = pipe.Exec(ctx)
	cmdsOf := func(i int) []redis.Cmder {
		if parked[i] == nil {
			return []redis.Cmder{cmds[i]}
		}
		return []redis.Cmder{cmds[i], parked[i]}
	}
	if err := s.perType(ctx, "count", err, types, cmdsOf, failed); err != nil {
		return 0, err
	}
	if err := failed.whole(); err != nil {
		return 0, err
	}
	var n int64
	for i, c := range cmds {
		n += c.Val()
		if parked[i] != nil {
			n += parkedOf(parked[i].Val()[0])
		}
	}
	return n, nil
}

// parkedField is the field of a type's stats hash that counts its inactive
// jobs parked by their group's limit (lua/includes/group_limit.lua).
const parkedField = "parked"

// parkedOf reads parkedField from an HMGET: 0 when absent.
func parkedOf(v any) int64 {
	s, _ := v.(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// Stats counts every state per type (the inactive ones parked by their
// group's limit too), adds up the work time, and lists the
// paused types. A type whose Redis fails (on Cluster: its master is down)
// is left out of the counts and the totals, and the error is a
// *service.TypesError that names it, beside the stats of the other types;
// when every type failed, it is the plain coded error and no stats.
func (s *Store) Stats(ctx context.Context) (*core.Stats, error) {
	types, err := s.Types(ctx)
	if err != nil {
		return nil, err
	}
	st := &core.Stats{Types: make(map[string]core.StateCounts, len(types))}
	if len(types) == 0 {
		return st, nil
	}
	pipe := s.rdb.Pipeline()
	counts := make([][]*redis.IntCmd, len(types))
	fields := make([]*redis.SliceCmd, len(types)) // HMGET: a missing field is nil, no error
	heads := make([]*redis.StringSliceCmd, len(types))
	for i, t := range types {
		tk := s.keys.ofType(t)
		for _, state := range core.States {
			counts[i] = append(counts[i], pipe.ZCard(ctx, indexOf(tk, state)))
		}
		fields[i] = pipe.HMGet(ctx, tk.stats(), "work_time", pausedField, parkedField)
		heads[i] = pipe.ZRange(ctx, tk.ready(), 0, 0)
	}
	failed := typeErrs{}
	_, err = pipe.Exec(ctx)
	cmdsOf := func(i int) []redis.Cmder {
		cmds := []redis.Cmder{fields[i], heads[i]}
		for _, c := range counts[i] {
			cmds = append(cmds, c)
		}
		return cmds
	}
	if err := s.perType(ctx, "stats", err, types, cmdsOf, failed); err != nil {
		return nil, err
	}
	if err := s.readySince(ctx, st, types, heads, failed); err != nil {
		return nil, err
	}
	for i, t := range types {
		if failed.has(t) {
			continue
		}
		f := fields[i].Val()
		var tc core.StateCounts
		for j, state := range core.States {
			n := counts[i][j].Val()
			if state == core.StateInactive {
				n += parkedOf(f[2]) // inactive, out of ready while their group is at its limit
			}
			tc.Add(state, n)
			st.Add(state, n)
		}
		st.Types[t] = tc
		w, _ := f[0].(string)
		n, _ := strconv.ParseInt(w, 10, 64)
		st.WorkTime += n
		if isPaused(f[1]) {
			st.Paused = append(st.Paused, t)
		}
	}
	if err := failed.result(len(types)); err != nil {
		var te *service.TypesError
		if !errors.As(err, &te) {
			return nil, err // every type failed
		}
		return st, err
	}
	return st, nil
}

// readySince fills st.ReadySince: for each type with jobs waiting, the
// promote_at of the job at the head of its ready queue (the next to run),
// one more round trip. heads are the ZRANGE 0 0 of each type's ready.
// Types in failed are left out; a type whose read fails joins them.
func (s *Store) readySince(ctx context.Context, st *core.Stats, types []string, heads []*redis.StringSliceCmd, failed typeErrs) error {
	pipe := s.rdb.Pipeline()
	var read []string
	var cmds []*redis.StringCmd
	for i, t := range types {
		if h := heads[i].Val(); !failed.has(t) && len(h) == 1 {
			read = append(read, t)
			cmds = append(cmds, pipe.HGet(ctx, s.keys.ofType(t).job(readyID(h[0])), "promote_at"))
		}
	}
	if len(read) == 0 {
		return nil
	}
	// A head that left meanwhile reads as redis.Nil: that type is skipped.
	_, err := pipe.Exec(ctx)
	if err := s.perType(ctx, "stats: ready heads", err, read, func(i int) []redis.Cmder { return []redis.Cmder{cmds[i]} }, failed); err != nil {
		return err
	}
	for i, t := range read {
		if ms, err := cmds[i].Int64(); err == nil && !failed.has(t) {
			if st.ReadySince == nil {
				st.ReadySince = make(map[string]int64, len(read))
			}
			st.ReadySince[t] = ms
		}
	}
	return nil
}
