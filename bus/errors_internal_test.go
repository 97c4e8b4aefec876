package bus

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHeaderSafe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"a plain message stays", "job 9 not found", "job 9 not found"},
		{"bytes that are not UTF-8 are escaped", "a\xffb\xc3", `a\xffb\xc3`},
		{"a NUL, a tab and a newline are escaped", "a\x00\t\n", `a\x00\t\n`},
		{"an escape is not cut in half at the bound", strings.Repeat("x", MaxErrorMessage-len("…")-2) + "\x00" + strings.Repeat("y", 10), strings.Repeat("x", MaxErrorMessage-len("…")-2) + "…"},
		{"a rune is not cut in half at the bound", strings.Repeat("x", MaxErrorMessage-len("…")-1) + "é" + strings.Repeat("y", 10), strings.Repeat("x", MaxErrorMessage-len("…")-1) + "…"},
		{"a message of the bound stays whole", strings.Repeat("x", MaxErrorMessage), strings.Repeat("x", MaxErrorMessage)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := headerSafe(tc.in)
			require.Equal(t, tc.want, got)
			require.LessOrEqual(t, len(got), MaxErrorMessage)
		})
	}
}
