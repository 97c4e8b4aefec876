package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/httpapi"
	"github.com/kuebus/kuebus/node/nodetest"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 23, 5, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newClockedEnv is newEnv with the server's clock set to clk.
func newClockedEnv(t *testing.T, cfg httpapi.Config, clk *fakeClock) *env {
	t.Helper()
	return newEnvWith(t, service.Config{}, func(*nodetest.Core) httpapi.Config { return cfg },
		func(s *httpapi.Server) { httpapi.SetClock(s, clk.now) })
}

const formType = "application/x-www-form-urlencoded"

// login posts the token form and returns the Set-Cookie header and the
// cookie's name=value pair.
func (e *env) login(token string) (header, pair string) {
	e.t.Helper()
	r := e.do("POST", "/login", url.Values{"token": {token}}.Encode(), "Content-Type", formType)
	require.Equal(e.t, http.StatusSeeOther, r.status, r)
	header = r.header.Get("Set-Cookie")
	pair, _, _ = strings.Cut(header, ";")
	return header, pair
}

func TestSessionCookie(t *testing.T) {
	t.Parallel()

	t.Run("it is signed, expires and holds no secret", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, httpapi.Config{Auth: httpapi.Auth{Token: "s3cret"}})
		header, pair := e.login("s3cret")
		require.True(t, strings.HasPrefix(pair, "kuebus_session="), header)
		require.NotContains(t, header, "s3cret")
		require.Contains(t, header, "Max-Age=43200", "12 h by default")
		require.Contains(t, header, "Expires=")
		require.Contains(t, header, "HttpOnly")
		require.Contains(t, header, "SameSite=Strict")
		require.NotContains(t, header, "Secure", "plain HTTP")
		require.Equal(t, http.StatusOK, e.do("GET", "/stats", nil, "Cookie", pair).status)
	})

	t.Run("a tampered cookie is refused", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, httpapi.Config{Auth: httpapi.Auth{Token: "s3cret"}})
		_, pair := e.login("s3cret")
		expiry, mac, ok := strings.Cut(strings.TrimPrefix(pair, "kuebus_session="), ".")
		require.True(t, ok, pair)
		later := expiry[:len(expiry)-1] + string('0'+(expiry[len(expiry)-1]-'0'+1)%10)
		// The first character: the last one of unpadded base64 carries bits
		// the decoder ignores, so changing it may leave the MAC the same.
		flipped := map[bool]string{true: "A", false: "B"}[mac[0] != 'A'] + mac[1:]
		for _, bad := range []string{
			"kuebus_session=" + later + "." + mac,      // expiry moved
			"kuebus_session=" + expiry + "." + flipped, // MAC changed
			"kuebus_session=" + expiry,                 // no MAC
			"kuebus_session=s3cret",                    // the token itself, as the old cookie held it
			"kuebus_token=s3cret",                      // the old cookie
		} {
			require.Equal(t, http.StatusUnauthorized, e.do("GET", "/stats", nil, "Cookie", bad).status, bad)
			r := e.do("GET", "/", nil, "Cookie", bad, "Accept", "text/html")
			require.Equal(t, http.StatusSeeOther, r.status, bad)
			require.Equal(t, "/login", r.header.Get("Location"))
		}
	})

	t.Run("an expired cookie is refused", func(t *testing.T) {
		t.Parallel()
		clk := newFakeClock()
		e := newClockedEnv(t, httpapi.Config{Auth: httpapi.Auth{Token: "s3cret"}, SessionTTL: time.Hour}, clk)
		header, pair := e.login("s3cret")
		require.Contains(t, header, "Max-Age=3600")
		clk.advance(time.Hour - time.Second)
		require.Equal(t, http.StatusOK, e.do("GET", "/stats", nil, "Cookie", pair).status)
		clk.advance(time.Second)
		require.Equal(t, http.StatusUnauthorized, e.do("GET", "/stats", nil, "Cookie", pair).status)
	})

	t.Run("logout clears the cookie, and the page has its button", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, httpapi.Config{Auth: httpapi.Auth{Token: "s3cret"}})
		_, pair := e.login("s3cret")
		page := e.do("GET", "/", nil, "Cookie", pair)
		require.Equal(t, http.StatusOK, page.status)
		require.Contains(t, page.String(), `<form method="post" action="logout" class="signout">`)

		r := e.do("POST", "/logout", nil, "Cookie", pair, "Sec-Fetch-Site", "same-origin")
		require.Equal(t, http.StatusSeeOther, r.status)
		require.Equal(t, "/login", r.header.Get("Location"))
		cleared := r.header.Get("Set-Cookie")
		require.True(t, strings.HasPrefix(cleared, "kuebus_session=;"), cleared)
		require.Contains(t, cleared, "Max-Age=0")
		require.Contains(t, cleared, "HttpOnly")

		r = e.do("POST", "/logout", nil, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
		require.Equal(t, http.StatusForbidden, r.status, "another site cannot sign a user out")
		require.NotContains(t, newEnv(t, httpapi.Config{}).do("GET", "/", nil).String(), `action="logout"`,
			"no token, no session, no button")
	})

	t.Run("servers sharing a session key accept each other's cookies, until the token changes", func(t *testing.T) {
		t.Parallel()
		key := []byte(strings.Repeat("k", httpapi.SessionKeyMinBytes))
		a := newEnv(t, httpapi.Config{Auth: httpapi.Auth{Token: "s3cret"}, SessionKey: key})
		_, pair := a.login("s3cret")
		b := newEnv(t, httpapi.Config{Auth: httpapi.Auth{Token: "s3cret"}, SessionKey: key})
		require.Equal(t, http.StatusOK, b.do("GET", "/stats", nil, "Cookie", pair).status)
		other := newEnv(t, httpapi.Config{Auth: httpapi.Auth{Token: "s3cret"}})
		require.Equal(t, http.StatusUnauthorized, other.do("GET", "/stats", nil, "Cookie", pair).status, "another key")
		changed := newEnv(t, httpapi.Config{Auth: httpapi.Auth{Token: "new"}, SessionKey: key})
		require.Equal(t, http.StatusUnauthorized, changed.do("GET", "/stats", nil, "Cookie", pair).status, "another token")
	})

	t.Run("bad session settings are refused at start", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, httpapi.Config{})
		conn := e.core.NATS.Conn
		_, err := httpapi.New(httpapi.Config{Conn: conn, SessionTTL: -time.Hour})
		require.EqualError(t, err, "httpapi: session TTL -1h0m0s: must be at least 1s")
		_, err = httpapi.New(httpapi.Config{Conn: conn, SessionKey: []byte("short")})
		require.EqualError(t, err, "httpapi: session key: 5 bytes, needs at least 32")
	})
}

