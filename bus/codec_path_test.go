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
