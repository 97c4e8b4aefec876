package httpapi_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/httpapi"
	"github.com/kuebus/kuebus/node/nodetest"
)

// lockedAuth is a server locked as a node with NATS users is: a user of
// each role that signs in over HTTP.
var lockedAuth = httpapi.Auth{Users: []httpapi.User{
	{Name: "ada", Password: "admin-pw", Role: bus.RoleAdmin},
	{Name: "wes", Password: "worker-pw", Role: bus.RoleWorker},
	{Name: "pat", Password: "producer-pw", Role: bus.RoleProducer},
	{Name: "vic", Password: "viewer-pw", Role: bus.RoleViewer},
}}

// concrete turns a route's pattern into a request line that matches it;
// a wildcard it does not know fails the test, so that a new route gets a
// path here rather than slipping by.
func concrete(t *testing.T, pattern string) (method, path string) {
	t.Helper()
	method, path, ok := strings.Cut(pattern, " ")
	require.True(t, ok, "pattern %q has no method", pattern)
	path = strings.NewReplacer(
		"{id}", "1", "{state}", "inactive", "{priority}", "high", "{type}", "email",
		"{name}", "nightly", "{path...}", "inactive/0..9", "{$}", "",
	).Replace(path)
	if path == "/assets/" {
		path = "/assets/style.css"
	}
	require.NotContains(t, path, "{", "pattern %q: give its wildcard a value in concrete", pattern)
	return method, path
}

// routes is every route of e's server, with its request line.
func (e *env) routes() []struct {
	httpapi.Route
	method, path string
} {
	var out []struct {
		httpapi.Route
		method, path string
	}
	for _, r := range httpapi.Routes(e.srv) {
		m, p := concrete(e.t, r.Pattern)
		out = append(out, struct {
			httpapi.Route
			method, path string
		}{r, m, p})
	}
	require.Greater(e.t, len(out), 30, "the router's routes")
	return out
}

func TestALockedServerAnswersAnonymous401OnEveryRouteButTheLoginPage(t *testing.T) {
	t.Parallel()
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics\n")) })
	e := newEnv(t, httpapi.Config{Auth: lockedAuth, MetricsHandler: metrics})
	var open []string
	for _, rt := range e.routes() {
		r := e.do(rt.method, rt.path, nil)
		if rt.Anonymous {
			open = append(open, rt.Pattern)
			code, _ := r.err()
			require.NotEqual(t, "unauthorized", code, "%s %s", rt.method, rt.path)
			require.Less(t, r.status, 500, "%s %s", rt.method, rt.path)
			continue
		}
		require.Equal(t, http.StatusUnauthorized, r.status, "%s %s: %s", rt.method, rt.path, r)
		code, _ := r.err()
		require.Equal(t, "unauthorized", code, "%s %s", rt.method, rt.path)
		require.Equal(t, `Basic realm="kuebus", charset="UTF-8"`, r.header.Get("WWW-Authenticate"))
	}
	require.ElementsMatch(t, []string{"GET /assets/", "GET /login", "POST /login", "POST /logout"}, open,
		"only the login page, its sign-out and its files are open")
	require.Equal(t, http.StatusUnauthorized, e.do("GET", "/no/such/route", nil).status, "not even a 404 without credentials")
	r := e.do("GET", "/", nil, "Accept", "text/html")
	require.Equal(t, http.StatusSeeOther, r.status, "a browser is sent to the login form")
	require.Equal(t, "/login", r.header.Get("Location"))
	require.Contains(t, e.do("GET", "/login", nil).String(), `name="password"`)
}

func TestEachRouteAsksTheRoleOfTheNATSMethodsItCalls(t *testing.T) {
	t.Parallel()
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics\n")) })
	e := newEnv(t, httpapi.Config{Auth: lockedAuth, MetricsHandler: metrics})
	admin, viewer := basic("ada", "admin-pw"), basic("vic", "viewer-pw")
	e.header.Set("Authorization", admin)
	job := e.create(map[string]any{"type": "email", "data": map[string]any{"to": "a@example.com"}})

	t.Run("a viewer may use every GET route and no other", func(t *testing.T) {
		for _, rt := range e.routes() {
			if rt.Anonymous || rt.path == "/events" { // a stream: checked below
				continue
			}
			r := e.do(rt.method, rt.path, nil, "Authorization", viewer, "Accept", "application/json")
			if rt.method == http.MethodGet {
				require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, r.status, "%s %s: %s", rt.method, rt.path, r)
				continue
			}
			require.Equal(t, http.StatusForbidden, r.status, "%s %s: %s", rt.method, rt.path, r)
			code, msg := r.err()
			require.Equal(t, "forbidden", code)
			require.Contains(t, msg, "user vic (viewer) may not "+rt.method+" "+rt.path+": it needs core.")
		}
		e.events("", "Authorization", viewer)
	})

	t.Run("a viewer looks but does not remove", func(t *testing.T) {
		id := "/job/" + itoa(job.ID)
		require.Equal(t, http.StatusOK, e.do("GET", id, nil, "Authorization", viewer).status)
		r := e.do("DELETE", id, nil, "Authorization", viewer)
		require.Equal(t, http.StatusForbidden, r.status)
		_, msg := r.err()
		require.Equal(t, "user vic (viewer) may not DELETE "+id+": it needs core.remove, which the viewer role may not use", msg)
		r = e.do("POST", "/jobs/bulk", `{"action":"remove","state":"inactive"}`, "Authorization", viewer)
		require.Equal(t, http.StatusForbidden, r.status, r)
		require.Equal(t, http.StatusForbidden, e.do("POST", "/job", `{"type":"email"}`, "Authorization", viewer).status)
		require.Equal(t, http.StatusOK, e.do("GET", id, nil, "Authorization", admin).status, "the job is still there")
	})

	t.Run("a producer creates, a worker pops and finishes, an admin removes", func(t *testing.T) {
		producer, worker := basic("pat", "producer-pw"), basic("wes", "worker-pw")
		r := e.do("POST", "/job", `{"type":"sms"}`, "Authorization", producer)
		require.Equal(t, http.StatusCreated, r.status, r)
		require.Equal(t, http.StatusForbidden, e.do("POST", "/pop?type=sms", nil, "Authorization", producer).status)
		require.Equal(t, http.StatusForbidden, e.do("DELETE", "/job/"+itoa(job.ID), nil, "Authorization", producer).status)
		r = e.do("POST", "/pop?type=sms", nil, "Authorization", worker)
		require.Equal(t, http.StatusOK, r.status, r)
		require.Equal(t, http.StatusForbidden, e.do("GET", "/stats", nil, "Authorization", worker).status, "a worker calls no stats")
		require.Equal(t, http.StatusOK, e.do("DELETE", "/job/"+itoa(job.ID), nil, "Authorization", admin).status)
	})
}

