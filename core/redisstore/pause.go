package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// pausedField is the field of a type's stats hash that is "1" while the
// type is paused (lua/pause.lua sets and clears it, lua/lease.lua reads it).
const pausedField = "paused"

// Pause pauses (paused true) or resumes a job type: whether it changed. A
// type paused before it has any job joins the types first, so that types
// and stats list it, and the pause holds for the jobs it gets later.
func (s *Store) Pause(ctx context.Context, jobType string, paused bool) (bool, error) {
	if paused {
		// A crash before the script leaves a listed type with no job and
		// no pause: harmless, as after a create whose script failed.
		if err := s.rdb.SAdd(ctx, s.keys.types(), jobType).Err(); err != nil {
			return false, s.fail("pause: list type", err)
		}
	}
	changed, err := s.runPause(ctx, s.keys.ofType(jobType), paused)
	if err != nil {
		return false, s.fail("pause", err)
	}
	return changed, nil
}

// Paused returns those of types that are paused, in their order: one round
// trip.
func (s *Store) Paused(ctx context.Context, types []string) ([]string, error) {
	if len(types) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	flags := make([]*redis.SliceCmd, len(types))
	for i, t := range types {
		flags[i] = pipe.HMGet(ctx, s.keys.ofType(t).stats(), pausedField)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, s.fail("read paused types", err)
	}
	var paused []string
	for i, f := range flags {
		if isPaused(f.Val()[0]) {
			paused = append(paused, types[i])
		}
	}
	return paused, nil
}

// isPaused reads the paused field as HMGET returns it: "1", or nil when
// the type is not paused.
func isPaused(field any) bool { return field == "1" }
