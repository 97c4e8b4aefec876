package bus

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// Option configures a connection; it is nats.go's own option type, so any
// nats.Option (credentials, TLS, callbacks) can be passed.
type Option = nats.Option

// URLDefault is where the CLI and the worker look for NATS by default.
const URLDefault = "nats://127.0.0.1:4222"

// URLSchemes are the schemes of the NATS URLs kuebus connects to: plain
// NATS, NATS over TLS, and NATS over a WebSocket (nats.go's own). Any
// other scheme (http://) is refused rather than dialled as NATS.
var URLSchemes = []string{"nats", "tls", "ws", "wss"}

// CheckURL checks a NATS URL, or a comma-separated list of them as
// nats.go takes it: each must be SCHEME://[USER[:PASSWORD]@]HOST[:PORT]
// with a scheme of URLSchemes. The error quotes the URL with its password
// masked.
func CheckURL(urls string) error {
	for _, raw := range strings.Split(urls, ",") {
		raw = strings.TrimSpace(raw)
		u, err := url.Parse(raw)
		switch {
		case raw == "":
			return fmt.Errorf("%q: an empty URL; give nats://HOST:PORT", RedactURL(urls))
		case err != nil || u.Host == "" || u.Opaque != "":
			return fmt.Errorf("%q is not a URL like nats://HOST:PORT", RedactURL(raw))
		case !slices.Contains(URLSchemes, u.Scheme):
			return fmt.Errorf("%q: the scheme must be nats://, tls://, ws:// or wss://, not %s://", RedactURL(raw), u.Scheme)
		case u.Hostname() == "":
			return fmt.Errorf("%q has no host", RedactURL(raw))
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				return fmt.Errorf("%q: the port must be a number from 1 to 65535", RedactURL(raw))
			}
		}
	}
	return nil
}

// Connect dials NATS with kuebus's defaults: a client name, reconnects
// forever with a short wait (a restarted node comes back within a second),
// and a larger reconnect buffer so that events published during a blip are
// not dropped. Later options override earlier ones. Its error shows the
// URL with its password masked (RedactURL); a URL CheckURL refuses is not
// dialled. A call of a Client on a
// connection of a user that the server refuses (the user's role may not
// publish there) fails at once with ErrPermissionDenied.
func Connect(url, name string, opts ...Option) (*nats.Conn, error) {
	if err := CheckURL(url); err != nil {
		return nil, fmt.Errorf("bus: connect to NATS: %w", err)
	}
	base := []Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectJitter(100*time.Millisecond, time.Second),
		nats.ReconnectBufSize(16 << 20),
		nats.RetryOnFailedConnect(false),
	}
	nc, err := nats.Connect(url, append(append(base, opts...), watchRefusals())...)
	if err != nil {
		// nats.go's own error may quote the URL (one that does not parse).
		return nil, fmt.Errorf("bus: connect to NATS at %s: %w", RedactURL(url), redactedError{err})
	}
	if mayBeRefused(url, nc.Opts) {
		watched.Store(nc, &refusals{})
	}
	return nc, nil
}

// redactedError is an error whose text has its URLs' passwords masked
// (RedactURL); errors.Is and As see the error it wraps.
type redactedError struct{ err error }

func (e redactedError) Error() string { return RedactURL(e.err.Error()) }
func (e redactedError) Unwrap() error { return e.err }

// mayBeRefused reports whether the server can refuse this connection's
// publishes: only a user (password, nkey or credentials) has a role's
// permissions; an anonymous connection (an unlocked server) or a token
// (an admin) may publish anywhere. The refusal watch costs every call a
// context and two map operations under a lock, so the connections that
// cannot be refused, as a producer's on an unlocked dev node, go without.
func mayBeRefused(url string, o nats.Options) bool {
	return o.User != "" || o.Nkey != "" || o.UserJWT != nil || strings.Contains(url, "@")
}

// LoopbackHost reports whether a listen host is reachable from this
// machine only: a loopback IP or "localhost". "" and 0.0.0.0 (every
// interface) and any other name are not. The one rule behind every refusal
// of a wide listen address without auth (NATS, routes, memberlist, HTTP).
func LoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
