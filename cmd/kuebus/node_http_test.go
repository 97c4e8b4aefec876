package main

import (
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestNodesShareHTTPSessions runs two http nodes with TLS and one
// http.session_key: a login on one is a login on the other.
func TestNodesShareHTTPSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts NATS and core on a real Redis")
	}
	t.Parallel()
	pki := bustest.NewPKI(t)
	certFile, keyFile, pool := pki.Cert, pki.Key, pki.Pool(t)
	rdb := nodetest.NewRedis(t)
	key := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	common := fmt.Sprintf(`redis_prefix: %s
redis: {url: %q}
http: {listen: '127.0.0.1:0', token: s3cret, tls_cert: %q, tls_key: %q, session_key: %q}
`, nodetest.Prefix(t, rdb), nodetest.RedisURL(t), certFile, keyFile, key)
	a := startNode(t, common+"name: node-a\nroles: [nats, core, http]\nnats: {embedded: {listen: '127.0.0.1:0'}}\n")
	b := startNode(t, common+fmt.Sprintf("name: node-b\nroles: [http]\nnats: {external: {urls: [%q]}}\n", a.info.NATSURL))
	require.True(t, strings.HasPrefix(a.info.HTTPURL, "https://127.0.0.1:"), a.info.HTTPURL)
	require.True(t, strings.HasPrefix(b.info.HTTPURL, "https://127.0.0.1:"), b.info.HTTPURL)

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(tr.CloseIdleConnections)
	req, err := http.NewRequestWithContext(t.Context(), "POST", a.info.HTTPURL+"login", strings.NewReader(url.Values{"token": {"s3cret"}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := tr.RoundTrip(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	cookie := res.Header.Get("Set-Cookie")
	require.Contains(t, cookie, "; Secure")
	pair, _, _ := strings.Cut(cookie, ";")

	req, err = http.NewRequestWithContext(t.Context(), "GET", b.info.HTTPURL+"stats", nil)
	require.NoError(t, err)
	req.Header.Set("Cookie", pair)
	res, err = tr.RoundTrip(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "node-b takes node-a's session: %s", body)
}
