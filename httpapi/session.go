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
	"time"
)

// sessionCookie is the cookie a browser gets from POST /login. Its value is
// "<expiry unix seconds>.<mac>": it says until when it is valid and proves
// that this server (or one with the same SessionKey) issued it. It holds
// neither the token nor anything derived from it that could be reversed.
const sessionCookie = "kuebus_session"

// SessionKeyMinBytes is the shortest Config.SessionKey New accepts.
const SessionKeyMinBytes = 32

// sessions issues and checks session cookies.
//
// The MAC is HMAC-SHA256 under key over the version, the expiry and a hash
// of the token. The key is random per process unless configured, so that by
// default a restart signs everyone out and nothing on disk can forge a
// cookie; several servers behind one address share a configured key so
// that each accepts the others' cookies. The token's hash is in the MAC so
// that changing the token ends every session, even with a configured key.
type sessions struct {
	key       []byte
	tokenHash [sha256.Size]byte
	ttl       time.Duration
}

func newSessions(key []byte, token string, ttl time.Duration) *sessions {
	if len(key) == 0 {
		key = make([]byte, SessionKeyMinBytes)
		_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24+)
	}
	return &sessions{key: key, tokenHash: sha256.Sum256([]byte(token)), ttl: ttl}
}

func (s *sessions) mac(expiry int64) []byte {
	m := hmac.New(sha256.New, s.key)
	fmt.Fprintf(m, "kuebus session v1\n%d\n", expiry)
	m.Write(s.tokenHash[:])
	return m.Sum(nil)
}

// issue returns the cookie of a session that starts at now. secure sets
// the Secure flag: the cookie then travels over TLS only.
func (s *sessions) issue(now time.Time, path string, secure bool) *http.Cookie {
	expiry := now.Add(s.ttl)
	return &http.Cookie{
		Name:     sessionCookie,
		Value:    strconv.FormatInt(expiry.Unix(), 10) + "." + base64.RawURLEncoding.EncodeToString(s.mac(expiry.Unix())),
		Path:     path,
		Expires:  expiry,
		MaxAge:   int(s.ttl / time.Second),
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
		Secure:   secure,
	}
}

// valid reports whether value is a cookie s issued that has not expired at
// now. The MAC is compared in constant time.
func (s *sessions) valid(value string, now time.Time) bool {
	exp, sig, ok := strings.Cut(value, ".")
	if !ok {
		return false
	}
	expiry, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || now.Unix() >= expiry {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	return err == nil && hmac.Equal(got, s.mac(expiry))
}

// cleared is the cookie that ends a session in the browser.
func cleared(path string, secure bool) *http.Cookie {
	return &http.Cookie{
		Name: sessionCookie, Value: "", Path: path, MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure,
	}
}
