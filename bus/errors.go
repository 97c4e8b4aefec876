package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
)

// Code is the error code of an RPC reply, carried as a word in the
// Kuebus-Error-Code header and as a number (StatusOf) in
// Nats-Service-Error-Code.
type Code string

// The codes of DESIGN §3. Every error that crosses the wire has one of them.
const (
	CodeInvalid     Code = "invalid"     // bad input: the message names the field and why
	CodeNotFound    Code = "not_found"   // no such job
	CodeConflict    Code = "conflict"    // stale lease, wrong state
	CodeUnavailable Code = "unavailable" // Redis down, no core answering, shutting down
	CodeInternal    Code = "internal"    // a bug or an unexpected failure
)

// StatusOf is the number a code travels as in the Nats-Service-Error-Code
// header: the HTTP status of the same meaning.
func StatusOf(c Code) int {
	switch c {
	case CodeInvalid:
		return 400
	case CodeNotFound:
		return 404
	case CodeConflict:
		return 409
	case CodeUnavailable:
		return 503
	}
	return 500
}

// codeOfStatus reads a code from the number alone, for a reply without
// the Kuebus-Error-Code header (another micro service, or micro itself):
// a number it does not know is internal.
func codeOfStatus(status string) Code {
	for _, c := range []Code{CodeInvalid, CodeNotFound, CodeConflict, CodeUnavailable} {
		if status == strconv.Itoa(StatusOf(c)) {
			return c
		}
	}
	return CodeInternal
}

// Error is an error with a wire code. Errors from a remote service arrive as
// *Error; errors.Is matches them against the sentinels below by code.
type Error struct {
	Code    Code
	Message string
	// Cause is the transport error behind a code the client made up itself
	// (nats.ErrNoResponders for "no service answers"); nil for an error the
	// service sent.
	Cause error
}

// Unwrap returns the cause, so errors.Is(err, nats.ErrNoResponders) tells
// "nobody serves this" from a service that answered unavailable.
func (e *Error) Unwrap() error { return e.Cause }

func (e *Error) Error() string {
	if e.Message == "" {
		return "kuebus: " + string(e.Code)
	}
	return "kuebus: " + string(e.Code) + ": " + e.Message
}

// Is makes errors.Is(err, ErrNotFound) true for every *Error whose code is
// not_found, whatever its message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// Sentinels, one per code, for errors.Is.
var (
	ErrInvalid     = &Error{Code: CodeInvalid}
	ErrNotFound    = &Error{Code: CodeNotFound}
	ErrConflict    = &Error{Code: CodeConflict}
	ErrUnavailable = &Error{Code: CodeUnavailable}
	ErrInternal    = &Error{Code: CodeInternal}
)

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code Code, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the wire code for an error a handler returned: the code of an
// *Error in its chain, unavailable for a cancelled or timed-out context (the
// service is shutting down or the work outlived the caller), and internal for
// anything else.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return CodeUnavailable
	}
	return CodeInternal
}

// MessageOf is an error's message without its code: for an *Error its own
// message (the code travels apart, in the error headers or
// a field of its own), else the full text.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return err.Error()
}

// MaxErrorMessage bounds an error message on the wire, in bytes: a longer
// one is cut and ends in "…". A message that quotes a request field
// (a cron expression, a type) would otherwise be as long as the field,
// and a reply's headers must fit NATS's max payload.
const MaxErrorMessage = 1024

// headerSafe makes an error message fit a NATS header value, whatever
// user input it quotes: one line of printable UTF-8, every control
// character (NUL, CR, LF, DEL, C1) and every byte that is not UTF-8
// written as its Go escape (\x00, \r, \n, \u0085, \xff), cut to
// MaxErrorMessage bytes. The server calls it on every error it sends, so
// no method needs to.
func headerSafe(msg string) string {
	clean := true
	for _, r := range msg {
		if r == utf8.RuneError || unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean && len(msg) <= MaxErrorMessage {
		return msg
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		r, size := utf8.DecodeRuneInString(msg[i:])
		var piece string
		switch {
		case r == utf8.RuneError && size <= 1:
			piece = fmt.Sprintf(`\x%02x`, msg[i])
		case unicode.IsControl(r):
			q := strconv.QuoteRune(r) // '\x00', '\n', '\u0085'
			piece = q[1 : len(q)-1]
		default:
			piece = msg[i : i+size]
		}
		if b.Len()+len(piece) > MaxErrorMessage-len("…") {
			b.WriteString("…")
			break
		}
		b.WriteString(piece)
		i += size
	}
	return b.String()
}

// transportError turns a failure of the request itself into the error the
// caller should see: nobody listening means "down", not "slow".
func transportError(subject string, err error) error {
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return &Error{Code: CodeUnavailable, Message: "no service answers on " + subject, Cause: err}
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrDisconnected):
		return &Error{Code: CodeUnavailable, Message: subject + ": " + err.Error(), Cause: err}
	default:
		// context.DeadlineExceeded, context.Canceled and nats.ErrTimeout pass
		// through unchanged so callers can tell a slow answer from a refusal.
		return fmt.Errorf("bus: request %s: %w", subject, err)
	}
}
