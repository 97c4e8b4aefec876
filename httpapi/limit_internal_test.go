package httpapi

import (
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLoginLimiter(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 23, 5, 0, 0, 0, time.UTC)

	t.Run("an address is held after burst failures and gets a try back every interval", func(t *testing.T) {
		t.Parallel()
		now := start
		l := newLoginLimiter(3, 10*time.Second, func() time.Time { return now })
		require.Zero(t, l.held("a"), "no failure yet")
		for range 3 {
			require.Zero(t, l.held("a"))
			l.failed("a")
		}
		require.Equal(t, 10*time.Second, l.held("a"))
		require.Zero(t, l.held("b"), "other addresses are not held")
		now = now.Add(4 * time.Second)
		require.Equal(t, 6*time.Second, l.held("a"))
		now = now.Add(6 * time.Second)
		require.Zero(t, l.held("a"))
	})

	t.Run("the shared bucket holds back addresses that failed, not the others", func(t *testing.T) {
		t.Parallel()
		now := start
		l := newLoginLimiter(2, 10*time.Second, func() time.Time { return now })
		// 20 addresses fail once each: the shared bucket (2 × 10) is empty.
		for i := range 2 * loginOverallFactor {
			l.failed("bot" + strconv.Itoa(i))
		}
		require.Equal(t, time.Second, l.held("bot0"), "its own bucket has a token, the shared one not")
		require.Zero(t, l.held("user"), "an address without failures is never held")
	})

	t.Run("a held address's wrong try is paid with the next token: one per interval", func(t *testing.T) {
		t.Parallel()
		now := start
		l := newLoginLimiter(2, 10*time.Second, func() time.Time { return now })
		l.failed("a")
		l.failed("a")
		require.Zero(t, l.debt("a"), "the burst's tries owe nothing")
		l.failed("a") // held: a try the bucket does not have
		require.Equal(t, 10*time.Second, l.debt("a"))
		require.Equal(t, 20*time.Second, l.held("a"))
		now = now.Add(10 * time.Second) // the line is kept this long
		require.Zero(t, l.debt("a"))
		require.Equal(t, 10*time.Second, l.held("a"), "still held: the next try is paid with the next token too")
		l.failed("a")
		l.failed("a")
		require.Equal(t, 10*time.Second, l.debt("a"), "at most one token of debt")
	})

	t.Run("a held address is checked one request at a time, and its line is bounded", func(t *testing.T) {
		t.Parallel()
		l := newLoginLimiter(2, 10*time.Second, time.Now)
		stop := make(chan struct{})
		leave, ok := l.enter(t.Context(), stop, "a")
		require.True(t, ok)
		turns := make(chan func(), loginLineLen)
		for range loginLineLen - 1 {
			go func() {
				next, ok := l.enter(t.Context(), stop, "a")
				if ok {
					turns <- next
				}
			}()
		}
		require.Eventually(t, func() bool {
			l.mu.Lock()
			defer l.mu.Unlock()
			return l.lines["a"].n == loginLineLen
		}, 10*time.Second, time.Millisecond)
		_, ok = l.enter(t.Context(), stop, "a")
		require.False(t, ok, "the line is full")
		other, ok := l.enter(t.Context(), stop, "b")
		require.True(t, ok, "another address has a line of its own")
		other()
		select {
		case <-turns:
			t.Fatal("a turn came while the first still had it")
		default:
		}
		leave()
		for range loginLineLen - 1 {
			(<-turns)()
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		require.Empty(t, l.lines, "empty lines are forgotten")
		require.Zero(t, l.inLine)
	})

	t.Run("memory is bounded: full buckets go first, then the oldest failure", func(t *testing.T) {
		t.Parallel()
		now := start
		l := newLoginLimiter(2, 10*time.Second, func() time.Time { return now })
		l.maxAddrs = 3
		l.failed("old")
		now = now.Add(time.Second)
		l.failed("mid")
		l.failed("new")
		l.failed("x")
		require.Equal(t, 3, l.size())
		require.Zero(t, l.held("old"), "forgotten: the oldest failure")
		require.NotZero(t, func() time.Duration { l.failed("mid"); return l.held("mid") }())

		now = now.Add(time.Minute) // every bucket refills
		l.failed("y")
		require.Equal(t, 1, l.size(), "full buckets are forgotten when room is needed")
	})
}

func TestClientAddr(t *testing.T) {
	t.Parallel()
	for remote, want := range map[string]string{
		"192.0.2.7:5000":              "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:5000": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ff::1]:5000":   "2001:db8:1:2::/64",
		"[::1]:5000":                  "::/64",
		"[::ffff:192.0.2.7]:5000":     "192.0.2.7",
		"pipe":                        "pipe",
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		require.Equal(t, want, clientAddr(r), remote)
	}
}
