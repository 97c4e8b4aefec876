package bus_test

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
)

func TestRedactURL(t *testing.T) {
	t.Parallel()
	_, parseErr := url.Parse("nats://w1:pa ss@127.0.0.1:4222")
	for _, tc := range []struct{ name, in, want string }{
		{"a URL without userinfo stays", "nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"a password is masked, the user stays", "nats://w1:secret@h:4222", "nats://w1:xxxxx@h:4222"},
		{"a bare token is masked", "nats://token@h:4222", "nats://xxxxx@h:4222"},
		{"every URL of a list is masked",
			"nats://u:secret@h:4222,nats://token@g:4222,nats://h2:1",
			"nats://u:xxxxx@h:4222,nats://xxxxx@g:4222,nats://h2:1"},
		{"a password with @ and : is masked whole", "redis://:p@ss:w@h:6379/0", "redis://:xxxxx@h:6379/0"},
		{"URLs inside a message are masked however deep the wrap",
			"NATS at nats://w1:xxxxx@h:4222 refused the connection: bus: connect to NATS at nats://w1:secret@h:4222: nats: authorization violation",
			"NATS at nats://w1:xxxxx@h:4222 refused the connection: bus: connect to NATS at nats://w1:xxxxx@h:4222: nats: authorization violation"},
		{"a URL that does not parse is masked", "connect: nats://w1:secret@h:port: invalid port", "connect: nats://w1:xxxxx@h:port: invalid port"},
		{"net/url's quoted URL is masked to its closing quote", parseErr.Error(), `parse "nats://w1:xxxxx@127.0.0.1:4222": net/url: invalid userinfo`},
		{"an @ after the URL is not a password", "nats://h:4222 is down; mail ops@example.com", "nats://h:4222 is down; mail ops@example.com"},
		{"text without URLs stays", "user@host: no", "user@host: no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, bus.RedactURL(tc.in))
		})
	}
}

func FuzzRedactURL(f *testing.F) {
	for _, seed := range []string{"secret", "p@ss:w", "a,b", "x/y?z#w", "%41"} {
		f.Add(seed, "nats")
	}
	f.Fuzz(func(t *testing.T, password, scheme string) {
		// A password a URL can carry in one piece: no space or quote, no
		// URL of its own.
		if len(password) < 4 || strings.ContainsAny(password, " \t\r\n\"'`<>\\") || strings.Contains(":"+password, "://") {
			t.Skip()
		}
		if scheme == "" || strings.IndexFunc(scheme, func(r rune) bool { return !('a' <= r && r <= 'z') }) >= 0 {
			t.Skip()
		}
		u := scheme + "://w1:" + password + "@127.0.0.1:4222"
		msgs := []string{
			u,
			u + "," + scheme + "://h2:4222",
			fmt.Errorf("cli: %w", fmt.Errorf("bus: connect to NATS at %s: %w", u, errors.New("nats: authorization violation"))).Error(),
			fmt.Sprintf("parse %q: invalid port", u),
		}
		for _, m := range msgs {
			got := bus.RedactURL(m)
			require.NotContains(t, got, ":"+password+"@", "in %q", m)
			require.Contains(t, got, "w1:xxxxx@", "in %q", m)
		}
	})
}
