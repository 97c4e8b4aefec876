package service

import (
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
)

// wakeSubs subscribes a core to the wake events (wakeEvents) of a job type
// only while a lease of that type waits on it, and for wakeLinger after,
// rather than to those of every type all the time. With every core
// subscribed to every job's events, each core instance beyond the first
// cost about 5 µs of CPU per job (docs/scaling.md): the NATS server's
// fan-out and each core's read, for types none of its leases waited on.
// A core's own events wake its own leases directly (publish), so a core
// alone needs these subscriptions only for jobs other cores make ready.
//
// A lease watches its types (watch) from before its first read of Redis
// until it answers (unwatch). watch returns once the NATS server has the
// subscriptions (a flush when one is new), so an event another core
// publishes after a lease's read found nothing still reaches its wait.
// Subscriptions of a type no lease has watched for wakeLinger are dropped
// on a later unwatch: a core whose leases stop waiting keeps the last ones
// until then, which costs what every core paid before, never a lost wake.
type wakeSubs struct {
	nc      *nats.Conn
	subj    bus.Subjects
	onEvent nats.MsgHandler
	log     *slog.Logger
	now     func() time.Time

	mu     sync.Mutex
	byType map[string]*typeWake
	swept  time.Time
	closed bool
}

// typeWake is one type's subscriptions and how many leases watch them.
type typeWake struct {
	subs     []*nats.Subscription
	leaves   bool          // subs has the leave events too (watchLeaves)
	watchers int           // leases watching the type now
	idle     time.Time     // when watchers last fell to 0
	ready    chan struct{} // closed once the server has the subscriptions
}

// wakeLinger is how long a type's subscriptions outlive its last waiting
// lease: workers lease again within their wait (1 s by default), so a type
// that is being worked keeps its subscriptions, and no lease pays a flush.
const wakeLinger = time.Minute

// The pending limits of a wake subscription: 64k events, 16 MiB.
const (
	wakePendingMsgs  = 1 << 16
	wakePendingBytes = 16 << 20
)

func newWakeSubs(nc *nats.Conn, subj bus.Subjects, onEvent nats.MsgHandler, log *slog.Logger, now func() time.Time) *wakeSubs {
	return &wakeSubs{nc: nc, subj: subj, onEvent: onEvent, log: log, now: now, byType: map[string]*typeWake{}}
}

// watch makes the wake events of types reach this core until unwatch, and
// returns once the server has the subscriptions. A subscription that
// cannot be made is logged: the lease then waits its wait out at worst.
func (w *wakeSubs) watch(types []string) {
	var wait []chan struct{}
	var fresh []*typeWake
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	for _, t := range types {
		tw := w.byType[t]
		if tw == nil {
			tw = &typeWake{ready: make(chan struct{})}
			for _, ev := range wakeEvents {
				sub, err := w.nc.Subscribe(w.subj.JobEventsOf(ev, t), w.onEvent)
				if err != nil {
					w.log.Warn("wake-up subscription not made; a waiting lease may wake late", "type", t, "event", ev, "err", err)
					continue
				}
				// Bounded, as every subscription of core: what a burst
				// beyond it drops is harmless, since the events already
				// pending wake the same leases (a type's every waiter).
				_ = sub.SetPendingLimits(wakePendingMsgs, wakePendingBytes)
				tw.subs = append(tw.subs, sub)
			}
			w.byType[t] = tw
			fresh = append(fresh, tw)
		}
		tw.watchers++
		wait = append(wait, tw.ready)
	}
	w.mu.Unlock()
	if len(fresh) > 0 {
		if err := w.nc.Flush(); err != nil {
			w.log.Warn("wake-up subscriptions not confirmed by NATS; a waiting lease may wake late", "types", types, "err", err)
		}
		for _, tw := range fresh {
			close(tw.ready)
		}
	}
	for _, ch := range wait {
		<-ch // another lease's flush of the same type
	}
}

// leaveEvents are the events of a job leaving active that wakeEvents lack
// (a release is an enqueue, a stall is stalled): each makes room under its
// type's concurrency.
var leaveEvents = []string{bus.EventComplete, bus.EventFailed, bus.EventCancel}

// watchLeaves makes the leave events (leaveEvents) of those of types a
// lease watches reach this core too, for as long as their wake events do,
// and returns once the server has the subscriptions. A lease calls it for
// the types their policy held back (waitRoom.noteLimited), then leases
// once more before it waits, so that a job another core took out of
// active meanwhile is not missed. Only limited types pay for these events:
// every complete of the type reaches every core a lease of it waits on.
func (w *wakeSubs) watchLeaves(types []string) {
	w.mu.Lock()
	fresh := false
	for _, t := range types {
		tw := w.byType[t]
		if w.closed || tw == nil || tw.leaves {
			continue
		}
		tw.leaves, fresh = true, true
		for _, ev := range leaveEvents {
			sub, err := w.nc.Subscribe(w.subj.JobEventsOf(ev, t), w.onEvent)
			if err != nil {
				w.log.Warn("wake-up subscription not made; a lease held back by its type's limit may wake late", "type", t, "event", ev, "err", err)
				continue
			}
			_ = sub.SetPendingLimits(wakePendingMsgs, wakePendingBytes)
			tw.subs = append(tw.subs, sub)
		}
	}
	w.mu.Unlock()
	if fresh {
		if err := w.nc.Flush(); err != nil {
			w.log.Warn("wake-up subscriptions not confirmed by NATS; a lease held back by its type's limit may wake late", "types", types, "err", err)
		}
	}
}

// unwatch ends a watch of types, and drops the subscriptions of types no
// lease has watched for wakeLinger.
func (w *wakeSubs) unwatch(types []string) {
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range types {
		if tw := w.byType[t]; tw != nil {
			if tw.watchers--; tw.watchers == 0 {
				tw.idle = now
			}
		}
	}
	if now.Sub(w.swept) < wakeLinger/2 {
		return
	}
	w.swept = now
	for t, tw := range w.byType {
		if tw.watchers == 0 && now.Sub(tw.idle) >= wakeLinger {
			tw.unsubscribe()
			delete(w.byType, t)
		}
	}
}

// close drops every subscription; watches after it subscribe to nothing.
func (w *wakeSubs) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	for t, tw := range w.byType {
		tw.unsubscribe()
		delete(w.byType, t)
	}
}

// subscribed lists the types whose wake events reach this core (tests).
func (w *wakeSubs) subscribed() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.byType))
	for t := range w.byType {
		out = append(out, t)
	}
	return out
}

func (tw *typeWake) unsubscribe() {
	for _, sub := range tw.subs {
		_ = sub.Unsubscribe()
	}
}
