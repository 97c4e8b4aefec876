package core_test

import (
	"time"

	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
)

func TestPriorityAcceptsNamesAndNumbers(t *testing.T) {
	cases := []struct {
		json string
		want core.Priority
	}{
		{`"low"`, 10}, {`"normal"`, 0}, {`"medium"`, -5}, {`"high"`, -10}, {`"critical"`, -15},
		{`"HIGH"`, -10}, {`7`, 7}, {`-100`, -100}, {`"42"`, 42},
	}
	for _, c := range cases {
		var p core.Priority
		require.NoError(t, json.Unmarshal([]byte(c.json), &p), c.json)
		require.Equal(t, c.want, p, c.json)
	}
	for _, bad := range []string{`"urgent"`, `1.5`, `true`, `1e300`, `"9007199254740993"`} {
		var p core.Priority
		require.Error(t, json.Unmarshal([]byte(bad), &p), bad)
	}
}

func TestSpecNormalizeFillsDefaults(t *testing.T) {
	sp := core.Spec{Type: "email"}
	require.NoError(t, sp.Normalize(100))
	require.Equal(t, 1, sp.MaxAttempts)
	require.Equal(t, core.TTLDefault*time.Millisecond, sp.TTL)
}

func TestParseState(t *testing.T) {
	for _, s := range core.States {
		got, err := core.ParseState(string(s))
		require.NoError(t, err)
		require.Equal(t, s, got)
	}
	_, err := core.ParseState("done")
	require.ErrorContains(t, err, `"done" is not a state`)
}

func TestBackoffConstructorsTakeDurations(t *testing.T) {
	require.Equal(t, &core.Backoff{Type: core.BackoffFixed, Delay: 1500 * time.Millisecond}, core.FixedBackoff(1500*time.Millisecond))
	require.Equal(t, &core.Backoff{Type: core.BackoffExponential, Delay: 4000 * time.Millisecond}, core.ExponentialBackoff(2*time.Second+999*time.Microsecond),
		"rounded down to the millisecond the wire carries, and doubled: the wire's formula halves it")
	require.Equal(t, core.MaxDelay*time.Millisecond, core.ExponentialBackoff(core.MaxDelay*time.Millisecond).Delay, "capped at MaxDelay")
}
