package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// workersForget drops a worker not heard from in an hour from Redis (it
// left the workers list long before, after core.WorkerSeenWithin).
const workersForget = 3600_000 // ms

// Heartbeat stores a worker's heartbeat as heard at now, or forgets it
// when it is gone (lua/heartbeat.lua).
func (s *Store) Heartbeat(ctx context.Context, now int64, hb *core.Heartbeat) error {
	body := ""
	if !hb.Gone {
		listed := *hb
		listed.Instance = "" // kept apart: never listed
		b, err := json.Marshal(&listed)
		if err != nil {
			return err
		}
		body = string(b)
	}
	keys := []string{s.keys.global("workers"), s.keys.global("workers_seen"),
		s.keys.global("workers_silent"), s.keys.global("workers_instance"), s.keys.global("workers_clock")}
	n, err := s.evalNoWait(ctx, heartbeat, keys, hb.Worker, body, now, now-workersForget, hb.Instance, heartbeatGap).Int()
	if err != nil {
		return s.fail("heartbeat", err)
	}
	if n < 0 {
		return bus.Errorf(bus.CodeConflict, "worker %q: gone from another process: its instance is not the one its last heartbeat gave", hb.Worker)
	}
	return nil
}

// Workers returns the workers heard from since `since` (unix ms), by id.
func (s *Store) Workers(ctx context.Context, since int64) ([]core.WorkerInfo, error) {
	seen, err := s.rdb.ZRangeByScoreWithScores(ctx, s.keys.global("workers_seen"), &redis.ZRangeBy{
		Min: strconv.FormatInt(since, 10), Max: "+inf"}).Result()
	if err != nil {
		return nil, s.fail("workers", err)
	}
	if len(seen) == 0 {
		return nil, nil
	}
	ids := make([]string, len(seen))
	for i, z := range seen {
		ids[i] = z.Member.(string)
	}
	bodies, err := s.rdb.HMGet(ctx, s.keys.global("workers"), ids...).Result()
	if err != nil {
		return nil, s.fail("workers", err)
	}
	out := make([]core.WorkerInfo, 0, len(ids))
	for i, b := range bodies {
		str, ok := b.(string)
		if !ok {
			continue // gone between the two reads
		}
		var w core.WorkerInfo
		if err := json.Unmarshal([]byte(str), &w.Heartbeat); err != nil {
			continue // not ours to read: skipped, not an error of the list
		}
		w.SeenAt = int64(seen[i].Score)
		out = append(out, w)
	}
	return out, nil
}

// expireChunk bounds the candidates of one expire_leases call.
const expireChunk = 500

// heartbeatGap is the longest pause between two heartbeats stored (of any
// worker) that keeps their run unbroken: five beats. A worker is judged
// silent only over a time the whole of which heartbeats were being stored:
// after Redis stalled, or every core was down, no worker could be heard,
// and none is silent until the run has lasted core.WorkerSilentAfter.
const heartbeatGap = 5 * core.HeartbeatEvery

