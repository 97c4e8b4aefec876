package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/httpapi"
)

// TestCheckBindAndCheckBasePathAreTheSharedRules: httpapi's exported checks
// are internal/httprule's (tested there), which a node's config applies too.
func TestCheckBindAndCheckBasePathAreTheSharedRules(t *testing.T) {
	t.Parallel()
	err := httpapi.CheckBind("0.0.0.0:8080", false, false)
	require.ErrorIs(t, err, httpapi.ErrInsecureBind)
	require.ErrorContains(t, err, "0.0.0.0:8080 can be reached from other machines")
	require.NoError(t, httpapi.CheckBind("127.0.0.1:8080", false, false))
	require.ErrorContains(t, httpapi.CheckBasePath("admin"), `"admin" must start with /`)
	require.NoError(t, httpapi.CheckBasePath("/admin/queues"))
}

func TestNewRefusesAnOpenNonLoopbackAddress(t *testing.T) {
	t.Parallel()
	ns := bustest.NewServer(t)
	_, err := httpapi.New(httpapi.Config{Conn: ns.Conn, Addr: "0.0.0.0:0"})
	require.ErrorIs(t, err, httpapi.ErrInsecureBind)
	_, err = httpapi.New(httpapi.Config{Conn: ns.Conn, Addr: "0.0.0.0:0", InsecureBind: true})
	require.NoError(t, err)
	_, err = httpapi.New(httpapi.Config{Conn: ns.Conn, Addr: "0.0.0.0:0", Auth: httpapi.Auth{User: "ada"}})
	require.EqualError(t, err, "httpapi: auth: basic auth needs both a user and a password")
}

