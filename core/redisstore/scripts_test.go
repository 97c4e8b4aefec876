package redisstore_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/node/nodetest"
)

var luaDir = flag.String("lua.dir", "", "write each script's final text (includes resolved) to this folder, for redis-cli --eval")

// TestScriptsLoad loads every script into the test Redis, so that a script
// Redis cannot compile fails here, by name, rather than on first use. With
// -lua.dir it also writes each script's final text to that folder.
func TestScriptsLoad(t *testing.T) {
	t.Parallel()
	_, rdb := nodetest.NewStore(t)
	files, err := filepath.Glob("lua/*.lua")
	require.NoError(t, err)
	var want []string
	for _, f := range files {
		want = append(want, filepath.Base(f))
	}
	require.Equal(t, want, redisstore.ScriptNames(), "every file of lua/ is a script the store runs, and no other")
	for _, name := range redisstore.ScriptNames() {
		text, ok := redisstore.ScriptText(name)
		require.True(t, ok)
		require.NotContains(t, text, "--@include", "%s: every include resolved", name)
		require.NoError(t, rdb.ScriptLoad(context.Background(), text).Err(), name)
		if *luaDir != "" {
			require.NoError(t, os.WriteFile(filepath.Join(*luaDir, name), []byte(text), 0o644))
		}
	}
	_, ok := redisstore.ScriptText("nope.lua")
	require.False(t, ok)
}

// TestIncludesComeOnceBeforeTheirUsers: an include that several files ask
// for is written once, at the first ask, so a helper is never declared
// twice nor used before it is declared.
func TestIncludesComeOnceBeforeTheirUsers(t *testing.T) {
	text, _ := redisstore.ScriptText("fail.lua")
	for _, decl := range []string{
		"local K_READY,",                 // type_keys.lua
		"local function snapshot(",       // row_gen.lua
		"local DONE =",                   // codes_gen.lua
		"local function ready_member(",   // indexes.lua
		"local function give_up_key(",    // unique.lua
		"local function each(",           // lease_holder.lua
		"local function attempt_failed(", // attempt_failed.lua
	} {
		require.Equal(t, 1, strings.Count(text, decl), decl)
	}
	require.Less(t, strings.Index(text, "local function snapshot"), strings.Index(text, "local function each"))
	require.Less(t, strings.Index(text, "local function ready_member"), strings.Index(text, "local function attempt_failed"))
}
