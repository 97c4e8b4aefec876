package core

import "github.com/kuebus/kuebus/bus"

// Sentinels for errors.Is, valid on both sides of the wire: a core method that
// fails with a code returns a *bus.Error that matches the sentinel of that
// code, and the client gets back an equal one.
var (
	// ErrInvalid: bad input; the message names the field and why.
	ErrInvalid = bus.ErrInvalid
	// ErrNotFound: no job with that id.
	ErrNotFound = bus.ErrNotFound
	// ErrConflict: a stale lease token, or a job in the wrong state.
	ErrConflict = bus.ErrConflict
	// ErrUnavailable: Redis is down, no core answers, or core is stopping.
	ErrUnavailable = bus.ErrUnavailable
	// ErrInternal: a bug or an unexpected failure; core logged it.
	ErrInternal = bus.ErrInternal
)

// Invalidf is the invalid error of a request field, worded "field: why".
func Invalidf(field, format string, args ...any) error {
	return bus.Errorf(bus.CodeInvalid, field+": "+format, args...)
}

// JobNotFound is the not_found error of a job id, worded the same wherever
// it is raised.
func JobNotFound(id int64) error {
	return bus.Errorf(bus.CodeNotFound, "job %d not found", id)
}
