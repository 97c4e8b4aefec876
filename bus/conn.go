package bus

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// Option configures a connection; it is nats.go's own option type, so any
// nats.Option (credentials, TLS, callbacks) can be passed.
type Option = nats.Option

// URLDefault is where the CLI and the worker look for NATS by default.
const URLDefault = "nats://127.0.0.1:4222"

// Connect dials NATS with kuebus's defaults: a client name, reconnects
// forever with a short wait (a restarted node comes back within a second),
// and a larger reconnect buffer so that events published during a blip are
// not dropped. Later options override earlier ones. Its error shows the
// URL with its password masked (RedactURL). A call of a Client on a
// connection of a user that the server refuses (the user's role may not
// publish there) fails at once with ErrPermissionDenied.
func Connect(url, name string, opts ...Option) (*nats.Conn, error) {
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
