package main

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines; the tests here start nothing that
// needs an ignore list.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestShortLeavesOutTheLongScenarios: --short runs every scenario but the
// long ones (kill-cluster-flow), which run in the full suite or when named.
func TestShortLeavesOutTheLongScenarios(t *testing.T) {
	base := []string{"--kuebus", "kuebus", "--dir", t.TempDir()}
	cfg, err := parseFlags(append(base, "--short"))
	require.NoError(t, err)
	require.NotContains(t, cfg.scenarios, "kill-cluster-flow")
	require.Contains(t, cfg.scenarios, "kill-core-flow")
	cfg, err = parseFlags(base)
	require.NoError(t, err)
	require.Contains(t, cfg.scenarios, "kill-cluster-flow")
	cfg, err = parseFlags(append(base, "--short", "--scenario", "kill-cluster-flow"))
	require.NoError(t, err)
	require.Equal(t, []string{"kill-cluster-flow"}, cfg.scenarios)
}
