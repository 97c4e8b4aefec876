package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/node/nodetest"
)

// TestDevLogsJSON: with --log-format json every line dev writes is one JSON
// object, the ready line among them, for log collectors.
func TestDevLogsJSON(t *testing.T) {
	t.Parallel()
	rdb := nodetest.NewRedis(t)
	dev := startDev(t, "--redis-url", nodetest.RedisURL(t), "--redis-prefix", nodetest.Prefix(t, rdb),
		"--nats-listen", "127.0.0.1:0", "--log-format", "json")
	require.Equal(t, 0, dev.stop(t))
	lines := strings.Split(strings.TrimSpace(dev.stderr.String()), "\n")
	var ready bool
	for _, line := range lines {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "not a JSON line: %s", line)
		require.Contains(t, rec, "level")
		if rec["msg"] == "kuebus dev ready" {
			ready = true
			require.Equal(t, dev.info.NATSURL, rec["nats_url"])
		}
	}
	require.True(t, ready, "no ready line in:\n%s", dev.stderr.String())
}

// TestUnknownVariablesAreWarnedAbout: a misspelled KUEBUS_* variable is
// named on stderr with the one it was likely meant to be; known ones and
// other programs' variables are not.
func TestUnknownVariablesAreWarnedAbout(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	warnUnknownEnv(&out, []string{
		"KUEBUS_REDIS_ULR=redis://x", // a typo
		"KUEBUS_REDIS_URL=redis://y",
		"KUEBUS_NATS_URL=nats://z",
		"KUEBUS_HTTP_TOKEN=t",
		"KUEBUS_COMPLETELY_OTHER=1",
		"HOME=/root",
		"KUEBUS_TEST_ARTIFACTS=/tmp/a",
	})
	require.Equal(t, "kuebus: warning: $KUEBUS_REDIS_ULR is not a kuebus variable and is ignored (did you mean $KUEBUS_REDIS_URL?)\n"+
		"kuebus: warning: $KUEBUS_COMPLETELY_OTHER is not a kuebus variable and is ignored\n", out.String())
}

// TestUnknownVariableWarningReachesTheCommandLine runs a command with a
// misspelled variable set: the warning comes first, the command still runs.
func TestUnknownVariableWarningReachesTheCommandLine(t *testing.T) {
	t.Setenv("KUEBUS_NAT_URL", "nats://127.0.0.1:1")
	r := kuebus(t, "version")
	require.Equal(t, 0, r.code)
	require.Equal(t, "kuebus: warning: $KUEBUS_NAT_URL is not a kuebus variable and is ignored (did you mean $KUEBUS_NATS_URL?)\n", r.stderr)
}