// newPausedEnv is newClockedEnv whose server records each pause a held
// address's wrong try makes, and moves the clock by it instead of waiting.
func newPausedEnv(t *testing.T, cfg httpapi.Config, clk *fakeClock) (*env, *[]time.Duration) {
	t.Helper()
	var mu sync.Mutex
	var pauses []time.Duration
	e := newEnvWith(t, service.Config{}, func(*nodetest.Core) httpapi.Config { return cfg },
		func(s *httpapi.Server) {
			httpapi.SetClock(s, clk.now)
			httpapi.SetPause(s, func(d time.Duration) {
				mu.Lock()
				pauses = append(pauses, d)
				mu.Unlock()
				clk.advance(d)
			})
		})
	return e, &pauses
}

func basic(user, password string) string {
	req, _ := http.NewRequest("GET", "/", nil)
	req.SetBasicAuth(user, password)
	return req.Header.Get("Authorization")
}

func TestFailedLoginLimit(t *testing.T) {
	t.Parallel()

	t.Run("the right token succeeds after many wrong ones, which are answered one per interval", func(t *testing.T) {
		t.Parallel()
		clk := newFakeClock()
		e, pauses := newPausedEnv(t, httpapi.Config{Auth: httpapi.Auth{Token: "s3cret"}}, clk)
		for i := range httpapi.LoginBurstDefault {
			require.Equal(t, http.StatusUnauthorized, e.do("GET", "/stats", nil, "Authorization", "Bearer wrong").status, i)
		}
		require.Empty(t, *pauses, "the burst is answered at once")
		require.Equal(t, http.StatusOK, e.do("GET", "/stats", nil, "Authorization", "Bearer s3cret").status,
			"the right token is let in from an address that sent ten wrong ones")
		for range 20 {
			r := e.do("GET", "/stats", nil, "Authorization", "Bearer wrong")
			require.Equal(t, http.StatusUnauthorized, r.status)
			code, msg := r.err()
			require.Equal(t, "unauthorized", code)
			require.Equal(t, "wrong credentials: this server needs Authorization: Bearer <token>", msg)
			require.Equal(t, http.StatusOK, e.do("GET", "/stats", nil, "Authorization", "Bearer s3cret").status)
		}
		require.Len(t, *pauses, 20, "each wrong try from the held address kept its line")
		for _, d := range *pauses {
			require.Equal(t, httpapi.LoginEveryDefault, d, "one wrong try per interval")
		}
		r := e.do("POST", "/login", url.Values{"token": {"s3cret"}}.Encode(), "Content-Type", formType)
		require.Equal(t, http.StatusSeeOther, r.status, "the login form lets the right token in too")
		r = e.do("POST", "/login", url.Values{"token": {"nope"}}.Encode(), "Content-Type", formType)
		require.Equal(t, http.StatusUnauthorized, r.status)
		require.Len(t, *pauses, 21, "and pauses its wrong ones")
	})

	t.Run("wrong tokens on the login form and wrong basic auth count together", func(t *testing.T) {
		t.Parallel()
		clk := newFakeClock()
		e, pauses := newPausedEnv(t, httpapi.Config{Auth: httpapi.Auth{Token: "s3cret", User: "ada", Password: "pw"}}, clk)
		for range httpapi.LoginBurstDefault / 2 {
			r := e.do("POST", "/login", url.Values{"token": {"nope"}}.Encode(), "Content-Type", formType)
			require.Equal(t, http.StatusUnauthorized, r.status)
			require.Equal(t, http.StatusUnauthorized, e.do("GET", "/stats", nil, "Authorization", basic("ada", "wrong")).status)
		}
		require.Empty(t, *pauses)
		require.Equal(t, http.StatusOK, e.do("GET", "/stats", nil, "Authorization", basic("ada", "pw")).status)
		require.Equal(t, http.StatusUnauthorized, e.do("GET", "/stats", nil, "Authorization", basic("ada", "wrong")).status)
		require.Len(t, *pauses, 1, "held after ten, counted together")
	})

	t.Run("a valid session cookie is not held back", func(t *testing.T) {
		t.Parallel()
		clk := newFakeClock()
		e, _ := newPausedEnv(t, httpapi.Config{Auth: httpapi.Auth{Token: "s3cret"}}, clk)
		_, pair := e.login("s3cret")
		for range httpapi.LoginBurstDefault + 1 {
			e.do("GET", "/stats", nil, "Authorization", "Bearer wrong")
		}
		require.Equal(t, http.StatusOK, e.do("GET", "/stats", nil, "Cookie", pair).status)
	})
}
