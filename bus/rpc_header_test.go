package bus_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
)

func TestErrorMessagesAreSafeNATSHeaderValues(t *testing.T) {
	t.Parallel()
	ns := bustest.NewServer(t)
	subj, _ := bus.NewSubjects("")
	srv, err := bus.NewServer(ns.Conn, bus.ServerConfig{Name: "quote"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	// The handler quotes its input raw, as a library's error may (robfig's
	// cron parser does): the server must make it safe, whatever it is.
	require.NoError(t, bus.Handle(srv, "quote", subj.Core("quote"), func(_ context.Context, r *echoReq) (*echoResp, error) {
		return nil, bus.Errorf(bus.CodeInvalid, "word: bad %s", r.Word)
	}))
	require.NoError(t, srv.Ready())
	client := bus.NewClient(bustest.Connect(t, ns.ClientURL()), 5*time.Second)

	long := strings.Repeat("x", 512<<10)
	for _, tc := range []struct{ name, word, want string }{
		{"a NUL is escaped", "a\x00b", `word: bad a\x00b`},
		{"CR and LF cannot start a header of their own", "a\r\nX-Injected: yes", `word: bad a\r\nX-Injected: yes`},
		{"DEL and C1 controls are escaped", "a\x7f\u0085b", `word: bad a\x7f\u0085b`},
		{"printable UTF-8 stays", "naïve ✓", "word: bad naïve ✓"},
		{"half a megabyte is cut to the bound", long, "word: bad " + long[:bus.MaxErrorMessage-len("word: bad ")-len("…")] + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body, err := bus.Encode(echoReq{Word: tc.word})
			require.NoError(t, err)
			msg, err := ns.Conn.Request(subj.Core("quote"), body, 5*time.Second)
			require.NoError(t, err, "a reply came, not a timeout")
			require.Equal(t, tc.want, msg.Header.Get(bus.HeaderError))
			require.Empty(t, msg.Header.Get("X-Injected"))
			require.Len(t, msg.Header, 3, "the three error headers, no more")
			require.LessOrEqual(t, len(msg.Header.Get(bus.HeaderError)), bus.MaxErrorMessage)
			require.True(t, utf8.ValidString(msg.Header.Get(bus.HeaderError)))

			err = client.Call(context.Background(), subj.Core("quote"), echoReq{Word: tc.word}, nil)
			require.ErrorIs(t, err, bus.ErrInvalid)
			require.Equal(t, tc.want, bus.MessageOf(err))
		})
	}
}
