package redisstore

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/core"
)

// historyTTL keeps a day of minutes, as core.MaxHistoryMinutes reads, and
// historyHourTTL eight days of hours, as core.MaxHistoryHours reads.
const (
	historyTTL     = 25 * 60 * 60
	historyHourTTL = 8 * 24 * 60 * 60
)

// historyFields are the fields of a minute's or an hour's hash, in the
// order History reads them: the counts, the depth sample, the wait buckets.
var historyFields = func() []string {
	f := []string{"created", "completed", "failed", "started", "waiting"}
	for b := range len(core.WaitBounds) + 1 {
		f = append(f, "w"+strconv.Itoa(b))
	}
	return f
}()

// AddHistory adds counts to jobType's per-minute and per-hour history
// (lua/history_add.lua). Minute is At / 60000; a Waiting of -1 is no
// sample; Waits, when given, has a count per core.WaitBounds bucket.
func (s *Store) AddHistory(ctx context.Context, jobType string, counts []core.MinuteCounts) error {
	if len(counts) == 0 {
		return nil
	}
	n := len(core.WaitBounds) + 1
	tk := s.keys.ofType(jobType)
	keys := make([]string, 0, 2*len(counts))
	args := make([]any, 0, 3+(5+n)*len(counts))
	args = append(args, historyTTL, historyHourTTL, n)
	for _, c := range counts {
		keys = append(keys, tk.history(c.At/60000), tk.historyHour(c.At/3_600_000))
		args = append(args, c.Created, c.Completed, c.Failed, c.Started, c.Waiting)
		for b := range n {
			var w int64
			if b < len(c.Waits) {
				w = c.Waits[b]
			}
			args = append(args, w)
		}
	}
	if err := s.evalNoWait(ctx, addHistory, keys, args...).Err(); err != nil {
		return s.fail("add history", err)
	}
	return nil
}

// History reads the steps from..to (unix minutes, or hours when step is
// an hour in ms; inclusive) of types, summed: one pipelined round trip.
func (s *Store) History(ctx context.Context, types []string, step, from, to int64) ([]core.MinuteCounts, error) {
	n := len(core.WaitBounds) + 1
	out := make([]core.MinuteCounts, 0, to-from+1)
	for m := from; m <= to; m++ {
		out = append(out, core.MinuteCounts{At: m * step, Waits: make([]int64, n)})
	}
	if len(types) == 0 {
		return out, nil
	}
	key := func(tk typeKeys, m int64) string {
		if step == 3_600_000 {
			return tk.historyHour(m)
		}
		return tk.history(m)
	}
	pipe := s.rdb.Pipeline()
	cmds := make([][]*redis.SliceCmd, len(types))
	for i, t := range types {
		tk := s.keys.ofType(t)
		for m := from; m <= to; m++ {
			cmds[i] = append(cmds[i], pipe.HMGet(ctx, key(tk, m), historyFields...))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, s.fail("read history", err)
	}
	for i := range types {
		for j, cmd := range cmds[i] {
			v := cmd.Val()
			o := &out[j]
			o.Created += num(v[0])
			o.Completed += num(v[1])
			o.Failed += num(v[2])
			o.Started += num(v[3])
			o.Waiting += num(v[4])
			for b := range n {
				o.Waits[b] += num(v[5+b])
			}
		}
	}
	return out, nil
}
