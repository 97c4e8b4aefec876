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
