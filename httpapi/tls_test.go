package httpapi_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/httpapi"
	"github.com/kuebus/kuebus/node/nodetest"
)

func TestTLS(t *testing.T) {
	t.Parallel()
	pki := bustest.NewPKI(t)
	certFile, keyFile, pool := pki.Cert, pki.Key, pki.Pool(t)
	c := nodetest.NewCore(t, service.Config{})
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
