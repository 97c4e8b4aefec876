package service

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go"
)

// waitRoom holds lease requests that found nothing ready, per job type, and
// wakes them when a job of their type becomes ready through any core: it
// listens to the events that announce a job entering inactive (enqueue,
// promotion, failed_attempt, stalled), so no one polls Redis.
//
// A paused type's jobs wake no one: otherwise every job a producer adds to
// a paused type would send each of its waiting leases to Redis for
// nothing. What is paused is learnt from the store on each lease attempt
// (notePaused), never from queue.pause, whose events from several cores
// may arrive out of order; a resume (ours, or queue.resume from another
// core) clears the mark and wakes the type's waiters. A mark a lost
// queue.resume leaves behind delays those waiters to the end of their wait
// at most, as a lost enqueue event would; the next attempt reads the truth.
type waitRoom struct {
	mu      sync.Mutex
	byType  map[string]map[*waiter]struct{}
	paused  map[string]bool // types the last lease attempt found paused
	limited map[string]bool // types a lease found held back by their policy
	resumed uint64          // counts resumes; see notePaused
	waiting atomic.Int64    // fast path for the event callback
}

type waiter struct {
	ch chan struct{} // 1-buffered: a wake is never lost, never blocks
}

func newWaitRoom() *waitRoom {
	return &waitRoom{byType: map[string]map[*waiter]struct{}{}, paused: map[string]bool{}, limited: map[string]bool{}}
}

// enter adds a waiter for the types, unless limit waiters are in already:
// then it returns nil. Each waiter costs memory (and a goroutine in the RPC
// server) for as long as it waits, so their number is what bounds the
// memory that lease requests can hold.
func (r *waitRoom) enter(types []string, limit int) *waiter {
	w := &waiter{ch: make(chan struct{}, 1)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.waiting.Load() >= int64(limit) {
		return nil
	}
	for _, t := range types {
		set := r.byType[t]
		if set == nil {
			set = map[*waiter]struct{}{}
			r.byType[t] = set
		}
		set[w] = struct{}{}
	}
	r.waiting.Add(1)
	return w
}

func (r *waitRoom) leave(w *waiter, types []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range types {
		delete(r.byType[t], w)
		if len(r.byType[t]) == 0 {
			delete(r.byType, t)
		}
	}
	r.waiting.Add(-1)
}

// wake pokes every waiter of a type, unless the type is paused. Each then
// tries to lease; those that find nothing wait again.
func (r *waitRoom) wake(jobType string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.paused[jobType] {
		return
	}
	r.poke(jobType)
}

// noteLimited marks a type whose policy (concurrency, rate) held a lease
// back: from then on a job of it leaving active wakes its waiters
// (wakeLimited). The mark stays: once a type had a limit, a job leaving
// active costs its waiters one lease attempt, where a type that never had
// one costs nothing.
func (r *waitRoom) noteLimited(jobType string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.limited[jobType] = true
}

// has says whether a lease of jobType waits here.
func (r *waitRoom) has(jobType string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byType[jobType]) > 0
}

// wakeLimited wakes the waiters of a type marked by noteLimited.
func (r *waitRoom) wakeLimited(jobType string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.limited[jobType] && !r.paused[jobType] {
		r.poke(jobType)
	}
}

// resume clears a type's paused mark and pokes its waiters.
func (r *waitRoom) resume(jobType string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.paused, jobType)
	r.resumed++
	r.poke(jobType)
}

// resumes is the count of resumes so far, taken before a read of the
// store for notePaused.
func (r *waitRoom) resumes() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resumed
}

// notePaused records what a lease attempt read of types: those in paused
// are marked, the others cleared. since is resumes() from before the read:
// when a resume came in meanwhile, the read may predate it, and nothing is
// marked (clearing is always safe: it costs a useless wake at most).
func (r *waitRoom) notePaused(types, paused []string, since uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range types {
		if slices.Contains(paused, t) && r.resumed == since {
			r.paused[t] = true
		} else {
			delete(r.paused, t)
		}
	}
}

// poke wakes the waiters of a type; r.mu is held.
func (r *waitRoom) poke(jobType string) {
	for w := range r.byType[jobType] {
		select {
		case w.ch <- struct{}{}:
		default:
		}
	}
}

// onEvent is the subscription callback: the type is the subject's last
// token, so no body is decoded.
func (r *waitRoom) onEvent(m *nats.Msg) {
	if r.waiting.Load() == 0 {
		return
	}
	if i := strings.LastIndexByte(m.Subject, '.'); i >= 0 {
		r.wake(m.Subject[i+1:])
	}
}
