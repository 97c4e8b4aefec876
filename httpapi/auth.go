package httpapi

import (
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

	"github.com/kuebus/kuebus/internal/httprule"
)

// Auth is who may use the server: a bearer token, a basic-auth user and
// password, or both (either is then accepted). The zero value lets everyone
// in.
//
// Browsers: with basic auth they ask for the password themselves; with a
// token, GET /login shows a form; the right token there gets a signed,
// expiring session cookie (HttpOnly, SameSite=Strict, Secure under TLS),
// which the dashboard and its event stream then send, and POST /logout
// clears. Wrong tokens and passwords are rate limited per address
// (limit.go).
type Auth struct {
	// Token is the bearer token: "Authorization: Bearer <Token>".
	Token string
	// User and Password are basic auth's; both or neither.
	User, Password string
}

// Enabled reports whether Auth lets only some in.
func (a *Auth) Enabled() bool { return a.Token != "" || a.User != "" }

func (a *Auth) validate() error {
	if (a.User == "") != (a.Password == "") {
		return errors.New("basic auth needs both a user and a password")
	}
	if strings.ContainsAny(a.User, ":") {
		return errors.New("basic auth user must not contain ':'")
	}
	return nil
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
// takes the API's token, which the cookie stands for), a bearer token,
// basic auth.
func (s *Server) check(a *Auth, r *http.Request) verdict {
	if a.Token != "" && a.Token == s.cfg.Auth.Token {
		if c, err := r.Cookie(sessionCookie); err == nil && s.sessions.valid(c.Value, s.now()) {
			return verdictAllowed
		}
	}
	header := r.Header.Get("Authorization")
	if header == "" {
		return verdictNone
	}
	if tok, ok := strings.CutPrefix(header, "Bearer "); ok && a.Token != "" && equal(tok, a.Token) {
		return verdictAllowed
	}
	if u, p, ok := r.BasicAuth(); ok && a.User != "" {
		// Both compared, so the time taken does not tell a right user.
		userOK, passwordOK := equal(u, a.User), equal(p, a.Password)
		if userOK && passwordOK {
			return verdictAllowed
		}
	}
	return verdictWrong
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

// tooMany answers 429: the address sent too many wrong credentials.
func tooMany(w http.ResponseWriter, wait time.Duration) {
	secs := retryAfter(w, wait)
	writeJSON(w, http.StatusTooManyRequests, errorBody{Error: errorDetail{Code: codeRateLimited,
		Message: fmt.Sprintf("too many wrong credentials from this address: try again in %d s", secs)}})
}

// equal compares secrets in constant time; hashing first hides the length.
func equal(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// require wraps h so that only requests a allows reach it. Others get a 401
// that names the schemes; a browser asking for a page with token auth only is
// sent to the login form instead.
func (s *Server) require(a *Auth, h http.Handler) http.Handler {
	if !a.Enabled() {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A request that sends a token or password is held back while its
		// address is limited, before the credentials are looked at.
		if r.Header.Get("Authorization") != "" {
			if wait := s.limit.held(clientAddr(r)); wait > 0 {
				tooMany(w, wait)
				return
			}
		}
		switch s.check(a, r) {
		case verdictAllowed:
			h.ServeHTTP(w, r)
			return
		case verdictWrong:
			s.limit.failed(clientAddr(r))
		}
		wantsPage := r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/html")
		if wantsPage && a.User == "" {
			http.Redirect(w, r, s.path("/login"), http.StatusSeeOther)
			return
		}
		var schemes []string
		if a.User != "" {
			schemes = append(schemes, `Basic realm="kuebus", charset="UTF-8"`)
		}
		if a.Token != "" {
			schemes = append(schemes, `Bearer realm="kuebus"`)
		}
		for _, sc := range schemes {
			w.Header().Add("WWW-Authenticate", sc)
		}
		writeJSON(w, http.StatusUnauthorized, errorBody{Error: errorDetail{Code: codeUnauthorized,
			Message: "this server needs credentials: " + strings.Join(a.schemeNames(), " or ")}})
	})
}

func (a *Auth) schemeNames() []string {
	var names []string
	if a.Token != "" {
		names = append(names, "Authorization: Bearer <token>")
	}
	if a.User != "" {
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
{{if .}}<p class="error">{{.}}</p>{{end}}
<label>Access token <input type="password" name="token" autofocus required></label>
<button type="submit">Sign in</button>
</form></body></html>`))

// login serves the token form (GET) and checks it (POST). It is reachable
// without credentials: it is how a browser gets them. A right token gets a
// session cookie (session.go), never the token itself; wrong ones count
// against the address's failed-login limit like any other credentials.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if r.Method == http.MethodGet {
		_ = loginPage.Execute(w, "")
		return
	}
	addr := clientAddr(r)
	if wait := s.limit.held(addr); wait > 0 {
		secs := retryAfter(w, wait)
		w.WriteHeader(http.StatusTooManyRequests)
		_ = loginPage.Execute(w, fmt.Sprintf("Too many wrong tokens from this address: try again in %d s.", secs))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	tok := r.PostFormValue("token")
	if s.cfg.Auth.Token == "" || !equal(tok, s.cfg.Auth.Token) {
		s.limit.failed(addr)
		w.WriteHeader(http.StatusUnauthorized)
		_ = loginPage.Execute(w, "That token is not valid.")
		return
	}
	http.SetCookie(w, s.sessions.issue(s.now(), s.cookiePath(), s.secureCookie(r)))
	http.Redirect(w, r, s.path("/"), http.StatusSeeOther)
}

// logout ends the browser's session: it clears the cookie and shows the
// login form. The cookie's MAC stays valid until its expiry (the server
// keeps no session list), so a copy taken before logout works until then;
// a restart, or a new token or session key, ends every session.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
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
