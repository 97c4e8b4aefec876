package httpapi

import (
	"context"
	"math"
	"sync"
	"time"
)

// Defaults of the failed-login limit (see loginLimiter).
const (
	// LoginBurstDefault is how many wrong credentials one address may send
	// before it is slowed down.
	LoginBurstDefault = 10
	// LoginEveryDefault is how often one more try comes back after that:
	// 10 a minute.
	LoginEveryDefault = 6 * time.Second
	// loginOverallFactor sizes the bucket all addresses share, as a
	// multiple of one address's: it bounds guesses spread over many
	// addresses.
	loginOverallFactor = 10
	// loginMaxAddrs bounds the addresses remembered; beyond it the one
	// whose last failure is oldest is forgotten.
	loginMaxAddrs = 10000
	// loginLineLen bounds the requests of one held address in its line
	// (the one being checked and those waiting); beyond it they get 429
	// unchecked.
	loginLineLen = 4
	// loginMaxInLine bounds the requests in every held address's line at
	// once, so that a flood from many addresses cannot park goroutines
	// without end.
	loginMaxInLine = 1000
)

// loginLimiter slows down guessing of credentials, never the right ones.
// Each client address has a token bucket: a wrong token, password or login
// form takes one token, and a token comes back every `every`, up to
// `burst`. All addresses also share one bucket ten times as large that
// refills ten times as fast.
//
// An address is held while its bucket is empty, or while the shared one is
// and the address has failed before: a botnet that empties the shared
// bucket slows down only addresses that sent wrong credentials, never a
// user who has not. A held address's credentials are still checked, but
// one request at a time (its line, enter): right ones are let in at once;
// a wrong one takes a token the bucket does not have and keeps the line
// until that token is back (the server answers it only then), so guesses
// from one address stay at one per `every` however many connections it
// opens, while the user with the right password or token is never locked
// out by someone else's (or a stale script's) wrong ones. A request that
// finds its address's line full (loginLineLen) gets 429 unchecked.
//
// Requests without credentials and with a valid session cookie take no
// token: they are not guesses (a cookie's MAC cannot be guessed).
//
// Memory is bounded: an address whose bucket is full again is forgotten
// when room is needed, and past loginMaxAddrs the one whose last failure is
// oldest goes; at most loginMaxInLine requests wait in lines at once.
//
// The address is the connection's: behind a proxy every client shares the
// proxy's bucket, which keeps the limit safe (a spoofed X-Forwarded-For
// cannot reset it) at the price of slowing all of them together.
type loginLimiter struct {
	burst, every float64 // every in seconds
	maxAddrs     int
	now          func() time.Time

	mu      sync.Mutex
	overall bucket
	addrs   map[string]*bucket
	lines   map[string]*line // the held addresses' lines, while not empty
	inLine  int              // requests in every line
}

// line lets one request of a held address be checked at a time.
type line struct {
	turn chan struct{} // holds a value while a request has the turn
	n    int           // requests in the line, the one with the turn included
}

// bucket is a token bucket: tokens at last, refilling over time.
type bucket struct {
	tokens   float64
	last     time.Time
	failedAt time.Time // the last failure, to forget the oldest first
}

func newLoginLimiter(burst int, every time.Duration, now func() time.Time) *loginLimiter {
	return &loginLimiter{
		burst: float64(burst), every: every.Seconds(), maxAddrs: loginMaxAddrs, now: now,
		overall: bucket{tokens: float64(burst * loginOverallFactor), last: now()},
		addrs:   map[string]*bucket{},
		lines:   map[string]*line{},
	}
}

// refill brings b up to t, capped at max tokens refilling one per every.
func (b *bucket) refill(t time.Time, max, every float64) {
	if el := t.Sub(b.last).Seconds(); el > 0 {
		b.tokens = math.Min(max, b.tokens+el/every)
		b.last = t
	}
}

// wait returns how long until b has a whole token again (0 when it has).
func (b *bucket) wait(every float64) time.Duration {
	if b.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - b.tokens) * every * float64(time.Second))
}

// refill brings addr's bucket b and the shared one up to t. l.mu is held.
func (l *loginLimiter) refill(b *bucket, t time.Time) {
	b.refill(t, l.burst, l.every)
	l.overall.refill(t, l.burst*loginOverallFactor, l.every/loginOverallFactor)
}

// held reports how long addr must wait before its credentials are checked
// again: 0 when they may be checked now.
func (l *loginLimiter) held(addr string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, failed := l.addrs[addr]
	if !failed {
		return 0
	}
	t := l.now()
	l.refill(b, t)
	return max(b.wait(l.every), l.overall.wait(l.every/loginOverallFactor))
}

// failed takes a token from addr's bucket and the shared one. A bucket
// that has no whole token (a held address's) goes down to -1 at most: the
// wrong try is paid for with the next token to come back (see debt).
func (l *loginLimiter) failed(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.now()
	b, ok := l.addrs[addr]
	if !ok {
		l.makeRoom(t)
		b = &bucket{tokens: l.burst, last: t}
		l.addrs[addr] = b
	}
	l.refill(b, t)
	b.tokens = math.Max(-1, b.tokens-1)
	b.failedAt = t
	l.overall.tokens = math.Max(-1, l.overall.tokens-1)
}

// debt reports how long until addr's bucket and the shared one are out of
// debt (no longer below 0): how long a held address's wrong try keeps its
// line.
func (l *loginLimiter) debt(addr string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.addrs[addr]
	if !ok {
		return 0
	}
	t := l.now()
	l.refill(b, t)
	owed := func(tokens, every float64) time.Duration {
		if tokens >= 0 {
			return 0
		}
		return time.Duration(-tokens * every * float64(time.Second))
	}
	return max(owed(b.tokens, l.every), owed(l.overall.tokens, l.every/loginOverallFactor))
}

// enter waits for addr's turn to have its credentials checked, and returns
// the function that ends the turn. It returns false at once when the line
// is full (or every line together is), and when ctx or stop ends before
// the turn comes.
func (l *loginLimiter) enter(ctx context.Context, stop <-chan struct{}, addr string) (leave func(), ok bool) {
	l.mu.Lock()
	ln := l.lines[addr]
	if ln == nil {
		ln = &line{turn: make(chan struct{}, 1)}
		l.lines[addr] = ln
	}
	if ln.n >= loginLineLen || l.inLine >= loginMaxInLine {
		l.mu.Unlock()
		return nil, false
	}
	ln.n++
	l.inLine++
	l.mu.Unlock()
	out := func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		ln.n--
		l.inLine--
		if ln.n == 0 {
			delete(l.lines, addr)
		}
	}
	select {
	case ln.turn <- struct{}{}:
		return func() { <-ln.turn; out() }, true
	case <-ctx.Done():
	case <-stop:
	}
	out()
	return nil, false
}

// makeRoom forgets addresses whose bucket is full again, and if that is not
// enough, the one whose last failure is oldest. l.mu must be held.
func (l *loginLimiter) makeRoom(t time.Time) {
	if len(l.addrs) < l.maxAddrs {
		return
	}
	var oldest string
	for addr, b := range l.addrs {
		b.refill(t, l.burst, l.every)
		if b.tokens >= l.burst {
			delete(l.addrs, addr)
			continue
		}
		if oldest == "" || b.failedAt.Before(l.addrs[oldest].failedAt) {
			oldest = addr
		}
	}
	if len(l.addrs) >= l.maxAddrs {
		delete(l.addrs, oldest)
	}
}

// size is how many addresses l remembers (for tests).
func (l *loginLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.addrs)
}
