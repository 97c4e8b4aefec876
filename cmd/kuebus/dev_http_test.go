package main

import (
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/node/nodetest"
)

func TestDevServesHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts NATS and uses Redis")
	}
	t.Parallel()
	rdb := nodetest.NewRedis(t)
	dev := startDev(t, "--redis-url", nodetest.RedisURL(t), "--redis-prefix", nodetest.Prefix(t, rdb),
		"--nats-listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--http-token", "tok", "--http-metrics-open")
	require.True(t, strings.HasPrefix(dev.info.HTTPURL, "http://127.0.0.1:"), dev.info.HTTPURL)
	require.Contains(t, dev.stderr.String(), "http_url="+dev.info.HTTPURL)

	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	get := func(path, token string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), "GET", strings.TrimSuffix(dev.info.HTTPURL, "/")+path, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := tr.RoundTrip(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(body)
	}
	code, body := get("/stats", "")
	require.Equal(t, http.StatusUnauthorized, code, body)
	code, body = get("/stats", "tok")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"inactiveCount":0`)
	code, body = get("/metrics", "")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `kuebus_promoter_leader{node="dev"} 1`)
	require.Contains(t, body, "kuebus_core_up 1")
}

func TestDevServesHTTPS(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts NATS and uses Redis")
	}
	t.Parallel()
	pki := bustest.NewPKI(t)
	certFile, keyFile, pool := pki.Cert, pki.Key, pki.Pool(t)
	rdb := nodetest.NewRedis(t)
	dev := startDev(t, "--redis-url", nodetest.RedisURL(t), "--redis-prefix", nodetest.Prefix(t, rdb),
		"--nats-listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--http-token", "tok",
		"--http-tls-cert", certFile, "--http-tls-key", keyFile)
	require.True(t, strings.HasPrefix(dev.info.HTTPURL, "https://127.0.0.1:"), dev.info.HTTPURL)

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(tr.CloseIdleConnections)
	req, err := http.NewRequestWithContext(t.Context(), "GET", dev.info.HTTPURL+"stats", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok")
	res, err := tr.RoundTrip(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
}

func TestDevHTTPFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--http-listen", "0.0.0.0:0"}, `--http-listen: "0.0.0.0:0" reaches other machines and there is no auth: set --http-token or --http-basic, or allow it with --http-insecure-bind`},
		{[]string{"--http-basic", "ada"}, "--http-basic: expected USER:PASSWORD"},
		{[]string{"--http-metrics-open", "--http-metrics-token", "x"}, "--http-metrics-open: contradicts --http-metrics-token: give one"},
		{[]string{"--http-tls-cert", "cert.pem"}, "--http-tls-cert: and --http-tls-key go together: give both files or neither"},
		{[]string{"--http-tls-cert", "/nonexistent/cert.pem", "--http-tls-key", "dev.go"}, "--http-tls-cert: stat /nonexistent/cert.pem: no such file or directory"},
		{[]string{"--http-session-ttl", "-5m"}, "--http-session-ttl: -5m0s: must be at least 1s"},
	} {
		r := kuebus(t, append([]string{"dev"}, tc.args...)...)
		require.Equal(t, exitUsage, r.code, r.stderr)
		require.Equal(t, "kuebus: "+tc.want+"\n", r.stderr)
	}
}

// TestDevRefusesFilesThatAreNoTLSPair: files that exist but hold no PEM
// pair are refused before anything starts (the listen flags keep a
// regression off the default ports).
func TestDevRefusesFilesThatAreNoTLSPair(t *testing.T) {
	t.Parallel()
	r := kuebus(t, "dev", "--nats-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--http-tls-cert", "dev.go", "--http-tls-key", "dev.go")
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Equal(t, "kuebus: --http-tls-cert: is no PEM pair with --http-tls-key: tls: failed to find any PEM data in certificate input\n", r.stderr)
}
