package bus

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
)

// ErrPermissionDenied means the NATS server refused a request because the
// connection's user may not publish to its subject (its role does not
// allow the method). The server drops such a message and tells the client
// apart, with an asynchronous -ERR: a call on a connection made by Connect
// fails as soon as that arrives; on another connection, when its timeout
// ends.
var ErrPermissionDenied = errors.New("bus: NATS permission denied")

// deniedPublish returns an error wrapping ErrPermissionDenied when the
// server has refused a publish to subject (as the watch r, when not nil,
// recorded, or as nc's last error says), or nil.
func deniedPublish(nc *nats.Conn, r *refusals, subject string) error {
	if r == nil || !r.wasRefused(subject) {
		last := nc.LastError()
		if !errors.Is(last, nats.ErrPermissionViolation) ||
			!strings.Contains(strings.ToLower(last.Error()), strings.ToLower(`publish to "`+subject+`"`)) {
			return nil
		}
	}
	return fmt.Errorf("bus: request %s: %w: this NATS user's role may not publish to %s", subject, ErrPermissionDenied, subject)
}

// watched holds the refusal watch of every open connection Connect made.
var watched sync.Map // *nats.Conn → *refusals

// refusals ends the calls in flight on one connection whose subject the
// server refused, instead of letting them wait for their timeout.
type refusals struct {
	mu   sync.Mutex
	next uint64
	// waiting holds the cancel func of every call in flight, by subject;
	// a subject's map stays once made (core has a few dozen methods), so
	// a call allocates nothing here.
	waiting map[string]map[uint64]context.CancelFunc
	// refused are the subjects the server refused; a user's permissions
	// do not change while it is connected.
	refused map[string]bool
}

// watch registers cancel for a call to subject; unwatch with the id it
// returns.
func (r *refusals) watch(subject string, cancel context.CancelFunc) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.waiting == nil {
		r.waiting = make(map[string]map[uint64]context.CancelFunc)
	}
	calls := r.waiting[subject]
	if calls == nil {
		calls = make(map[uint64]context.CancelFunc)
		r.waiting[subject] = calls
	}
	id := r.next
	r.next++
	calls[id] = cancel
	return id
}

func (r *refusals) unwatch(subject string, id uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.waiting[subject], id)
}

// publishRefused matches the server's refusal of a publish.
var publishRefused = regexp.MustCompile(`(?i)publish to "([^"]+)"`)

// wasRefused reports whether the server refused a publish to subject.
func (r *refusals) wasRefused(subject string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused[subject]
}

// refuse records the refusal err names and ends the calls waiting on its
// subject.
func (r *refusals) refuse(err error) {
	if !errors.Is(err, nats.ErrPermissionViolation) {
		return
	}
	m := publishRefused.FindStringSubmatch(err.Error())
	if m == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refused == nil {
		r.refused = make(map[string]bool)
	}
	r.refused[m[1]] = true
	for _, cancel := range r.waiting[m[1]] {
		cancel() // the call then finds its subject refused
	}
}

// watchRefusals is the last option of Connect: it chains the watch into
// the connection's asynchronous error callback, and forgets the
// connection when it closes.
func watchRefusals() Option {
	return func(o *nats.Options) error {
		onErr, onClosed := o.AsyncErrorCB, o.ClosedCB
		o.AsyncErrorCB = func(nc *nats.Conn, sub *nats.Subscription, err error) {
			if r, ok := watched.Load(nc); ok {
				r.(*refusals).refuse(err)
			}
			if onErr != nil {
				onErr(nc, sub, err)
			}
		}
		o.ClosedCB = func(nc *nats.Conn) {
			watched.Delete(nc)
			if onClosed != nil {
				onClosed(nc)
			}
		}
		return nil
	}
}
