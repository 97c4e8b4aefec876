package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"strings"
)

// Auth is who may use the server: a bearer token, a basic-auth user and
// password, or both (either is then accepted). The zero value lets everyone
// in.
//
// Browsers: with basic auth they ask for the password themselves; with a
// token, GET /login shows a form that stores the token in an HttpOnly,
// SameSite=Strict cookie, which the dashboard and its event stream then send.
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
var ErrInsecureBind = errors.New("httpapi: refusing to serve a non-loopback address without auth")

// CheckBind enforces the bind rule: an address others can reach needs auth,
// unless insecure is set. Only literal loopback IPs and "localhost" count as
// loopback; an empty host, 0.0.0.0, :: and other names listen for everyone.
func CheckBind(addr string, auth, insecure bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("httpapi: address %q is not HOST:PORT: %w", addr, err)
	}
	if auth || insecure || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("%w: %s can be reached from other machines, and anyone who reaches it could read, change and remove jobs: configure a token or basic auth, or allow it explicitly", ErrInsecureBind, addr)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// authCookie carries the token for browsers that logged in through /login.
const authCookie = "kuebus_token"

// allows reports whether r carries credentials that a accepts.
func (a *Auth) allows(r *http.Request) bool {
	if !a.Enabled() {
		return true
	}
	if a.Token != "" {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && equal(tok, a.Token) {
			return true
		}
		if c, err := r.Cookie(authCookie); err == nil && equal(c.Value, a.Token) {
			return true
		}
	}
	if a.User != "" {
		if u, p, ok := r.BasicAuth(); ok && equal(u, a.User) && equal(p, a.Password) {
			return true
		}
	}
	return false
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
		if a.allows(r) {
			h.ServeHTTP(w, r)
			return
		}
		wantsPage := r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/html")
		if wantsPage && a.User == "" {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
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
<link rel="stylesheet" href="/assets/style.css"></head>
<body class="login"><form method="post" action="/login" class="card">
<h1>kuebus</h1>
{{if .}}<p class="error">{{.}}</p>{{end}}
<label>Access token <input type="password" name="token" autofocus required></label>
<button type="submit">Sign in</button>
</form></body></html>`))

// login serves the token form (GET) and checks it (POST). It is reachable
// without credentials: it is how a browser gets them.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if r.Method == http.MethodGet {
		_ = loginPage.Execute(w, "")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	tok := r.PostFormValue("token")
	if s.cfg.Auth.Token == "" || !equal(tok, s.cfg.Auth.Token) {
		w.WriteHeader(http.StatusUnauthorized)
		_ = loginPage.Execute(w, "That token is not valid.")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: authCookie, Value: tok, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
