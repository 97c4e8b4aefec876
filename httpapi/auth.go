package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/internal/httprule"
)

// Auth is who may use the server: a bearer token, a basic-auth user and
// password, named users with roles, or any of them together (each is then
// accepted). The zero value lets everyone in, as admin.
//
// The token and the basic-auth user are admins. Users have the role of
// their NATS user on a locked node (bus.Role): each route asks of an HTTP
// user what the core methods it calls ask of a NATS user of the same role
// (bus.Role.MayCall), so a viewer reads, a producer also creates, a worker
// pops and finishes, and only an admin removes, cancels, retries, pauses
// and schedules; anyone else gets 403.
//
// Browsers: with basic auth alone they ask for the password themselves;
// with a token or users, GET /login shows a form, and the right token or
// user and password there get a signed, expiring session cookie (HttpOnly,
// SameSite=Strict, Secure under TLS), which the dashboard and its event
// stream then send, and POST /logout ends on the server. Wrong tokens and
// passwords are rate limited per address (limit.go), right ones never.
type Auth struct {
	// Token is the bearer token: "Authorization: Bearer <Token>".
	Token string
	// User and Password are basic auth's; both or neither.
	User, Password string
	// Users sign in with basic auth or the login form, each with its role.
	Users []User
}

// User is one named user of the HTTP API.
type User struct {
	// Name and Password are what the user signs in with: basic auth's, or
	// the login form's.
	Name, Password string
	// Role is what the user may do, as a NATS user of the role may.
	Role bus.Role
}

// Enabled reports whether Auth lets only some in.
func (a *Auth) Enabled() bool { return a.Token != "" || a.User != "" || len(a.Users) > 0 }

// forms reports whether the login form serves a: it takes the token and
// users' passwords (basic auth alone is the browser's to ask for).
func (a *Auth) forms() bool { return a.Token != "" || len(a.Users) > 0 }

func (a *Auth) validate() error {
	if (a.User == "") != (a.Password == "") {
		return errors.New("basic auth needs both a user and a password")
	}
	if strings.ContainsAny(a.User, ":") {
		return errors.New("basic auth user must not contain ':'")
	}
	seen := map[string]int{}
	for i, u := range a.Users {
		switch {
		case u.Name == "" || strings.ContainsAny(u.Name, ": \t\r\n"):
			return fmt.Errorf("users[%d].name: %q: needs one or more characters, no ':' and no spaces", i, u.Name)
		case u.Password == "":
			return fmt.Errorf("users[%d].password: required for user %q", i, u.Name)
		case u.Name == a.User:
			return fmt.Errorf("users[%d].name: %q is also the basic-auth user", i, u.Name)
		}
		if j, twice := seen[u.Name]; twice {
			return fmt.Errorf("users[%d].name: %q is also users[%d]", i, u.Name, j)
		}
		seen[u.Name] = i
		if _, err := bus.ParseRole(string(u.Role)); err != nil {
			return fmt.Errorf("users[%d].role: %w", i, err)
		}
	}
	return nil
}

// user returns the named user's password and role: a configured user, or
// the basic-auth one (an admin).
func (a *Auth) user(name string) (password string, role bus.Role, ok bool) {
	if name != "" && name == a.User {
		return a.Password, bus.RoleAdmin, true
	}
	for _, u := range a.Users {
		if u.Name == name {
			return u.Password, u.Role, true
		}
	}
	return "", "", false
}

// credential is what a session of user signed in with: the token for
// user "", else the user's password. A session whose credential changed
// (or whose user is gone) is no longer valid.
func (a *Auth) credential(user string) (string, bool) {
	if user == "" {
		return a.Token, a.Token != ""
	}
	pw, _, ok := a.user(user)
	return pw, ok
}

// principal is who made a request: a user, or "" for the token.
type principal struct {
	name string
	role bus.Role
}

func (p principal) String() string {
	if p.name == "" {
		return "the token (" + string(p.role) + ")"
	}
	return "user " + p.name + " (" + string(p.role) + ")"
}

type principalKey struct{}

// principalOf is who made r: false when the server has no auth, which lets
// everyone in as admin.
func principalOf(r *http.Request) (principal, bool) {
	p, ok := r.Context().Value(principalKey{}).(principal)
	return p, ok
}

// ErrInsecureBind is returned by New for a non-loopback address without auth.
var ErrInsecureBind = httprule.ErrInsecureBind

// CheckBind enforces the bind rule: an address others can reach needs auth,
// unless insecure is set. Only literal loopback IPs and "localhost" count as
// loopback; an empty host, 0.0.0.0, :: and other names listen for everyone.
// The rule is internal/httprule's, which a node's config applies too.
func CheckBind(addr string, auth, insecure bool) error {
	return httprule.Bind(addr, auth, insecure)
}

// verdict is what checking a request's credentials found.
type verdict int

const (
	verdictNone    verdict = iota // no credentials (or only a stale cookie): not a guess
	verdictAllowed                // credentials a accepts
	verdictWrong                  // a token or password that a does not accept: a guess
)