// ExpireSilent ends the leases of the active jobs whose worker is silent:
// heard from within workersForget but not since now - WorkerSilentAfter,
// and not found silent before at that same last heartbeat
// (lua/expire_leases.lua, per type the worker said it handles). The rescue
// that follows takes those jobs back as stalls. It returns how many leases
// it ended, and when the first live worker turns silent if it is not heard
// from again (0: no worker is live). A worker whose types could not all be
// looked at (a Redis Cluster master down) is tried again next time; the
// error says which.
func (s *Store) ExpireSilent(ctx context.Context, now int64) (ended int, next int64, err error) {
	silentBefore := now - core.WorkerSilentAfter
	seenKey, silentKey := s.keys.global("workers_seen"), s.keys.global("workers_silent")
	pipe := s.rdb.Pipeline()
	silent := pipe.ZRangeByScoreWithScores(ctx, seenKey, &redis.ZRangeBy{
		Min: strconv.FormatInt(now-workersForget, 10), Max: strconv.FormatInt(silentBefore, 10)})
	live := pipe.ZRangeByScoreWithScores(ctx, seenKey, &redis.ZRangeBy{
		Min: "(" + strconv.FormatInt(silentBefore, 10), Max: "+inf", Count: 1})
	clock := pipe.HMGet(ctx, s.keys.global("workers_clock"), "last", "since")
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, 0, s.fail("find silent workers", err)
	}
	if l := live.Val(); len(l) > 0 {
		next = int64(l[0].Score) + core.WorkerSilentAfter
	}
	// Only over an unbroken run of heartbeats, as long as the silence, and
	// going on now (else a worker that died alone is judged once another
	// beats again, a run later).
	last, since := num(clock.Val()[0]), num(clock.Val()[1])
	if len(silent.Val()) == 0 || now-last > heartbeatGap || since > silentBefore {
		return 0, next, nil
	}
	ids := make([]string, len(silent.Val()))
	for i, z := range silent.Val() {
		ids[i] = z.Member.(string)
	}
	pipe = s.rdb.Pipeline()
	marks := pipe.HMGet(ctx, silentKey, ids...)
	bodies := pipe.HMGet(ctx, s.keys.global("workers"), ids...)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, next, s.fail("find silent workers", err)
	}
	// The workers newly silent, and the types each said it handles.
	byType := map[string][]string{}
	seen := map[string]float64{}
	for i, z := range silent.Val() {
		if m, ok := marks.Val()[i].(string); ok && m == strconv.FormatFloat(z.Score, 'f', -1, 64) {
			continue // found silent at this very heartbeat before
		}
		var hb core.Heartbeat
		if b, ok := bodies.Val()[i].(string); ok {
			_ = json.Unmarshal([]byte(b), &hb) // unreadable: no types, nothing to end
		}
		for _, t := range hb.Types {
			byType[t] = append(byType[t], ids[i])
		}
		seen[ids[i]] = z.Score
	}
	var errs []error
	for t, workers := range byType {
		n, err := s.expireLeasesOf(ctx, s.keys.ofType(t), now, workers)
		ended += n
		if err != nil {
			errs = append(errs, s.fail("expire the leases of silent workers of "+t, err))
			for _, w := range workers {
				delete(seen, w) // tried again next time
			}
		}
	}
	if err := s.markSilent(ctx, seen); err != nil {
		errs = append(errs, s.fail("mark silent workers", err))
	}
	return ended, next, errors.Join(errs...)
}

// markSilent records that the rescue found workers (id → the seen score
// of their last heartbeat) silent at that heartbeat (lua/mark_silent.lua).
func (s *Store) markSilent(ctx context.Context, workers map[string]float64) error {
	if len(workers) == 0 {
		return nil
	}
	args := make([]any, 0, 2*len(workers))
	for w, score := range workers {
		args = append(args, w, strconv.FormatFloat(score, 'f', -1, 64))
	}
	return s.eval(ctx, markSilent, []string{s.keys.global("workers_seen"), s.keys.global("workers_silent")}, args...).Err()
}

// expireLeasesOf runs expire_leases.lua over every active job of one type,
// expireChunk candidates a call.
func (s *Store) expireLeasesOf(ctx context.Context, tk typeKeys, now int64, workers []string) (int, error) {
	active, err := s.rdb.ZRange(ctx, tk.leases(), 0, -1).Result()
	if err != nil || len(active) == 0 {
		return 0, err
	}
	ended := 0
	for len(active) > 0 {
		chunk := active[:min(len(active), expireChunk)]
		active = active[len(chunk):]
		args := make([]any, 0, 2+len(workers)+len(chunk))
		args = append(args, now, len(workers))
		for _, w := range workers {
			args = append(args, w)
		}
		for _, id := range chunk {
			args = append(args, id)
		}
		n, err := s.eval(ctx, expireLeases, append(tk.fixed(), tk.job(0)), args...).Int()
		ended += n
		if err != nil {
			return ended, err
		}
	}
	return ended, nil
}
