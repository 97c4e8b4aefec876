package httpapi

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// sessionCookie is the cookie a browser gets from POST /login. Its value is
// "<expiry unix seconds>.<id>.<user>.<mac>": until when it is valid, a
// random session id, the user it signs in (base64url; empty for the
// token), and a MAC proving that this server (or one with the same
// SessionKey) issued it. It holds neither the token nor the password nor
// anything derived from them that could be reversed.
const sessionCookie = "kuebus_session"

// SessionKeyMinBytes is the shortest Config.SessionKey New accepts.
const SessionKeyMinBytes = 32

// maxRevoked bounds the ended sessions a server remembers until their
// expiry; past it the one that expires first is forgotten (it would be
// refused soon anyway).
const maxRevoked = 100_000

// sessions issues and checks session cookies, and keeps the sessions that
// ended before their expiry.
//
// The MAC is HMAC-SHA256 under key over the version, the expiry, the id,
// the user and a hash of the credential the user signed in with (the
// token, or the user's password). The key is random per process unless
// configured, so that by default a restart signs everyone out and nothing
// on disk can forge a cookie; several servers behind one address share a
// configured key so that each accepts the others' cookies. The
// credential's hash is in the MAC so that changing a token or a password
// ends its sessions, even with a configured key.
//
// Logout is revocation on the server: the session's id goes into revoked
// (this server's memory) until its expiry, and the server announces it on
// bus.Subjects.HTTPLogout so that the others sharing the key refuse it too.
type sessions struct {
	key []byte
	ttl time.Duration

	mu      sync.Mutex
	revoked map[string]int64 // session id → its expiry, unix seconds
}

// session is what a valid cookie says.
type session struct {
	id     string
	user   string // "" for the token
	expiry int64  // unix seconds
}

func newSessions(key []byte, ttl time.Duration) *sessions {
	if len(key) == 0 {
		key = make([]byte, SessionKeyMinBytes)
		_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24+)
	}
	return &sessions{key: key, ttl: ttl, revoked: map[string]int64{}}
}

func (s *sessions) mac(expiry int64, id, user, credential string) []byte {
	m := hmac.New(sha256.New, s.key)
	fmt.Fprintf(m, "kuebus session v2\n%d\n%s\n%s\n", expiry, id, user)
	h := sha256.Sum256([]byte(credential))
	m.Write(h[:])
	return m.Sum(nil)
}

// issue returns the cookie of a session of user (signed in with
// credential) that starts at now. secure sets the Secure flag: the cookie
// then travels over TLS only.
func (s *sessions) issue(now time.Time, user, credential, path string, secure bool) *http.Cookie {
	expiry := now.Add(s.ttl)
	idBytes := make([]byte, 16)
	_, _ = rand.Read(idBytes)
	id := base64.RawURLEncoding.EncodeToString(idBytes)
	enc := base64.RawURLEncoding
	value := strings.Join([]string{
		strconv.FormatInt(expiry.Unix(), 10), id, enc.EncodeToString([]byte(user)),
		enc.EncodeToString(s.mac(expiry.Unix(), id, user, credential)),
	}, ".")
	return &http.Cookie{
		Name:     sessionCookie,
		Value:    value,
		Path:     path,
		Expires:  expiry,
		MaxAge:   int(s.ttl / time.Second),
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
		Secure:   secure,
	}
}

// valid returns the session of a cookie s issued that has not expired at
// now nor been revoked. credential gives the credential its user signs in
// with now (false: no such user any more). The MAC is compared in
// constant time.
func (s *sessions) valid(value string, now time.Time, credential func(user string) (string, bool)) (session, bool) {
	parts := strings.Split(value, ".")
	if len(parts) != 4 {
		return session{}, false
	}
	expiry, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || now.Unix() >= expiry {
		return session{}, false
	}
	user, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return session{}, false
	}
	cred, ok := credential(string(user))
	if !ok {
		return session{}, false
	}
	got, err := base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil || !hmac.Equal(got, s.mac(expiry, parts[1], string(user), cred)) {
		return session{}, false
	}
	s.mu.Lock()
	_, ended := s.revoked[parts[1]]
	s.mu.Unlock()
	if ended {
		return session{}, false
	}
	return session{id: parts[1], user: string(user), expiry: expiry}, true
}

// revoke ends the session id, which expires at expiry (unix seconds): its
// cookie is refused from now on. Sessions already expired at now are
// forgotten while at it.
func (s *sessions) revoke(id string, expiry int64, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Unix() >= expiry {
		return
	}
	if len(s.revoked) >= maxRevoked {
		first := ""
		for k, exp := range s.revoked {
			if now.Unix() >= exp {
				delete(s.revoked, k)
			} else if first == "" || exp < s.revoked[first] {
				first = k
			}
		}
		if len(s.revoked) >= maxRevoked {
			delete(s.revoked, first)
		}
	}
	s.revoked[id] = expiry
}

// cleared is the cookie that ends a session in the browser.
func cleared(path string, secure bool) *http.Cookie {
	return &http.Cookie{
		Name: sessionCookie, Value: "", Path: path, MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure,
	}
}
