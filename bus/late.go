package bus

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
)

// A call made with WithLateReply keeps listening after it gave up: a reply
// that arrives after its context ended, one the server sent in time to a
// caller that could not read it (its process was stopped, or stalled past
// its deadline), goes to the late func instead of being dropped. A lease
// uses it: the jobs of a lease reply nobody reads would otherwise stay
// leased to a live worker until their ttl, and the worker gives them back.

// lateWindow is how long a call that gave up still takes its reply.
const lateWindow = time.Minute

type lateKey struct{}

// WithLateReply returns ctx such that a Call made with it hands a success
// reply (its body) that arrives after ctx ended, within lateWindow, to
// late, on the client's reply goroutine: late must not block for long.
// Error replies that come late are dropped.
func WithLateReply(ctx context.Context, late func(body []byte)) context.Context {
	return context.WithValue(ctx, lateKey{}, late)
}

func lateOf(ctx context.Context) func([]byte) {
	late, _ := ctx.Value(lateKey{}).(func([]byte))
	return late
}

// lateReplies routes the replies of a Client's calls made WithLateReply:
// to the call that waits for one, or to its late func once it gave up. One
// subscription for all, made at the first such call.
type lateReplies struct {
	start  sync.Once
	err    error
	prefix string // the inbox subject, ending in "."

	mu    sync.Mutex
	calls map[string]*lateCall
}

type lateCall struct {
	reply  chan *nats.Msg    // 1-buffered: the reply while the call waits
	late   func(body []byte) // set once the call gave up
	gaveUp time.Time
}

// request publishes a request whose reply comes through c.late.
func (c *Client) requestLate(ctx context.Context, m *nats.Msg, late func([]byte)) (*nats.Msg, error) {
	lr := &c.late
	lr.start.Do(func() {
		lr.prefix = c.nc.NewRespInbox() + "."
		lr.calls = map[string]*lateCall{}
		_, lr.err = c.nc.Subscribe(lr.prefix+"*", lr.deliver)
	})
	if lr.err != nil {
		return nil, lr.err
	}
	token := nuid.Next()
	call := &lateCall{reply: make(chan *nats.Msg, 1)}
	lr.add(token, call)
	m.Reply = lr.prefix + token
	if err := c.nc.PublishMsg(m); err != nil {
		lr.remove(token)
		return nil, err
	}
	select {
	case msg := <-call.reply:
		return replied(msg)
	case <-ctx.Done():
		if msg := lr.giveUp(token, call, late); msg != nil {
			return replied(msg) // it came as the call gave up
		}
		return nil, ctx.Err()
	}
}

// The status header a NATS server sends a request's inbox when no one
// subscribes to its subject (nats.go keeps its names to itself).
const (
	statusHeader       = "Status"
	noRespondersStatus = "503"
)

// replied turns the server's no-responders status into nats's error, as
// a nats.go request does.
func replied(msg *nats.Msg) (*nats.Msg, error) {
	if len(msg.Data) == 0 && msg.Header.Get(statusHeader) == noRespondersStatus {
		return nil, nats.ErrNoResponders
	}
	return msg, nil
}

func (lr *lateReplies) add(token string, call *lateCall) {
	now := time.Now()
	lr.mu.Lock()
	defer lr.mu.Unlock()
	for t, c := range lr.calls { // calls whose reply never came
		if !c.gaveUp.IsZero() && now.Sub(c.gaveUp) > lateWindow {
			delete(lr.calls, t)
		}
	}
	lr.calls[token] = call
}

func (lr *lateReplies) remove(token string) {
	lr.mu.Lock()
	delete(lr.calls, token)
	lr.mu.Unlock()
}

// giveUp hands the call's reply to late from now on; it returns the reply
// when it arrived meanwhile.
func (lr *lateReplies) giveUp(token string, call *lateCall, late func([]byte)) *nats.Msg {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	select {
	case msg := <-call.reply:
		delete(lr.calls, token)
		return msg
	default:
	}
	call.late, call.gaveUp = late, time.Now()
	return nil
}

// deliver takes one reply off the inbox.
func (lr *lateReplies) deliver(msg *nats.Msg) {
	token := strings.TrimPrefix(msg.Subject, lr.prefix)
	lr.mu.Lock()
	call := lr.calls[token]
	delete(lr.calls, token)
	var late func([]byte)
	if call != nil {
		late = call.late
		if late == nil {
			call.reply <- msg // buffered; one reply a call
		}
	}
	lr.mu.Unlock()
	if late != nil && msg.Header.Get(HeaderKuebusCode) == "" && msg.Header.Get(HeaderErrorCode) == "" &&
		msg.Header.Get(statusHeader) == "" {
		late(msg.Data)
	}
}
