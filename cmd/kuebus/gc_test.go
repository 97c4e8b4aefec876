package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestServerGCSetsItsPercentUnlessGOGCIsGiven(t *testing.T) {
	was := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(was) })

	serverGC(func(string) string { return "150" })
	require.Equal(t, 100, debug.SetGCPercent(100), "GOGC in the environment wins")

	serverGC(func(string) string { return "" })
	require.Equal(t, serverGCPercent, debug.SetGCPercent(100))
}

func TestServerGCSetsAMemoryLimitUnlessGOMEMLIMITIsGiven(t *testing.T) {
	was := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetMemoryLimit(was) })
	env := func(gomemlimit string) func(string) string {
		return func(k string) string {
			if k == "GOMEMLIMIT" {
				return gomemlimit
			}
			return ""
		}
	}

	serverGC(env("1GiB"))
	require.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1), "GOMEMLIMIT in the environment wins")

	serverGC(env(""))
	require.Equal(t, int64(serverMemoryLimit), debug.SetMemoryLimit(-1))
}
