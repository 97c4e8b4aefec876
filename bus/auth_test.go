package bus_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
)

func TestAuthCheckNamesTheFlags(t *testing.T) {
	t.Parallel()
	err := bus.Auth{Token: "t", User: "u", TLSCert: "c.pem", NkeySeedFile: "/nonexistent/seed"}.Check()
	require.ErrorContains(t, err, "--nats-token and --nats-user and --nats-nkey: give one way to authenticate")
	require.ErrorContains(t, err, "--nats-tls-cert and --nats-tls-key go together")
	require.ErrorContains(t, err, "--nats-nkey: stat /nonexistent/seed")
	require.ErrorContains(t, bus.Auth{Password: "p"}.Check(), "--nats-password needs --nats-user")
	require.NoError(t, bus.Auth{User: "u", Password: "p"}.Check())
}

func ExampleAuth_InboxPrefix() {
	subj, _ := bus.NewSubjects("acme")
	inbox, _ := bus.Auth{User: "w1", Password: "secret"}.InboxPrefix(subj)
	fmt.Println(inbox)
	// Output: acme._INBOX.w1
}
