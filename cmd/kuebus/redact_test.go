package main

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/embedded"
)

func TestARefusedPasswordIsNeverPrinted(t *testing.T) {
	t.Parallel()
	srv, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:-1",
		Users: []embedded.User{{Name: "w1", Password: "right-pw", Role: bus.RoleWorker}}})
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	host := strings.TrimPrefix(srv.ClientURL(), "nats://")

	const secret = "Wr0ngPassw0rd"
	for _, tc := range []struct {
		name, url, want string
	}{
		{"a password the server refuses", "nats://w1:" + secret + "@" + host, "NATS at nats://w1:xxxxx@" + host + " refused the connection: nats: authorization violation"},
		{"a token the server refuses", "nats://" + secret + "@" + host, "NATS at nats://xxxxx@" + host + " refused the connection"},
		{"a URL in a list", "nats://127.0.0.1:1,nats://w1:" + secret + "@" + host, "nats://127.0.0.1:1,nats://w1:xxxxx@" + host},
		{"a URL that does not parse", "nats://w1:" + secret + "@127.0.0.1:port", "w1:xxxxx@127.0.0.1:port"},
	} {
		t.Run("with "+tc.name, func(t *testing.T) {
			t.Parallel()
			for _, args := range [][]string{{"stats"}, {"job", "get", "1"}, {"events"}, {"cluster"}, {"workers"}, {"worker", "email"}} {
				r := kuebus(t, append(args, "--nats-url", tc.url)...)
				require.NotEqual(t, exitOK, r.code, args)
				require.Contains(t, r.stderr, tc.want, args)
				require.NotContains(t, r.stderr, secret, args)
			}
		})
	}
}

func TestLogLinesMaskURLPasswords(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "json"} {
		var out bytes.Buffer
		log, _, err := (&logFlags{level: "info", format: format}).logger(&out)
		require.NoError(t, err)
		u := "nats://w1:s3cret@127.0.0.1:4222"
		deep := fmt.Errorf("worker: %w", fmt.Errorf("bus: connect to NATS at %s: %w", u, errors.New("refused")))
		log.With("url", u).Info("connect to "+u+" failed", "err", deep, "addr", &net.TCPAddr{},
			"urls", []string{u}, "group", map[string]string{"u": u})
		log.Info("grouped", slog.Group("nats", "url", u))
		require.NotContains(t, out.String(), "s3cret", format)
		require.Contains(t, out.String(), "w1:xxxxx@127.0.0.1:4222", format)
	}
}
