package bus

import (
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// TestOnlyUsersConnectionsAreWatchedForRefusals: the refusal watch costs
// every call, so it is kept for the connections a role can restrict.
func TestOnlyUsersConnectionsAreWatchedForRefusals(t *testing.T) {
	jwt := func() (string, error) { return "", nil }
	for _, tc := range []struct {
		name string
		url  string
		opts nats.Options
		want bool
	}{
		{"an anonymous connection cannot be refused", "nats://127.0.0.1:4222", nats.Options{}, false},
		{"a token is an admin's", "nats://127.0.0.1:4222", nats.Options{Token: "t"}, false},
		{"a user with a password may be", "nats://127.0.0.1:4222", nats.Options{User: "w", Password: "p"}, true},
		{"a user in the URL may be", "nats://w:p@127.0.0.1:4222", nats.Options{}, true},
		{"an nkey user may be", "nats://127.0.0.1:4222", nats.Options{Nkey: "UABC"}, true},
		{"a creds file's user may be", "nats://127.0.0.1:4222", nats.Options{UserJWT: jwt}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, mayBeRefused(tc.url, tc.opts))
		})
	}
}
