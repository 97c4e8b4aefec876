package embedded_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/bus/embedded"
)

func TestClientTLS(t *testing.T) {
	t.Parallel()
	pki := bustest.NewPKI(t)
	e, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:-1", Token: "t",
		TLS: &embedded.TLSFiles{Cert: pki.Cert, Key: pki.Key}})
	require.NoError(t, err)
	t.Cleanup(e.Shutdown)

	opts, err := bus.Auth{Token: "t", TLSCA: pki.CA}.Options(bus.Subjects{})
	require.NoError(t, err)
	nc, err := bus.Connect(e.ClientURL(), "trusting", opts...)
	require.NoError(t, err)
	nc.Close()

	opts, err = bus.Auth{Token: "t"}.Options(bus.Subjects{})
	require.NoError(t, err)
	_, err = bus.Connect(e.ClientURL(), "untrusting", opts...)
	require.ErrorContains(t, err, "certificate", "a client without the CA trusted the server")

	// The process's own connections need no certificate.
	require.True(t, strings.HasPrefix(e.ClientURL(), "tls://"), e.ClientURL())
	nc, err = bus.Connect(e.InProcessURL(), "in-process", e.InProcessAs(bus.RoleCore))
	require.NoError(t, err)
	nc.Close()
}

func TestClientCertificatesWhenVerifying(t *testing.T) {
	t.Parallel()
	pki := bustest.NewPKI(t)
	e, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:-1", Token: "t",
		TLS: &embedded.TLSFiles{Cert: pki.Cert, Key: pki.Key, CA: pki.CA, Verify: true}})
	require.NoError(t, err)
	t.Cleanup(e.Shutdown)

	opts, err := bus.Auth{Token: "t", TLSCA: pki.CA}.Options(bus.Subjects{})
	require.NoError(t, err)
	_, err = bus.Connect(e.ClientURL(), "no-cert", opts...)
	require.Error(t, err, "a client without a certificate got in")

	opts, err = bus.Auth{Token: "t", TLSCA: pki.CA, TLSCert: pki.Cert, TLSKey: pki.Key}.Options(bus.Subjects{})
	require.NoError(t, err)
	nc, err := bus.Connect(e.ClientURL(), "with-cert", opts...)
	require.NoError(t, err)
	nc.Close()
}

func TestRoutesOverTLS(t *testing.T) {
	t.Parallel()
	pki := bustest.NewPKI(t)
	tlsFiles := &embedded.TLSFiles{Cert: pki.Cert, Key: pki.Key, CA: pki.CA}
	a, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:-1", ClusterListen: "127.0.0.1:-1", ClusterTLS: tlsFiles})
	require.NoError(t, err)
	t.Cleanup(a.Shutdown)
	b, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:-1", ClusterListen: "127.0.0.1:-1", ClusterTLS: tlsFiles,
		Routes: []string{"nats-route://" + a.ClusterAddr().String()}})
	require.NoError(t, err)
	t.Cleanup(b.Shutdown)
	require.Eventually(t, func() bool { return a.NumRoutes() > 0 && b.NumRoutes() > 0 }, 10*time.Second, 10*time.Millisecond)
}
