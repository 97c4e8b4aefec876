package bus_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
)

func TestCheckURL(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{
		"nats://127.0.0.1:4222", "tls://nats.example.com:4222", "ws://127.0.0.1:8080", "wss://nats.example.com",
		"nats://u:p@127.0.0.1:4222", "nats://token@h:4222", "nats://a:4222,nats://b:4222", "nats://a:4222, tls://b:4222",
		"nats://[::1]:4222",
	} {
		require.NoError(t, bus.CheckURL(ok), ok)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"http is not NATS", "http://127.0.0.1:4222", `"http://127.0.0.1:4222": the scheme must be nats://, tls://, ws:// or wss://, not http://`},
		{"https is not NATS", "https://h:443", "not https://"},
		{"a list with one bad URL", "nats://a:4222,http://b:4222", `"http://b:4222": the scheme must be`},
		{"no scheme", "127.0.0.1:4222", `"127.0.0.1:4222" is not a URL like nats://HOST:PORT`},
		{"a bare host", "localhost", `"localhost" is not a URL like nats://HOST:PORT`},
		{"no host", "nats://:4222", `"nats://:4222" has no host`},
		{"a port out of range", "nats://h:70000", `"nats://h:70000": the port must be a number from 1 to 65535`},
		{"an empty list item", "nats://a:4222,", "an empty URL"},
		{"empty", "", "an empty URL"},
		{"a password is masked", "http://w1:secret@h:4222", `"http://w1:xxxxx@h:4222": the scheme must be`},
		{"a password is masked in a URL that does not parse", "nats://w1:secret@h:port", `"nats://w1:xxxxx@h:port" is not a URL`},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			t.Parallel()
			err := bus.CheckURL(tc.in)
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "secret")
		})
	}
}

func TestConnectRefusesAURLThatIsNotNATS(t *testing.T) {
	t.Parallel()
	_, err := bus.Connect("http://127.0.0.1:4222", t.Name())
	require.EqualError(t, err, `bus: connect to NATS: "http://127.0.0.1:4222": the scheme must be nats://, tls://, ws:// or wss://, not http://`)
}

// The ws:// scheme CheckURL lets through is one nats.go dials: a NATS
// server's WebSocket listener answers a kuebus connection.
func TestConnectOverAWebSocket(t *testing.T) {
	t.Parallel()
	opts := &server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true}
	opts.Websocket.Host, opts.Websocket.Port, opts.Websocket.NoTLS = "127.0.0.1", -1, true
	srv, err := server.NewServer(opts)
	require.NoError(t, err)
	srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	require.True(t, srv.ReadyForConnections(5*time.Second))

	url := srv.WebsocketURL()
	require.Regexp(t, `^ws://127\.0\.0\.1:\d+$`, url)
	nc, err := bus.Connect(url, t.Name())
	require.NoError(t, err)
	defer nc.Close()
	sub, err := nc.SubscribeSync("ping")
	require.NoError(t, err)
	require.NoError(t, nc.Publish("ping", []byte("over ws")))
	msg, err := sub.NextMsg(5 * time.Second)
	require.NoError(t, err)
	require.Equal(t, "over ws", string(msg.Data))
}
