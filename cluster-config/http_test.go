package clusterconfig_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"

	clusterconfig "github.com/kuebus/kuebus/cluster-config"
)

func TestHTTPTLSAndSessions(t *testing.T) {
	t.Parallel()
	const node = "name: a\nroles: [http]\nnats: {external: {urls: [nats://n:4222]}}\n"
	const key = "a2t1ZWJ1cyBzZXNzaW9uIGtleSBvZiAzMiBieXRlcyE=" // 32 bytes

	pki := bustest.NewPKI(t)
	c, err := clusterconfig.Parse([]byte(node+"http: {listen: '127.0.0.1:8443', tls_cert: "+pki.Cert+", tls_key: "+pki.Key+"}\n"), "node.yaml",
		env(map[string]string{"KUEBUS_HTTP_SESSION_KEY": key}))
	require.NoError(t, err)
	require.Equal(t, pki.Cert, c.HTTP.TLSCert)
	require.Equal(t, pki.Key, c.HTTP.TLSKey)

	_, err = clusterconfig.Parse([]byte(node+"http: {listen: '127.0.0.1:8443', tls_cert: config.go, tls_key: load.go}\n"), "node.yaml", nil)
	require.EqualError(t, err, "config: http.tls_cert: is no PEM pair with http.tls_key: tls: failed to find any PEM data in certificate input",
		"files that are no PEM pair are refused before anything starts")

	_, err = clusterconfig.Parse([]byte(node+"http: {listen: '0.0.0.0:8080'}\n"), "node.yaml", nil)
	require.EqualError(t, err, `config: http.listen: "0.0.0.0:8080" reaches other machines and there is no auth: set http.token or http.basic, or allow it with http.insecure_bind`)
	_, err = clusterconfig.Parse([]byte(node+"http: {listen: '0.0.0.0:8080', insecure_bind: true}\n"), "node.yaml", nil)
	require.NoError(t, err, "allowed on purpose")
	require.Equal(t, key, c.HTTP.SessionKey)
	require.Equal(t, clusterconfig.HTTPSessionTTLDefault, c.HTTP.SessionTTL)
	require.Equal(t, 12*time.Hour, c.HTTP.SessionTTL)
	require.Equal(t, "xxxxx", c.Redacted().HTTP.SessionKey, "--check does not print the key")

	c, err = clusterconfig.Parse([]byte(node+"http: {listen: '127.0.0.1:8080', session_ttl: 30m}\n"), "node.yaml", nil)
	require.NoError(t, err)
	require.Equal(t, 30*time.Minute, c.HTTP.SessionTTL)
	require.Empty(t, c.Redacted().HTTP.SessionKey, "none set, none shown")

	_, err = clusterconfig.Parse([]byte(node+"http: {listen: '127.0.0.1:8080'}\n"), "node.yaml",
		env(map[string]string{"KUEBUS_HTTP_SESSION_KEY": "not base64!"}))
	require.EqualError(t, err, "config: http.session_key ($KUEBUS_HTTP_SESSION_KEY): must be base64 of 32 or more random bytes (openssl rand -base64 32)")
}

func TestHTTPUsersOfALockedNode(t *testing.T) {
	t.Parallel()
	const locked = "name: a\nroles: [nats, http]\nnats: {embedded: {users: [" +
		"{name: ada, role: admin, password: a-pw}, {name: wes, role: worker, password: w-pw}, " +
		"{name: svc, role: core, password: c-pw}, {name: nk, role: viewer, nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4}]}}\n"

	c, err := clusterconfig.Parse([]byte(locked+"http: {users: [{name: nk-web, role: viewer, password: v-pw}]}\n"), "node.yaml", nil)
	require.NoError(t, err)
	require.Equal(t, []clusterconfig.HTTPUser{
		{Name: "ada", Password: "a-pw", Role: "admin"},
		{Name: "wes", Password: "w-pw", Role: "worker"},
		{Name: "nk-web", Password: "v-pw", Role: "viewer"},
	}, c.HTTPUsers(), "the NATS password users of HTTP roles, then http.users")
	require.Equal(t, "xxxxx", c.Redacted().HTTP.Users[0].Password)
	require.Equal(t, "v-pw", c.HTTP.Users[0].Password, "Redacted works on a copy")

	c, err = clusterconfig.Parse([]byte(locked), "node.yaml", env(map[string]string{"KUEBUS_HTTP_USERS": "vic:viewer:v-pw,pat:producer:p:w"}))
	require.NoError(t, err)
	require.Equal(t, []clusterconfig.HTTPUser{{Name: "vic", Role: "viewer", Password: "v-pw"}, {Name: "pat", Role: "producer", Password: "p:w"}}, c.HTTP.Users)

	c, err = clusterconfig.Parse([]byte("name: a\nroles: [nats, http]\nnats: {embedded: {token: t0k}}\n"), "node.yaml", nil)
	require.NoError(t, err)
	require.Equal(t, "t0k", c.HTTPToken(), "the NATS token is the HTTP token")
	c, err = clusterconfig.Parse([]byte("name: a\nroles: [nats, http]\nnats: {embedded: {token: t0k}}\nhttp: {token: web}\n"), "node.yaml", nil)
	require.NoError(t, err)
	require.Equal(t, "web", c.HTTPToken(), "unless http.token says otherwise")
	c, err = clusterconfig.Parse([]byte("name: a\nroles: [nats, http]\nhttp: {listen: '0.0.0.0:8080', insecure_bind: true}\nnats: {embedded: {}}\n"), "node.yaml", nil)
	require.NoError(t, err)
	require.Empty(t, c.HTTPUsers(), "NATS not locked: dev mode, as before")

	for _, tc := range []struct{ yaml, want string }{
		{locked + "http: {users: [{name: vic, role: boss, password: pw}]}\n",
			`config: http.users[0].role: "boss" is not an HTTP role: use admin, worker, producer, viewer`},
		{locked + "http: {users: [{name: vic, role: core, password: pw}]}\n",
			`config: http.users[0].role: "core" is not an HTTP role: use admin, worker, producer, viewer`},
		{locked + "http: {users: [{name: vic, role: viewer}]}\n",
			`config: http.users[0].password: required: what user "vic" signs in with`},
		{locked + "http: {users: [{name: ada, role: viewer, password: pw}]}\n",
			`config: http.users[0].name: "ada" is also nats.embedded.users[0], which signs in over HTTP with its own password and role`},
		{locked + "http: {basic: 'bo:pw', users: [{name: bo, role: viewer, password: pw}]}\n",
			`config: http.users[0].name: "bo" is also the user of http.basic`},
		{locked + "http: {users: [{name: 'a b', role: viewer, password: pw}]}\n",
			`config: http.users[0].name: "a b": character ' '`},
		{"name: a\nroles: [nats, http]\nnats: {embedded: {users: [{name: nk, role: viewer, nkey: UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4}]}}\n",
			"config: http: nats.embedded is locked, so the HTTP API must be too, but no user signs in over HTTP"},
	} {
		_, err := clusterconfig.Parse([]byte(tc.yaml), "node.yaml", nil)
		require.ErrorContains(t, err, tc.want, tc.yaml)
	}
}
