package core

import (
	"errors"
	"strings"
)

// A job keeps the W3C trace context of the create that made it, so that
// the span of the worker that runs it, maybe hours later and in another
// process, continues the creator's trace. Only the traceparent is kept
// (https://www.w3.org/TR/trace-context/#traceparent-header): it names the
// trace and the parent span, which is all a child span needs. tracestate,
// vendors' extra data, is not kept.
//
// Core needs no tracing library for this: it checks the text and copies
// it. The Go integrations are core/coreotel and worker/workerotel.

// TraceparentLen is the length of a traceparent of version 00, the one
// kept: "00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>".
const TraceparentLen = 55

// CheckTraceparent says why tp is not a traceparent a job can keep, or
// nil: four lowercase hex fields of 2, 32, 16 and 2 digits joined by
// dashes, a version other than ff, a trace id and a parent id that are not
// all zeros (W3C trace context, level 1). A later version's longer form is
// refused as well: the version 00 form is what every propagator writes.
func CheckTraceparent(tp string) error {
	if len(tp) != TraceparentLen {
		return errors.New("not a W3C traceparent: want 55 characters, 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>")
	}
	parts := strings.Split(tp, "-")
	if len(parts) != 4 || len(parts[0]) != 2 || len(parts[1]) != 32 || len(parts[2]) != 16 || len(parts[3]) != 2 {
		return errors.New("not a W3C traceparent: want 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>")
	}
	for _, p := range parts {
		if !lowerHex(p) {
			return errors.New("not a W3C traceparent: its fields are lowercase hex digits")
		}
	}
	switch {
	case parts[0] == "ff":
		return errors.New("traceparent version ff is invalid")
	case strings.Trim(parts[1], "0") == "":
		return errors.New("traceparent trace id is all zeros")
	case strings.Trim(parts[2], "0") == "":
		return errors.New("traceparent parent id is all zeros")
	}
	return nil
}

func lowerHex(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
