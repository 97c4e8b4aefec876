package core

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
)

// FuzzPlainIntegerIsWhatJSONReads: whatever plainInteger reads within
// ±MaxPriority (the fast way of Priority.UnmarshalJSON) is the number
// encoding/json reads from the same bytes, exactly; the rest goes the
// general way. (Beyond 2^53 a float64 is not exact: 9007200000000001 reads
// as 9007200000000000, the seed the fuzzer found.)
func FuzzPlainIntegerIsWhatJSONReads(f *testing.F) {
	for _, s := range []string{"0", "-0", "5", "-10", "9007199254740991", "-9007199254740991", "9007199254740992",
		"1234567890123456", "12345678901234567", "01", "-01", "1.0", "1e3", "-", "", " 1", "1 ", `"high"`, "+1", "00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, ok := plainInteger(b)
		if !ok || n > MaxPriority || n < -MaxPriority {
			return
		}
		var v float64
		require.NoError(t, json.Unmarshal(b, &v), "%q read as %d is not JSON", b, n)
		require.Equal(t, v, float64(n), "%q", b)
		require.Equal(t, int64(v), n, "%q", b)
	})
}

// A priority decodes the same whichever way it takes.
func TestPriorityDecodes(t *testing.T) {
	for in, want := range map[string]Priority{"0": 0, "-0": 0, "-10": -10, "9007199254740991": MaxPriority,
		"-9007199254740991": -MaxPriority, "1.0": 1, "1e3": 1000, `"high"`: PriorityHigh} {
		var p Priority
		require.NoError(t, json.Unmarshal([]byte(in), &p), in)
		require.Equal(t, want, p, in)
	}
	// The errors are the reason alone; the decoder names the field by its
	// path before it.
	for in, msg := range map[string]string{"9007199254740992": "spec.priority: 9007199254740992 is outside ±9007199254740991",
		"1.5": "spec.priority: 1.5 is not an integer", `"nope"`: `spec.priority: "nope" is neither`, "true": "spec.priority: expected a number or a name, got true"} {
		var req struct {
			Spec struct {
				Priority Priority `json:"priority"`
			} `json:"spec"`
		}
		err := bus.Decode([]byte(`{"spec":{"priority":`+in+`}}`), &req)
		require.ErrorIs(t, err, bus.ErrInvalid, in)
		require.True(t, strings.HasPrefix(bus.MessageOf(err), msg), "%s: %s", in, bus.MessageOf(err))
	}
}
