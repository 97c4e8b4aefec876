package httpapi_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/coretest"
	"github.com/kuebus/kuebus/httpapi"
)

// writeCert writes a self-signed certificate for 127.0.0.1 and its key as
// PEM files in dir, and returns their paths and a pool that trusts it.
func writeCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "kuebus test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestTLS(t *testing.T) {
	t.Parallel()
	certFile, keyFile, pool := writeCert(t, t.TempDir())
	c := coretest.NewCore(t, core.Config{})
	conn := bustest.Connect(t, c.NATS.ClientURL())

	t.Run("it serves HTTPS, refuses plain HTTP and marks the cookie Secure", func(t *testing.T) {
		srv, err := httpapi.New(httpapi.Config{Conn: conn, TLSCert: certFile, TLSKey: keyFile, Auth: httpapi.Auth{Token: "s3cret"}})
		require.NoError(t, err)
		require.Equal(t, "https", srv.Scheme())
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		ctx, stop := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ctx, ln) }()
		t.Cleanup(func() {
			stop()
			require.NoError(t, <-served)
		})
		addr := ln.Addr().String()

		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		t.Cleanup(tr.CloseIdleConnections)
		req, err := http.NewRequestWithContext(t.Context(), "GET", "https://"+addr+"/stats", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer s3cret")
		res, err := tr.RoundTrip(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)

		form := url.Values{"token": {"s3cret"}}.Encode()
		req, err = http.NewRequestWithContext(t.Context(), "POST", "https://"+addr+"/login", strings.NewReader(form))
		require.NoError(t, err)
		req.Header.Set("Content-Type", formType)
		res, err = tr.RoundTrip(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		require.Equal(t, http.StatusSeeOther, res.StatusCode)
		require.Contains(t, res.Header.Get("Set-Cookie"), "; Secure")

		plain := &http.Transport{}
		t.Cleanup(plain.CloseIdleConnections)
		req, err = http.NewRequestWithContext(t.Context(), "GET", "http://"+addr+"/stats", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer s3cret")
		res, err = plain.RoundTrip(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		require.Equal(t, http.StatusBadRequest, res.StatusCode, "plain HTTP to the TLS port: %s", body)
		require.Contains(t, string(body), "HTTP request to an HTTPS server")
	})

	t.Run("missing or bad files are an error at start", func(t *testing.T) {
		_, err := httpapi.New(httpapi.Config{Conn: conn, TLSCert: certFile})
		require.EqualError(t, err, "httpapi: tls: a certificate and its key go together: give both files or neither")
		missing := filepath.Join(t.TempDir(), "nope.pem")
		_, err = httpapi.New(httpapi.Config{Conn: conn, TLSCert: missing, TLSKey: keyFile})
		require.ErrorContains(t, err, "httpapi: tls: certificate "+missing+" and key "+keyFile+": open "+missing+": no such file or directory")
		_, err = httpapi.New(httpapi.Config{Conn: conn, TLSCert: keyFile, TLSKey: certFile})
		require.ErrorContains(t, err, "httpapi: tls: certificate "+keyFile+" and key "+certFile+": ")
	})
}
