package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kuebus/kuebus/bus"
)

// redactURL hides passwords and tokens in one or more comma-separated URLs,
// or in any text that quotes them, before they go into a message or a log
// line.
func redactURL(s string) string { return bus.RedactURL(s) }

// redactHandler masks the URL passwords in every log line of the process:
// in its message and in its string, error and Stringer values, however
// deep an error wraps the URL. fail does the same for the error a command
// ends with.
type redactHandler struct{ next slog.Handler }

func newRedactLogger(h slog.Handler) *slog.Logger { return slog.New(redactHandler{h}) }

func (h redactHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h redactHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, redactURL(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = redactAttr(a)
	}
	return redactHandler{h.next.WithAttrs(red)}
}

func (h redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{h.next.WithGroup(name)}
}

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, redactURL(v.String()))
	case slog.KindGroup:
		group := v.Group()
		red := make([]any, len(group))
		for i, g := range group {
			red[i] = redactAttr(g)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		// An error's text, a Stringer's or a slice's: replaced by its
		// masked text only when it carries a password.
		var s string
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		default:
			s = fmt.Sprint(x)
		}
		if red := redactURL(s); red != s {
			return slog.String(a.Key, red)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
