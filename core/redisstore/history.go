package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/core"
)

// historyTTL keeps a day of minutes, as core.MaxHistoryMinutes reads.
const historyTTL = 25 * 60 * 60

// AddHistory adds counts to jobType's per-minute history (lua/history_add.lua).
// Minute is At / 60000.
func (s *Store) AddHistory(ctx context.Context, jobType string, counts []core.MinuteCounts) error {
	if len(counts) == 0 {
		return nil
	}
	tk := s.keys.ofType(jobType)
	keys := make([]string, len(counts))
	args := make([]any, 0, 1+3*len(counts))
	args = append(args, historyTTL)
	for i, c := range counts {
		keys[i] = tk.history(c.At / 60000)
		args = append(args, c.Created, c.Completed, c.Failed)
	}
	if err := s.evalNoWait(ctx, addHistory, keys, args...).Err(); err != nil {
		return s.fail("add history", err)
	}
	return nil
}

// History reads the minutes from..to (unix minutes, inclusive) of types,
// summed: one pipelined round trip.
func (s *Store) History(ctx context.Context, types []string, from, to int64) ([]core.MinuteCounts, error) {
	out := make([]core.MinuteCounts, 0, to-from+1)
	for m := from; m <= to; m++ {
		out = append(out, core.MinuteCounts{At: m * 60000})
	}
	if len(types) == 0 {
		return out, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([][]*redis.SliceCmd, len(types))
	for i, t := range types {
		tk := s.keys.ofType(t)
		for m := from; m <= to; m++ {
			cmds[i] = append(cmds[i], pipe.HMGet(ctx, tk.history(m), "created", "completed", "failed"))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, s.fail("read history", err)
	}
	for i := range types {
		for j, cmd := range cmds[i] {
			v := cmd.Val()
			out[j].Created += num(v[0])
			out[j].Completed += num(v[1])
			out[j].Failed += num(v[2])
		}
	}
	return out, nil
}
