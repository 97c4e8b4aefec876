package main

import (
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
