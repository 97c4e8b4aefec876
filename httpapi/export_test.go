package httpapi

import "time"

// SetClock makes s read the time from now: session expiry and the
// failed-login limit. Call it before the first request.
func SetClock(s *Server, now func() time.Time) { s.now = now }
