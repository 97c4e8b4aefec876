package httpapi

import "time"

// SetClock makes s read the time from now: session expiry and the
// failed-login limit. Call it before the first request.
func SetClock(s *Server, now func() time.Time) { s.now = now }

// SetPause makes s call pause where a held address's wrong try keeps its
// line for d (instead of waiting d). Call it before the first request.
func SetPause(s *Server, pause func(d time.Duration)) { s.pause = pause }

// Route is one route of the server, as the router has it.
type Route struct {
	Pattern string // "METHOD /path", the ServeMux pattern
	// Anonymous routes need no credentials.
	Anonymous bool
}

// Routes lists every route s serves.
func Routes(s *Server) []Route {
	out := make([]Route, len(s.table))
	for i, r := range s.table {
		out[i] = Route{Pattern: r.pattern, Anonymous: r.anonymous}
	}
	return out
}
