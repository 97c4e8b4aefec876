package redisstore

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/core/service"
)

// Shard isolation. Every key of a job type sits in the type's hash slot, so
// on Redis Cluster a type lives on one master, and a master that is down
// fails only its own types. The calls over several types (lease, promote,
// rescue, count, stats) read them in one pipeline, which go-redis's
// ClusterClient sends to each master apart, each master's commands failing
// or succeeding together; on a standalone Redis or Sentinel it is one round
// trip. After such a pipeline, perType sorts its failure out type by type:
// the types whose commands failed are skipped for this call and reported,
// the others go on. Nothing is read twice and no round trip is added when
// all goes well, so the hot path costs what it did.

// typeErrs holds, by type, the coded errors of the types a call skipped.
type typeErrs map[string]error

// has reports whether t failed already in this call.
func (e typeErrs) has(t string) bool {
	_, ok := e[t]
	return ok
}

// result is the error of a call over n distinct types: nil when none
// failed; the coded error naming every type when all n failed (the call
// served none); else a *service.TypesError, which says the call did its
// work for the types it does not list.
func (e typeErrs) result(n int) error {
	err := service.NewTypesError(e)
	if err == nil || len(e) < n {
		return err
	}
	return errors.Unwrap(err)
}

// whole is the coded error naming every failing type, for a call that
// cannot answer in part (a count is one number); nil when none failed.
func (e typeErrs) whole() error {
	if err := service.NewTypesError(e); err != nil {
		return errors.Unwrap(err)
	}
	return nil
}

// perType sorts out the error execErr of a pipeline of reads whose
// commands belong to types: cmdsOf(i) are the commands of types[i]. A type
// with a failed command (redis.Nil, a read that found nothing, is no
// failure) goes into failed, as op's coded error. It returns an error only
// when the whole call must fail: ctx is done, or the pipeline failed with
// no command of its own failing.
func (s *Store) perType(ctx context.Context, op string, execErr error, types []string, cmdsOf func(i int) []redis.Cmder, failed typeErrs) error {
	if execErr == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	found := false
	for i, t := range types {
		for _, c := range cmdsOf(i) {
			if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
				failed[t] = s.fail(op, err)
				found = true
				break
			}
		}
	}
	if found || errors.Is(execErr, redis.Nil) {
		return nil
	}
	return s.fail(op, execErr)
}

// distinct counts the distinct strings of list.
func distinct(list []string) int {
	seen := make(map[string]struct{}, len(list))
	for _, v := range list {
		seen[v] = struct{}{}
	}
	return len(seen)
}
