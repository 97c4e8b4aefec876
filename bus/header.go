package bus

import (
	"context"

	"github.com/nats-io/nats.go"
)

// A request may carry NATS headers beside its body: the W3C trace context
// (HeaderTraceparent) is one. They travel in the call's context, so that
// a client's middleware can set them without a parameter on every call:
// WithHeader on the way out, which Client.Call copies onto the message;
// RequestHeader on the way in, which the server's Handle puts in the
// context of the handler.

type (
	outgoingKey struct{}
	incomingKey struct{}
)

// WithHeader returns a context whose calls (Client.Call) send the header
// key: value beside the body, with the headers ctx carried already. The
// headers of ctx are not changed: each context has its own copy.
func WithHeader(ctx context.Context, key, value string) context.Context {
	h := nats.Header{}
	for k, v := range OutgoingHeader(ctx) {
		h[k] = v
	}
	h.Set(key, value)
	return context.WithValue(ctx, outgoingKey{}, h)
}

// OutgoingHeader returns the headers a call with ctx sends (WithHeader),
// nil when none. The caller must not change them.
func OutgoingHeader(ctx context.Context) nats.Header {
	h, _ := ctx.Value(outgoingKey{}).(nats.Header)
	return h
}

// RequestHeader returns the headers of the request a handler serves, nil
// when it had none. The handler must not change them.
func RequestHeader(ctx context.Context) nats.Header {
	h, _ := ctx.Value(incomingKey{}).(nats.Header)
	return h
}

// withRequestHeader is ctx with the headers of the request it serves.
func withRequestHeader(ctx context.Context, h nats.Header) context.Context {
	if len(h) == 0 {
		return ctx
	}
	return context.WithValue(ctx, incomingKey{}, h)
}