func TestAuth(t *testing.T) {
	t.Parallel()
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics\n")) })

	t.Run("without auth everything is open", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, httpapi.Config{MetricsHandler: metrics})
		e.ok(http.StatusOK, "GET", "/stats", nil, nil)
		e.ok(http.StatusOK, "GET", "/metrics", nil, nil)
		r := e.do("GET", "/", nil, "Accept", "text/html")
		require.Equal(t, http.StatusOK, r.status)
		require.Contains(t, r.String(), `<script src="assets/app.js"`)
	})

	t.Run("a token is needed for the API, the page, events and by default /metrics", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, httpapi.Config{Auth: httpapi.Auth{Token: "s3cret"}, MetricsHandler: metrics})
		for _, path := range []string{"/stats", "/job/1", "/events", "/metrics", "/"} {
			r := e.do("GET", path, nil)
			require.Equal(t, http.StatusUnauthorized, r.status, path)
			require.Equal(t, `Bearer realm="kuebus"`, r.header.Get("WWW-Authenticate"))
			code, msg := r.err()
			require.Equal(t, "unauthorized", code)
			require.Equal(t, "this server needs credentials: Authorization: Bearer <token>", msg)
		}
		require.Equal(t, http.StatusUnauthorized, e.do("GET", "/stats", nil, "Authorization", "Bearer wrong").status)
		require.Equal(t, http.StatusUnauthorized, e.do("POST", "/job", `{"type":"a"}`).status)
		require.Equal(t, http.StatusOK, e.do("GET", "/stats", nil, "Authorization", "Bearer s3cret").status)
		require.Equal(t, http.StatusOK, e.do("GET", "/metrics", nil, "Authorization", "Bearer s3cret").status)
		require.Equal(t, http.StatusOK, e.do("GET", "/assets/app.js", nil).status, "static files hold no data")
	})

	t.Run("a browser logs in with the token and then uses the cookie", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, httpapi.Config{Auth: httpapi.Auth{Token: "s3cret"}})
		r := e.do("GET", "/", nil, "Accept", "text/html,application/xhtml+xml")
		require.Equal(t, http.StatusSeeOther, r.status)
		require.Equal(t, "/login", r.header.Get("Location"))
		r = e.do("GET", "/login", nil)
		require.Equal(t, http.StatusOK, r.status)
		require.Contains(t, r.String(), `name="token"`)

		form := "application/x-www-form-urlencoded"
		r = e.do("POST", "/login", url.Values{"token": {"nope"}}.Encode(), "Content-Type", form)
		require.Equal(t, http.StatusUnauthorized, r.status)
		require.Contains(t, r.String(), "That token is not valid.")

		r = e.do("POST", "/login", url.Values{"token": {"s3cret"}}.Encode(), "Content-Type", form)
		require.Equal(t, http.StatusSeeOther, r.status)
		cookie := r.header.Get("Set-Cookie")
		require.Contains(t, cookie, "kuebus_session=")
		require.NotContains(t, cookie, "s3cret", "the cookie never holds the token")
		require.Contains(t, cookie, "HttpOnly")
		require.Contains(t, cookie, "SameSite=Strict")
		pair, _, _ := strings.Cut(cookie, ";")
		require.Equal(t, http.StatusOK, e.do("GET", "/", nil, "Cookie", pair).status)
		require.Equal(t, http.StatusOK, e.do("GET", "/stats", nil, "Cookie", pair).status)
	})

	t.Run("basic auth works, and browsers are asked for it", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, httpapi.Config{Auth: httpapi.Auth{User: "ada", Password: "pw"}})
		r := e.do("GET", "/", nil, "Accept", "text/html")
		require.Equal(t, http.StatusUnauthorized, r.status)
		require.Equal(t, `Basic realm="kuebus", charset="UTF-8"`, r.header.Get("WWW-Authenticate"))
		req, err := http.NewRequest("GET", "/", nil)
		require.NoError(t, err)
		req.SetBasicAuth("ada", "pw")
		require.Equal(t, http.StatusOK, e.do("GET", "/stats", nil, "Authorization", req.Header.Get("Authorization")).status)
		req.SetBasicAuth("ada", "wrong")
		require.Equal(t, http.StatusUnauthorized, e.do("GET", "/stats", nil, "Authorization", req.Header.Get("Authorization")).status)
		require.Equal(t, http.StatusUnauthorized, e.do("GET", "/login", nil).status, "no token, no login form: like any other path")
	})

	t.Run("/metrics can have its own token, or none", func(t *testing.T) {
		t.Parallel()
		own := newEnv(t, httpapi.Config{Auth: httpapi.Auth{Token: "api"}, MetricsAuth: &httpapi.Auth{Token: "scrape"}, MetricsHandler: metrics})
		require.Equal(t, http.StatusUnauthorized, own.do("GET", "/metrics", nil, "Authorization", "Bearer api").status)
		require.Equal(t, http.StatusOK, own.do("GET", "/metrics", nil, "Authorization", "Bearer scrape").status)
		require.Equal(t, http.StatusUnauthorized, own.do("GET", "/stats", nil, "Authorization", "Bearer scrape").status)

		open := newEnv(t, httpapi.Config{Auth: httpapi.Auth{Token: "api"}, MetricsAuth: &httpapi.Auth{}, MetricsHandler: metrics})
		require.Equal(t, http.StatusOK, open.do("GET", "/metrics", nil).status)
		require.Equal(t, http.StatusUnauthorized, open.do("GET", "/stats", nil).status)
	})

	t.Run("browsers cannot change jobs from another site", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, httpapi.Config{})
		r := e.do("POST", "/job", `{"type":"a"}`, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
		require.Equal(t, http.StatusForbidden, r.status, r)
		code, msg := r.err()
		require.Equal(t, "forbidden", code)
		require.Equal(t, "POST /job from another site's page is refused: browsers may change jobs from the dashboard only", msg)
		r = e.do("POST", "/job", `{"type":"a"}`, "Sec-Fetch-Site", "same-origin")
		require.Equal(t, http.StatusCreated, r.status, r)
	})
}
