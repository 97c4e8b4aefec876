package core_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// TestRetentionEchoesItsShape: true, false and {age, count} decode and
// encode back in the shape they came in; a job without one says false for
// remove_on_complete (as replies always did) and leaves remove_on_fail out.
func TestRetentionEchoesItsShape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`true`, `true`},
		{`false`, `false`},
		{`null`, `false`},
		{`{"count":1000}`, `{"count":1000}`},
		{`{"age":60000}`, `{"age":60000}`},
		{`{"age":60000,"count":5}`, `{"age":60000,"count":5}`},
		{`{"count":5,"age":0}`, `{"count":5}`},
	} {
		var r core.Retention
		require.NoError(t, bus.Decode([]byte(tc.in), &r), tc.in)
		out, err := json.Marshal(r)
		require.NoError(t, err)
		require.JSONEq(t, tc.want, string(out), tc.in)
	}
	out, err := json.Marshal(core.Job{})
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(out, &fields))
	require.Equal(t, false, fields["remove_on_complete"])
	require.NotContains(t, fields, "remove_on_fail")
	out, err = json.Marshal(core.Spec{Type: "t"})
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"t"}`, string(out), "a spec leaves both out")
}

// TestRetentionRefusesBadShapesNamingTheField: each bad value is invalid,
// and the message names the field (and key) and why.
func TestRetentionRefusesBadShapesNamingTheField(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"type":"t","remove_on_complete":{"age":-1}}`, "remove_on_complete.age: -1 is negative"},
		{`{"type":"t","remove_on_fail":{"count":-5}}`, "remove_on_fail.count: -5 is negative"},
		{`{"type":"t","remove_on_fail":{"count":1.5}}`, "remove_on_fail.count: expected an integer, got 1.5"},
		{`{"type":"t","remove_on_complete":{"age":1,"keep":2}}`, "remove_on_complete.keep: unknown key (age, count)"},
		{`{"type":"t","remove_on_complete":{}}`, "remove_on_complete: age and count are both 0"},
		{`{"type":"t","remove_on_complete":{"age":0,"count":0}}`, "remove_on_complete: age and count are both 0"},
		{`{"type":"t","remove_on_fail":"yes"}`, `remove_on_fail: expected true, false or {"age":ms,"count":n}, got "yes"`},
		{`{"type":"t","remove_on_fail":1}`, `remove_on_fail: expected true, false or {"age":ms,"count":n}, got 1`},
	} {
		var sp core.Spec
		err := bus.Decode([]byte(tc.body), &sp)
		require.ErrorIs(t, err, core.ErrInvalid, tc.body)
		require.ErrorContains(t, err, tc.want, tc.body)
	}
	// Of several bad keys, always the same one (the first by name): the
	// map's order of them named one at random.
	for range 20 {
		var sp core.Spec
		err := bus.Decode([]byte(`{"type":"t","remove_on_complete":{"zz":1,"keep":2,"age":-1}}`), &sp)
		require.ErrorContains(t, err, "remove_on_complete.age: -1 is negative")
	}
	for name, sp := range map[string]core.Spec{
		"remove_on_complete.age: -1 is negative":    {Type: "t", RemoveOnComplete: core.Retention{Age: -time.Millisecond}},
		"remove_on_fail.count: -2 is negative":      {Type: "t", RemoveOnFail: core.Retention{Count: -2}},
		"remove_on_fail: true (remove at once) has": {Type: "t", RemoveOnFail: core.Retention{AtOnce: true, Count: 2}},
	} {
		err := sp.Normalize(core.MaxDataBytesDefault)
		require.ErrorIs(t, err, core.ErrInvalid, name)
		require.ErrorContains(t, err, name)
	}
}
