package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
)

// Error codes of the HTTP API beyond core's (bus.Code*).
const (
	codeUnauthorized = "unauthorized"
	codeForbidden    = "forbidden"
	codeTimeout      = "timeout"
	codeNoRoute      = "no_route"
	codeRateLimited  = "rate_limited"
)

// errorBody is the body of every error reply: {"error":{"code","message"}}.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// httpError is an error with the HTTP status and code it is answered with.
type httpError struct {
	status int
	code   string
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// badRequest is a 400 invalid: the message names the field and why, as
// core's do.
func badRequest(format string, args ...any) error {
	return &httpError{status: http.StatusBadRequest, code: string(bus.CodeInvalid), msg: fmt.Sprintf(format, args...)}
}

// statusOf maps an error to its HTTP status, code and message: core's codes
// to 400/404/409/503/500, a core that did not answer in time to 504.
func statusOf(err error) (int, string, string) {
	if he, ok := errors.AsType[*httpError](err); ok {
		return he.status, he.code, he.msg
	}
	if be, ok := errors.AsType[*bus.Error](err); ok {
		msg := be.Message
		if msg == "" {
			msg = string(be.Code)
		}
		switch be.Code {
		case bus.CodeInvalid:
			return http.StatusBadRequest, string(be.Code), msg
		case bus.CodeNotFound:
			return http.StatusNotFound, string(be.Code), msg
		case bus.CodeConflict:
			return http.StatusConflict, string(be.Code), msg
		case bus.CodeUnavailable:
			return http.StatusServiceUnavailable, string(be.Code), msg
		}
		return http.StatusInternalServerError, string(bus.CodeInternal), msg
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
		// A core took the request but did not answer: the change may or may
		// not have happened, so this is not "unavailable".
		return http.StatusGatewayTimeout, codeTimeout, "core did not answer in time; the change may or may not have happened: read the job before retrying"
	}
	if errors.Is(err, context.Canceled) {
		return http.StatusServiceUnavailable, string(bus.CodeUnavailable), "request cancelled"
	}
	return http.StatusInternalServerError, string(bus.CodeInternal), err.Error()
}

// writeError answers with err's status and the JSON error body. Internal
// errors are logged, since nobody else will see them.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, code, msg := statusOf(err)
	if status == http.StatusInternalServerError {
		s.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, status, errorBody{Error: errorDetail{Code: code, Message: msg}})
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data, _ = json.Marshal(errorBody{Error: errorDetail{Code: string(bus.CodeInternal), Message: "encode reply: " + err.Error()}})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// readBody reads a request body up to the configured limit. An oversize
// body is a 413 that says the limit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, &httpError{status: http.StatusRequestEntityTooLarge, code: string(bus.CodeInvalid),
				msg: fmt.Sprintf("body: over the limit of %d bytes", mbe.Limit)}
		}
		return nil, badRequest("body: %v", err)
	}
	return body, nil
}

// queryInt reads the query parameter name into *to when it is given: a
// value that is not an integer is a 400 that names the parameter. core
// checks the number's bounds.
func queryInt(qs url.Values, name string, to *int) error {
	raw := qs.Get(name)
	if raw == "" {
		return nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return badRequest("%s: %q is not an integer", name, raw)
	}
	*to = n
	return nil
}

// decodeBody reads a JSON body into v strictly: unknown fields, trailing
// data and wrong types are 400s that name the field (bus.Decode's messages).
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	if err := checkJSONType(r); err != nil {
		return err
	}
	return bus.Decode(body, v)
}

// checkJSONType refuses a body declared as something other than JSON (415),
// so that, say, a multipart upload is not half-read as JSON. It lets through
// no Content-Type and x-www-form-urlencoded, because `curl -d '{...}'` sends
// the latter by default with the JSON the user typed.
func checkJSONType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" || strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		return nil
	}
	return &httpError{status: http.StatusUnsupportedMediaType, code: string(bus.CodeInvalid),
		msg: fmt.Sprintf("Content-Type: %q is not application/json", ct)}
}
