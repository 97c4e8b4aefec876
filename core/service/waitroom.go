package service

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go"
)

// waitRoom holds lease requests that found nothing ready, per job type, and
// wakes them when a job of their type becomes ready through any core: it
// listens to the events that announce a job entering inactive (enqueue,
// promotion, failed_attempt, stalled), so no one polls Redis.
type waitRoom struct {
	mu      sync.Mutex
	byType  map[string]map[*waiter]struct{}
	waiting atomic.Int64 // fast path for the event callback
}

type waiter struct {
	ch chan struct{} // 1-buffered: a wake is never lost, never blocks
}

func newWaitRoom() *waitRoom {
	return &waitRoom{byType: map[string]map[*waiter]struct{}{}}
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

// wake pokes every waiter of a type. Each then tries to lease; those that
// find nothing wait again.
func (r *waitRoom) wake(jobType string) {
	r.mu.Lock()
	defer r.mu.Unlock()
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
