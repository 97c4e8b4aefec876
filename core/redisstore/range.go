package redisstore

import (
	"context"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/core"
)

// A range by cursor: the jobs after a place (a score and a member, see
// core.RangeCursor) in a state's index, of one type or of every type
// merged. Each type's index gives at most limit+1 members after the place
// (lua/range_after.lua finds the place in O(log² n)), in one pipelined
// round trip for every type; the merge keeps the first limit. Work and
// memory are (types × limit), whatever the depth of the place, where a
// page by position over every type reads each index from its start.

// scanAfter reads the limit entries after the place `after` (nil: from the
// start) in the index of state over types, merged in the index's order,
// and whether more follow them.
func (s *Store) scanAfter(ctx context.Context, types []string, state core.State, after *core.RangeCursor, limit int, desc bool) ([]entry, bool, error) {
	n := int64(limit) + 1 // one more than the page: is there more?
	pipe := s.rdb.Pipeline()
	zcmds := make([]*redis.ZSliceCmd, len(types))
	ecmds := make([]*redis.Cmd, len(types))
	queue := func() {
		for i, t := range types {
			key := indexOf(s.keys.ofType(t), state)
			if after == nil {
				zcmds[i] = pipe.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: key, Start: 0, Stop: n - 1, Rev: desc})
				continue
			}
			ecmds[i] = rangeAfter.EvalSha(ctx, pipe, []string{key},
				strconv.FormatFloat(after.Score, 'f', -1, 64), after.Member, boolArg(desc), n)
		}
	}
	queue()
	_, err := pipe.Exec(ctx)
	if err != nil && after != nil && slices.ContainsFunc(ecmds, func(c *redis.Cmd) bool { return isNoScript(c.Err()) }) {
		// A Redis that has not seen the script yet (a restart, a new
		// master): load it and read again; a read is safe to repeat.
		if err := rangeAfter.Load(ctx, s.rdb).Err(); err != nil {
			return nil, false, s.fail("range after", err)
		}
		queue()
		_, err = pipe.Exec(ctx)
	}
	if err != nil {
		return nil, false, s.fail("range after", err)
	}
	var all []entry
	for i, t := range types {
		if after == nil {
			all = toEntries(zcmds[i].Val(), t, all)
			continue
		}
		flat, _ := ecmds[i].Slice()
		for k := 0; k+1 < len(flat); k += 2 {
			m, _ := flat[k].(string)
			sc, _ := flat[k+1].(string)
			f, _ := strconv.ParseFloat(sc, 64)
			all = append(all, entry{score: f, member: m, jobType: t})
		}
	}
	if len(types) > 1 {
		slices.SortFunc(all, func(a, b entry) int {
			c := compareEntries(a, b)
			if desc {
				return -c
			}
			return c
		})
	}
	if len(all) > limit {
		return all[:limit], true, nil
	}
	return all, false, nil
}

// boolArg is a flag as a script's ARGV takes it.
func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