func TestUsersSignInAndLogoutEndsTheSessionOnEveryServer(t *testing.T) {
	t.Parallel()
	key := []byte(strings.Repeat("k", httpapi.SessionKeyMinBytes))
	c := nodetest.NewCore(t, service.Config{})
	a := newEnvOn(t, c, httpapi.Config{Auth: lockedAuth, SessionKey: key})
	b := newEnvOn(t, c, httpapi.Config{Auth: lockedAuth, SessionKey: key})

	r := a.do("POST", "/login", url.Values{"user": {"vic"}, "password": {"nope"}}.Encode(), "Content-Type", formType)
	require.Equal(t, http.StatusUnauthorized, r.status)
	require.Contains(t, r.String(), "That user and password are not valid.")
	r = a.do("POST", "/login", url.Values{"user": {"vic"}, "password": {"viewer-pw"}}.Encode(), "Content-Type", formType)
	require.Equal(t, http.StatusSeeOther, r.status, r)
	pair, _, _ := strings.Cut(r.header.Get("Set-Cookie"), ";")
	require.NotContains(t, pair, "viewer-pw")
	require.Equal(t, http.StatusOK, a.do("GET", "/stats", nil, "Cookie", pair).status)
	require.Equal(t, http.StatusOK, b.do("GET", "/stats", nil, "Cookie", pair).status, "a server sharing the key")
	r = a.do("DELETE", "/job/1", nil, "Cookie", pair)
	require.Equal(t, http.StatusForbidden, r.status, "the session has its user's role")
	require.Contains(t, a.do("GET", "/", nil, "Cookie", pair).String(), `action="logout"`)

	r = a.do("POST", "/logout", nil, "Cookie", pair, "Sec-Fetch-Site", "same-origin")
	require.Equal(t, http.StatusSeeOther, r.status)
	require.Equal(t, http.StatusUnauthorized, a.do("GET", "/stats", nil, "Cookie", pair).status,
		"a copy of the cookie taken before logout is refused")
	require.Eventually(t, func() bool { return b.do("GET", "/stats", nil, "Cookie", pair).status == http.StatusUnauthorized },
		waitTimeout, 10*time.Millisecond, "the other server heard of the logout")

	_, pair2 := a.loginUser("vic", "viewer-pw")
	require.Equal(t, http.StatusOK, a.do("GET", "/stats", nil, "Cookie", pair2).status, "a new session is another session")
	changed := lockedAuth
	changed.Users = append([]httpapi.User{{Name: "vic", Password: "new-pw", Role: bus.RoleViewer}}, lockedAuth.Users[:3]...)
	d := newEnvOn(t, c, httpapi.Config{Auth: changed, SessionKey: key})
	require.Equal(t, http.StatusUnauthorized, d.do("GET", "/stats", nil, "Cookie", pair2).status, "a changed password ends its sessions")
}

func TestBadUsersAreRefusedNamingTheField(t *testing.T) {
	t.Parallel()
	ns := nodetest.NewCore(t, service.Config{}).NATS
	for _, tc := range []struct {
		users []httpapi.User
		want  string
	}{
		{[]httpapi.User{{Name: "ada", Password: "pw", Role: "boss"}}, `httpapi: auth: users[0].role: "boss" is not a role: use admin, core, promoter, worker, producer, viewer`},
		{[]httpapi.User{{Name: "ada", Role: bus.RoleAdmin}}, `httpapi: auth: users[0].password: required for user "ada"`},
		{[]httpapi.User{{Name: "a:b", Password: "pw", Role: bus.RoleAdmin}}, `httpapi: auth: users[0].name: "a:b": needs one or more characters, no ':' and no spaces`},
		{[]httpapi.User{{Name: "ada", Password: "pw", Role: bus.RoleAdmin}, {Name: "ada", Password: "pw", Role: bus.RoleViewer}}, `httpapi: auth: users[1].name: "ada" is also users[0]`},
	} {
		_, err := httpapi.New(httpapi.Config{Conn: ns.Conn, Auth: httpapi.Auth{Users: tc.users}})
		require.EqualError(t, err, tc.want)
	}
}

// loginUser posts the login form with a user and password.
func (e *env) loginUser(user, password string) (header, pair string) {
	e.t.Helper()
	r := e.do("POST", "/login", url.Values{"user": {user}, "password": {password}}.Encode(), "Content-Type", formType)
	require.Equal(e.t, http.StatusSeeOther, r.status, r)
	header = r.header.Get("Set-Cookie")
	pair, _, _ = strings.Cut(header, ";")
	return header, pair
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