// check looks at r's credentials for a: a session cookie (only where a
// takes what the session was signed in with), a bearer token, basic auth.
func (s *Server) check(a *Auth, r *http.Request) (verdict, principal) {
	if a.forms() {
		if c, err := r.Cookie(sessionCookie); err == nil {
			if ses, ok := s.sessions.valid(c.Value, s.now(), a.credential); ok {
				role := bus.RoleAdmin
				if ses.user != "" {
					_, role, _ = a.user(ses.user)
				}
				return verdictAllowed, principal{name: ses.user, role: role}
			}
		}
	}
	header := r.Header.Get("Authorization")
	if header == "" {
		return verdictNone, principal{}
	}
	if tok, ok := strings.CutPrefix(header, "Bearer "); ok && a.Token != "" && equal(tok, a.Token) {
		return verdictAllowed, principal{role: bus.RoleAdmin}
	}
	if u, p, ok := r.BasicAuth(); ok {
		if role, ok := a.password(u, p); ok {
			return verdictAllowed, principal{name: u, role: role}
		}
	}
	return verdictWrong, principal{}
}

// password checks a user's name and password, in the same time whether
// the user exists or not, so that the time taken does not tell a name.
func (a *Auth) password(name, password string) (bus.Role, bool) {
	want, role, known := a.user(name)
	if !known {
		want = "\x00no such user"
	}
	right := equal(password, want)
	return role, known && right
}

// clientAddr is the address the failed-login limit counts r under: the
// connection's IPv4 address, or the /64 network of its IPv6 address (one
// machine commonly holds a whole /64, and could otherwise take a fresh
// address, with a fresh bucket, for every guess).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return host
	case ip.To4() != nil:
		return ip.To4().String() // also for ::ffff:a.b.c.d
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// retryAfter sets Retry-After to wait in whole seconds, rounded up, and
// returns them.
func retryAfter(w http.ResponseWriter, wait time.Duration) int64 {
	secs := max(int64((wait+time.Second-1)/time.Second), 1)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	return secs
}

// tooMany answers 429: the address sent too many wrong credentials, and
// its line of requests to check is full (limit.go).
func tooMany(w http.ResponseWriter, wait time.Duration) {
	secs := retryAfter(w, wait)
	writeJSON(w, http.StatusTooManyRequests, errorBody{Error: errorDetail{Code: codeRateLimited,
		Message: fmt.Sprintf("too many wrong credentials from this address, and too many of its requests waiting to be checked: try again in %d s", secs)}})
}

// equal compares secrets in constant time; hashing first hides the length.
func equal(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// require wraps h so that only requests a allows reach it, with who sent
// them in their context (principalOf). Others get a 401 that names the
// schemes; a browser asking for a page where the login form serves is sent
// there instead.
func (s *Server) require(a *Auth, h http.Handler) http.Handler {
	if !a.Enabled() {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr := clientAddr(r)
		v, p := verdictNone, principal{}
		if r.Header.Get("Authorization") != "" && s.limit.held(addr) > 0 {
			// Held: checked in the address's line, one at a time; a
			// wrong try keeps the line until its token is back.
			leave, ok := s.limit.enter(r.Context(), s.stop, addr)
			if !ok {
				tooMany(w, s.limit.held(addr))
				return
			}
			if v, p = s.check(a, r); v == verdictWrong {
				s.limit.failed(addr)
				s.pause(s.limit.debt(addr))
			}
			leave()
		} else if v, p = s.check(a, r); v == verdictWrong {
			s.limit.failed(addr)
		}
		if v == verdictAllowed {
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
			return
		}
		wantsPage := r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/html")
		if wantsPage && a.forms() {
			http.Redirect(w, r, s.path("/login"), http.StatusSeeOther)
			return
		}
		var schemes []string
		if a.User != "" || len(a.Users) > 0 {
			schemes = append(schemes, `Basic realm="kuebus", charset="UTF-8"`)
		}
		if a.Token != "" {
			schemes = append(schemes, `Bearer realm="kuebus"`)
		}
		for _, sc := range schemes {
			w.Header().Add("WWW-Authenticate", sc)
		}
		msg := "this server needs credentials: " + strings.Join(a.schemeNames(), " or ")
		if v == verdictWrong {
			msg = "wrong credentials: this server needs " + strings.Join(a.schemeNames(), " or ")
		}
		writeJSON(w, http.StatusUnauthorized, errorBody{Error: errorDetail{Code: codeUnauthorized, Message: msg}})
	})
}

// need is what a route asks of the role of whoever calls it: every core
// method it calls (bus.Role.MayCall), and the events for GET /events. A
// zero need asks only that the caller signed in.
type need struct {
	methods []string
	events  bool
}

// allows reports whether role meets n, and if not, what it lacks.
func (n need) allows(role bus.Role) (string, bool) {
	for _, m := range n.methods {
		if !role.MayCall(m) {
			return "core." + m, false
		}
	}
	if n.events && !role.ReadsEvents() {
		return "the job and queue events", false
	}
	return "", true
}

