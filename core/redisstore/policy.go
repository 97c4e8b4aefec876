package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
)

// A type's policy (DESIGN §10.1) lives in its own slot (keys.go: policy,
// starts, and the flag limited in stats), so that the lease scripts
// enforce it without a cross-slot call; lua/type_set.lua stores it.

// SetType stores a type's policy, replacing the one it had; a policy that
// sets nothing removes it. When its aging changed, it re-ranks the type's
// ready jobs, in bounded steps. The type joins the types first, as a paused
// one does, so that types, stats and type_list list it before it has jobs.
func (s *Store) SetType(ctx context.Context, p *core.TypePolicy) error {
	if err := s.rdb.SAdd(ctx, s.keys.types(), p.Type).Err(); err != nil {
		return s.fail("type_set: list type", err)
	}
	tk := s.keys.ofType(p.Type)
	reaged, err := s.runTypeSet(ctx, tk, p)
	if err != nil {
		return s.fail("type_set", err)
	}
	if !reaged {
		return nil
	}
	// The type's ready jobs take the new aging's scores, rerankBatch at a
	// time. Cut short (Redis failed), the rest keep the old scores until
	// the next type_set of the type, which walks them all again.
	for after := (*jobsPlace)(nil); ; {
		if after, err = s.runAgingRerank(ctx, tk, after, rerankBatch); err != nil {
			return s.fail("type_set: re-rank for the new aging", err)
		}
		if after == nil {
			return nil
		}
	}
}

// rerankBatch is how many jobs one aging_rerank.lua call looks at: a few
// ms of Redis each, so that leases go on between the calls.
const rerankBatch = 1000

// TypePolicy reads a type's policy: nil when it has none.
func (s *Store) TypePolicy(ctx context.Context, jobType string) (*core.TypePolicy, error) {
	b, err := s.rdb.HGet(ctx, s.keys.ofType(jobType).policy(), policyJSON).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, s.fail("type_get", err)
	}
	return decodePolicy(jobType, b)
}

// TypePolicies reads the policy of every type that has one, sorted by
// type: one read of the types, then one round trip (one per master on
// Cluster).
func (s *Store) TypePolicies(ctx context.Context) ([]core.TypePolicy, error) {
	types, err := s.Types(ctx)
	if err != nil || len(types) == 0 {
		return nil, err
	}
	pipe := s.rdb.Pipeline()
	reads := make([]*redis.StringCmd, len(types))
	for i, t := range types {
		reads[i] = pipe.HGet(ctx, s.keys.ofType(t).policy(), policyJSON)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, s.fail("type_list", err)
	}
	var out []core.TypePolicy
	for i, r := range reads {
		b, err := r.Bytes()
		if err != nil {
			continue // redis.Nil: no policy
		}
		p, err := decodePolicy(types[i], b)
		if err != nil {
			return nil, err
		}
		out = append(out, *p)
	}
	return out, nil
}

// policyJSON is the field of a type's policy hash that holds the whole
// policy as JSON.
const policyJSON = "json"

func decodePolicy(jobType string, b []byte) (*core.TypePolicy, error) {
	var p core.TypePolicy
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, bus.Errorf(bus.CodeInternal, "type %s: its stored policy does not decode: %v", jobType, err)
	}
	return &p, nil
}

// Holding reads what may hold an inactive job back (explain): whether its
// type is paused, the type's active jobs, the starts in its rate's window
// of per ms before now (none read when per is 0) and the oldest of them,
// and how many ready jobs of the type rank before the job. Reads only,
// in two round trips to the type's slot.
//
// For a job of a group, it also reads the group's active jobs that hold a
// slot, its starts in its group rate's window of groupPer ms before now
// (none read when groupPer is 0) and the oldest of them, and whether the
// job is parked (lua/includes/group_limit.lua); for any, the type's
// parked jobs.
func (s *Store) Holding(ctx context.Context, job *core.Job, now, per, groupPer int64) (*service.Holding, error) {
	tk := s.keys.ofType(job.Type)
	pipe := s.rdb.Pipeline()
	paused := pipe.HGet(ctx, tk.stats(), pausedField)
	parked := pipe.HGet(ctx, tk.stats(), parkedField)
	var gActive, gStarts *redis.IntCmd
	var gOldest *redis.ZSliceCmd
	var inPark *redis.FloatCmd
	if g := job.Group; g != "" {
		gActive = pipe.SCard(ctx, tk.groupActive(g))
		if groupPer > 0 {
			from := "(" + strconv.FormatInt(now-groupPer, 10)
			gStarts = pipe.ZCount(ctx, tk.groupStarts(g), from, "+inf")
			gOldest = pipe.ZRangeByScoreWithScores(ctx, tk.groupStarts(g), &redis.ZRangeBy{Min: from, Max: "+inf", Count: 1})
		}
	}
	active := pipe.ZCard(ctx, tk.leases())
	member := pipe.HGet(ctx, tk.job(job.ID), "rmember")
	var starts *redis.IntCmd
	var oldest *redis.ZSliceCmd
	if per > 0 {
		from := "(" + strconv.FormatInt(now-per, 10)
		starts = pipe.ZCount(ctx, tk.starts(), from, "+inf")
		oldest = pipe.ZRangeByScoreWithScores(ctx, tk.starts(), &redis.ZRangeBy{Min: from, Max: "+inf", Count: 1})
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, s.fail("explain", err)
	}
	h := &service.Holding{Paused: isPaused(paused.Val()), Active: active.Val(), Ahead: -1, Parked: parkedOf(parked.Val())}
	if gActive != nil {
		h.GroupActive = gActive.Val()
	}
	if gStarts != nil {
		h.GroupStarts = gStarts.Val()
		if z := gOldest.Val(); len(z) > 0 {
			h.GroupOldestStart = int64(z[0].Score)
		}
	}
	if starts != nil {
		h.Starts = starts.Val()
		if z := oldest.Val(); len(z) > 0 {
			h.OldestStart = int64(z[0].Score)
		}
	}
	if m := member.Val(); m != "" {
		rank, err := s.rdb.ZRank(ctx, tk.ready(), m).Result()
		switch {
		case err == nil:
			h.Ahead = rank
		case errors.Is(err, redis.Nil) && job.Group != "":
			inPark = s.rdb.ZScore(ctx, tk.parked(job.Group), m)
			if err := inPark.Err(); err != nil && !errors.Is(err, redis.Nil) {
				return nil, s.fail("explain", err)
			}
			h.GroupParked = inPark.Err() == nil
		case !errors.Is(err, redis.Nil):
			return nil, s.fail("explain", err)
		}
	}
	return h, nil
}
