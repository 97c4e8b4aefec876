package bus_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
)

type pathInner struct {
	Priority int             `json:"priority"`
	Data     json.RawMessage `json:"data"`
	Any      any             `json:"any"`
}

type PathEmbedded struct {
	Flat string `json:"flat"`
}

type pathOuter struct {
	Name string `json:"name"`
	PathEmbedded
	Spec    pathInner            `json:"spec"`
	Ptr     *pathInner           `json:"ptr"`
	Jobs    []pathInner          `json:"jobs"`
	ByName  map[string]pathInner `json:"by_name"`
	NoTag   int
	Skipped int `json:"-"`
}

func TestUnknownFieldsAreNamedByTheirPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, want string }{
		{"at the top", `{"name":"a","bogus":1}`, "bogus: unknown field"},
		{"in a nested object", `{"spec":{"priority":1,"bogus":1}}`, "spec.bogus: unknown field"},
		{"behind a pointer", `{"ptr":{"bogus":1}}`, "ptr.bogus: unknown field"},
		{"in an element of a list, without its index", `{"jobs":[{"priority":1},{"bogus":1}]}`, "jobs.bogus: unknown field"},
		{"in a value of a map", `{"by_name":{"x":{"bogus":1}}}`, "by_name.bogus: unknown field"},
		{"the first of two, in document order", `{"spec":{"b1":1},"b2":2}`, "spec.b1: unknown field"},
		{"after values it skips (raw JSON, any, scalars)", `{"spec":{"data":{"x":{"y":[1,{"z":2}]}},"any":{"q":1},"priority":2,"bogus":1}}`, "spec.bogus: unknown field"},
		{"a field tagged -", `{"Skipped":1}`, "Skipped: unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var v pathOuter
			err := bus.Decode([]byte(tc.body), &v)
			require.ErrorIs(t, err, bus.ErrInvalid)
			require.Equal(t, tc.want, bus.MessageOf(err))
		})
	}
	for _, ok := range []string{
		`{"flat":"embedded fields are known"}`, `{"NoTag":1}`, `{"notag":1}`, `{"SPEC":{"Priority":1}}`,
		`{"spec":{"data":{"anything":1}}}`,
	} {
		var v pathOuter
		require.NoError(t, bus.Decode([]byte(ok), &v), ok)
	}
}

// twinOuter decodes its "inner" through DecodeField, as a type with
// durations in ms on the wire does (core.Spec).
type twinOuter struct {
	Inner twinInner `json:"inner"`
}

type twinInner struct{ N int }

func (t *twinInner) UnmarshalJSON(b []byte) error {
	var w struct {
		N     int       `json:"n"`
		Inner pathInner `json:"deeper"`
	}
	if err := bus.DecodeField(b, &w); err != nil {
		return err
	}
	t.N = w.N
	return nil
}

// TestDecodeFieldIsStrictAndNamesThePath: a value decoded by its own
// UnmarshalJSON through DecodeField is as strict as a request (unknown
// fields refused, on the fast way and the slow one), and its errors carry
// the whole path from the request's top.
func TestDecodeFieldIsStrictAndNamesThePath(t *testing.T) {
	var ok twinOuter
	require.NoError(t, bus.Decode([]byte(`{"inner":{"n":3,"deeper":{"priority":1}}}`), &ok))
	require.Equal(t, 3, ok.Inner.N)
	for body, want := range map[string]string{
		`{"inner":{"n":3,"x":1}}`:                                      "inner.x: unknown field",
		`{"inner":{"n":3,"deeper":{"y":1}}}`:                           "inner.deeper.y: unknown field",
		`{"inner":{"n":"three"}}`:                                      "inner.n: expected int, got JSON string",
		`{"inner":{"n":3,"deeper":{"priority":"a"}}}`:                  "inner.deeper.priority: expected int",
		"{\"inner\":{\"n\":3,\"deeper\":{\"data\":\"\xff\"},\"x\":1}}": "inner.x: unknown field",
	} {
		var v twinOuter
		err := bus.Decode([]byte(body), &v)
		require.ErrorContains(t, err, want, body)
		require.Equal(t, bus.CodeInvalid, bus.CodeOf(err), body)
	}
}
