package clusterconfig_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	clusterconfig "github.com/kuebus/kuebus/cluster-config"
)

func TestTheOutboxRoleNeedsADatabaseAndTheRing(t *testing.T) {
	t.Parallel()
	const base = "name: n\nredis: {url: redis://127.0.0.1:6379}\n"
	const open = "nats: {embedded: {}}\n"
	noEnv := func(string) (string, bool) { return "", false }
	for _, tc := range []struct{ yaml, want string }{
		{open + "roles: [nats, core, outbox]\noutbox: {driver: sqlite, dsn: x.db}\n", "config: roles: the outbox role runs on the ring's leader: add the promoter role"},
		{open + "roles: [nats, promoter, outbox]\noutbox: {dsn: x.db}\n", `config: outbox.driver: "" is not postgres, mysql, sqlite`},
		{open + "roles: [nats, promoter, outbox]\noutbox: {driver: oracle, dsn: x}\n", `config: outbox.driver: "oracle" is not postgres, mysql, sqlite`},
		{open + "roles: [nats, promoter, outbox]\noutbox: {driver: sqlite}\n", "config: outbox.dsn: required with the outbox role"},
		{open + "roles: [nats, promoter, outbox]\noutbox: {driver: sqlite, dsn: x.db, args: [--dsn=y.db]}\n", "config: outbox.args: --dsn is the node's to set"},
		{"roles: [nats, promoter, outbox]\nnats: {embedded: {users: [{name: a, role: admin, password: secretsecret}]}}\noutbox: {driver: sqlite, dsn: x.db}\n", "config: outbox: the relay logs in to the embedded NATS with nats.embedded.token"},
	} {
		_, err := clusterconfig.Parse([]byte(base+tc.yaml), "n.yaml", noEnv)
		require.ErrorContains(t, err, tc.want, tc.yaml)
	}
	c, err := clusterconfig.Parse([]byte(base+open+"roles: [nats, promoter, outbox]\noutbox: {driver: postgres, dsn: postgres://app:pw@db/shop}\n"), "n.yaml", noEnv)
	require.NoError(t, err)
	require.Equal(t, "xxxxx", c.Redacted().Outbox.DSN, "the DSN may hold a password")
}
