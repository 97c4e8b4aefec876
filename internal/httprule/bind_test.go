package httprule_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/internal/httprule"
)

// TestBind: loopback addresses pass; others need auth or insecure.
func TestBind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr           string
		auth, insecure bool
		refused        bool
	}{
		{addr: "127.0.0.1:8080"},
		{addr: "127.0.0.2:0"},
		{addr: "[::1]:8080"},
		{addr: "localhost:8080"},
		{addr: "0.0.0.0:8080", refused: true},
		{addr: ":8080", refused: true},
		{addr: "[::]:8080", refused: true},
		{addr: "10.1.2.3:8080", refused: true},
		{addr: "example.com:8080", refused: true},
		{addr: "0.0.0.0:8080", auth: true},
		{addr: "0.0.0.0:8080", insecure: true},
	} {
		err := httprule.Bind(tc.addr, tc.auth, tc.insecure)
		if tc.refused {
			require.ErrorIs(t, err, httprule.ErrInsecureBind, tc.addr)
			require.ErrorContains(t, err, tc.addr+" can be reached from other machines")
		} else {
			require.NoError(t, err, tc.addr)
		}
	}
	require.ErrorContains(t, httprule.Bind("8080", false, false), `address "8080" is not HOST:PORT`)
}
