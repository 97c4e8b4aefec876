package httprule_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/internal/httprule"
)

// TestBasePathIsChecked: what a base path may be, and what each refusal
// says.
func TestBasePathIsChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, want string }{
		{"admin", `"admin" must start with /`},
		{"/a//b", "empty, . and .. segments are not allowed"},
		{"/a/../b", "empty, . and .. segments are not allowed"},
		{"/a b", `character ' ' is not a letter, digit, or one of - _ . ~`},
		{"/a?x", `character '?'`},
	} {
		err := httprule.BasePath(tc.path)
		require.Error(t, err, tc.path)
		require.Contains(t, err.Error(), tc.want, tc.path)
	}
	for _, ok := range []string{"", "/", "/admin/queues", "/admin/queues/", "/a-b_c.d~e"} {
		require.NoError(t, httprule.BasePath(ok), ok)
	}
}
