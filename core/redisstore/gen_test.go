package redisstore

import (
	goflag "flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = goflag.Bool("update", false, "write the generated Lua includes (go generate runs this)")

// TestGeneratedLuaIsCurrent: each generated include under lua/includes/ is
// what Go's tables (jobFields, scheduleFields, replyCodes) say today. With
// -update (go generate ./core/redisstore) it writes them instead.
func TestGeneratedLuaIsCurrent(t *testing.T) {
	for _, g := range generatedLua {
		want, ok := generatedLuaText(g.file)
		require.True(t, ok)
		file := filepath.Join("lua", "includes", g.file)
		if *update {
			require.NoError(t, os.WriteFile(file, []byte(want), 0o644))
			continue
		}
		got, err := os.ReadFile(file)
		require.NoError(t, err)
		require.Equal(t, want, string(got), "%s is stale: run go generate ./core/redisstore", file)
	}
}

// TestReplyCodesAreDistinct: a code means one thing, whichever script
// replies it, and has one name in Lua.
func TestReplyCodesAreDistinct(t *testing.T) {
	values, names := map[replyCode]string{}, map[string]bool{}
	for _, c := range replyCodes {
		require.NotContains(t, values, c.code, "%s has the value of %s", c.lua, values[c.code])
		require.False(t, names[c.lua], "%s is named twice", c.lua)
		values[c.code], names[c.lua] = c.lua, true
	}
}
