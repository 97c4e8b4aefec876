package httprule

import (
	"errors"
	"fmt"
	"net"

	"github.com/kuebus/kuebus/bus"
)

// ErrInsecureBind is returned for a non-loopback address without auth.
// Its text names httpapi: it is httpapi.ErrInsecureBind, the error New
// returns.
var ErrInsecureBind = errors.New("httpapi: refusing to serve a non-loopback address without auth")

// Bind enforces the bind rule: an address others can reach needs auth,
// unless insecure is set. Only literal loopback IPs and "localhost" count as
// loopback (bus.LoopbackHost); an empty host, 0.0.0.0, :: and other names
// listen for everyone.
func Bind(addr string, auth, insecure bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("httpapi: address %q is not HOST:PORT: %w", addr, err)
	}
	if auth || insecure || bus.LoopbackHost(host) {
		return nil
	}
	return fmt.Errorf("%w: %s can be reached from other machines, and anyone who reaches it could read, change and remove jobs: configure a token or basic auth, or allow it explicitly", ErrInsecureBind, addr)
}