// allow wraps h so that only a caller whose role meets n reaches it;
// others get 403 naming what their role lacks. Without auth every caller
// is an admin.
func (s *Server) allow(n need, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := principalOf(r)
		if !ok {
			h.ServeHTTP(w, r)
			return
		}
		if lacks, ok := n.allows(p.role); !ok {
			writeJSON(w, http.StatusForbidden, errorBody{Error: errorDetail{Code: codeForbidden,
				Message: fmt.Sprintf("%s may not %s %s: it needs %s, which the %s role may not use", p, r.Method, r.URL.Path, lacks, p.role)}})
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (a *Auth) schemeNames() []string {
	var names []string
	if a.Token != "" {
		names = append(names, "Authorization: Bearer <token>")
	}
	if a.User != "" || len(a.Users) > 0 {
		names = append(names, "basic auth")
	}
	return names
}

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kuebus · sign in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="assets/style.css"></head>
<body class="login"><form method="post" action="login" class="card">
<h1>kuebus</h1>
{{if .Error}}<p class="error">{{.Error}}</p>{{end}}
{{if .Users}}<label>User <input name="user" autocomplete="username" autofocus></label>
<label>Password <input type="password" name="password" autocomplete="current-password"></label>
{{end}}{{if .Token}}<label>{{if .Users}}Or access token{{else}}Access token{{end}} <input type="password" name="token"{{if not .Users}} autofocus required{{end}}></label>
{{end}}<button type="submit">Sign in</button>
</form></body></html>`))

// loginView is what the login page shows.
type loginView struct {
	Users, Token bool
	Error        string
}

// login serves the sign-in form (GET) and checks it (POST). It is
// reachable without credentials: it is how a browser gets them. A right
// token, or user and password, gets a session cookie (session.go), never
// the secret itself; wrong ones count against the address's failed-login
// limit like any other credentials, and from a held address they are
// checked in its line (limit.go).
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	a := &s.cfg.Auth
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	view := loginView{Users: len(a.Users) > 0, Token: a.Token != ""}
	if r.Method == http.MethodGet {
		_ = loginPage.Execute(w, view)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	_ = r.ParseForm()
	tok, name, pw := r.PostFormValue("token"), r.PostFormValue("user"), r.PostFormValue("password")
	check := func() (user, credential string, ok bool) {
		if tok != "" {
			return "", tok, a.Token != "" && equal(tok, a.Token)
		}
		_, ok = a.password(name, pw)
		return name, pw, ok
	}
	if tok == "" && name == "" {
		// Nothing to check: not a guess.
		w.WriteHeader(http.StatusUnauthorized)
		view.Error = "Give a user and password, or a token."
		if !view.Users {
			view.Error = "Give the access token."
		}
		_ = loginPage.Execute(w, view)
		return
	}
	addr := clientAddr(r)
	var user, credential string
	var ok bool
	if s.limit.held(addr) > 0 {
		leave, entered := s.limit.enter(r.Context(), s.stop, addr)
		if !entered {
			secs := retryAfter(w, s.limit.held(addr))
			w.WriteHeader(http.StatusTooManyRequests)
			view.Error = fmt.Sprintf("Too many sign-ins from this address at once: try again in %d s.", secs)
			_ = loginPage.Execute(w, view)
			return
		}
		if user, credential, ok = check(); !ok {
			s.limit.failed(addr)
			s.pause(s.limit.debt(addr))
		}
		leave()
	} else if user, credential, ok = check(); !ok {
		s.limit.failed(addr)
	}
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		view.Error = "That token is not valid."
		if tok == "" && name != "" {
			view.Error = "That user and password are not valid."
		}
		_ = loginPage.Execute(w, view)
		return
	}
	http.SetCookie(w, s.sessions.issue(s.now(), user, credential, s.cookiePath(), s.secureCookie(r)))
	http.Redirect(w, r, s.path("/"), http.StatusSeeOther)
}

// logout ends the browser's session on the server: the session's id is
// refused from then on, here and (announced on bus.Subjects.HTTPLogout) on
// every other server of the deployment, so a copy of the cookie taken
// before is worth nothing. It clears the cookie and shows the login form.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if c, err := r.Cookie(sessionCookie); err == nil {
		if ses, ok := s.sessions.valid(c.Value, s.now(), s.cfg.Auth.credential); ok {
			s.sessions.revoke(ses.id, ses.expiry, s.now())
			s.announceLogout(ses)
		}
	}
	http.SetCookie(w, cleared(s.cookiePath(), s.secureCookie(r)))
	http.Redirect(w, r, s.path("/login"), http.StatusSeeOther)
}

// cookiePath is the session cookie's path: the base path, so that a
// browser sends it to this server's routes only.
func (s *Server) cookiePath() string { return s.path("/") }

// secureCookie reports whether the session cookie gets the Secure flag:
// when the server serves TLS, or the request came over TLS.
func (s *Server) secureCookie(r *http.Request) bool {
	return s.tls != nil || r.TLS != nil
}
