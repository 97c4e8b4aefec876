package redisstore

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/redis/go-redis/v9"

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
		b, err := json.Marshal(hb)
		if err != nil {
			return err
		}
		body = string(b)
	}
	keys := []string{s.keys.global("workers"), s.keys.global("workers_seen")}
	if err := s.evalNoWait(ctx, heartbeat, keys, hb.Worker, body, now, now-workersForget).Err(); err != nil {
		return s.fail("heartbeat", err)
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
