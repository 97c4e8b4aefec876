package redisstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/bus"
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
//
// A master that is down refuses connections at once, but one that hangs
// (stopped, swapping, a long script) answers nothing until go-redis's read
// timeout, 3 s: every lease that names one of its types would wait that
// long (and with it the other leases of several types on the same core,
// which take turns: multiLease), and the promoter's promote and rescue
// calls (1 s each) would never finish. So lease, promote, rescue, the schedules' and the
// cleaner's reads remember a type whose Redis failed slowly (the call took
// slowFailure or more) and skip it, reporting the remembered error, for a
// while before they try it again: 2 s after a first failure, twice as
// long after each slow failure in a row (of a call that tried it again
// after the window, not of calls that ran beside the first), at most 10 s,
// which is also the
// longest a type whose master answers again waits to be served. A quick
// failure (a refused connection, CLUSTERDOWN, MOVED during a failover) is
// not remembered: trying again costs a round trip, and the type is served
// again as soon as its master (or the replica promoted) answers.

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

// distinct counts the distinct strings of list. Every lease calls it:
// a list of one, the most common, needs no set.
func distinct(list []string) int {
	if len(list) < 2 {
		return len(list)
	}
	seen := make(map[string]struct{}, len(list))
	for _, v := range list {
		seen[v] = struct{}{}
	}
	return len(seen)
}

// Retry windows of downTypes, in ms, and how long a call must have taken
// for its failed types to be remembered.
const (
	downRetryFirst = 2_000
	downRetryMax   = 10_000
	slowFailure    = 250 * time.Millisecond
)

// downTypes remembers the job types whose Redis failed in lease, promote
// or rescue, and until when those skip them. Its methods are safe for
// concurrent use. Times are the callers' now, in unix ms.
type downTypes struct {
	mu sync.Mutex // guards m
	m  map[string]downType
}

type downType struct {
	until  int64 // skipped before then
	window int64 // the last wait, doubled on the next failure
	err    error // the failure that put it down
}

// skip puts into failed, with the error remembered, those of types that
// are down at now, and returns the others, the ones to try, and when the
// call starts trying them (for note).
func (d *downTypes) skip(now int64, types []string, failed typeErrs) (try []string, started time.Time) {
	started = time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.m) == 0 {
		return types, started // the hot path: nothing is down
	}
	try = make([]string, 0, len(types))
	for _, t := range types {
		dt, ok := d.m[t]
		if !ok || now >= dt.until {
			try = append(try, t)
			continue
		}
		failed[t] = bus.Errorf(bus.CodeOf(dt.err), "not tried again for %d ms after: %s", dt.until-now, bus.MessageOf(dt.err))
	}
	return try, started
}

// note records the outcome of a call that tried types at now and took
// took: when it took slowFailure or more, a type in failed with
// unavailable (its Redis did not answer in time) is down for its next
// window; any other type tried is forgotten. A quick failure, and an
// internal error (a script failing), tell nothing of a master that hangs,
// so they put no type down. Call note only when the call got its answers,
// not when it gave up (ctx done): that tells nothing of the types.
func (d *downTypes) note(now int64, tried []string, failed typeErrs, took time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(failed) == 0 && len(d.m) == 0 {
		return // the hot path
	}
	slow := took >= slowFailure
	for _, t := range tried {
		err, down := failed[t]
		if !down || !slow || bus.CodeOf(err) != bus.CodeUnavailable {
			delete(d.m, t)
			continue
		}
		window := int64(downRetryFirst)
		if prev, ok := d.m[t]; ok {
			if prev.until > now {
				// put down while this call ran, by one beside it: the same
				// outage, one window (doubling per call in flight took a
				// type out for 8 s after a Redis down for 1)
				continue
			}
			window = min(2*prev.window, downRetryMax)
		}
		if d.m == nil {
			d.m = map[string]downType{}
		}
		d.m[t] = downType{until: now + window, window: window, err: err}
	}
}
