package core_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// bus encodes with goccy/go-json and decodes replies with it (bus/codec.go):
// every type on the wire must come out byte for byte as encoding/json
// writes it, and read back as encoding/json reads it, or a client in
// another language, a schema or a stored event would see a difference.
func TestWireTypesEncodeAndDecodeAsEncodingJSONDoes(t *testing.T) {
	types := []reflect.Type{reflect.TypeFor[core.Event](), reflect.TypeFor[core.Heartbeat]()}
	for _, m := range core.Methods {
		types = append(types, reflect.TypeOf(m.Request), reflect.TypeOf(m.Reply))
	}
	for _, typ := range types {
		for variant := range 3 {
			v := reflect.New(typ)
			if variant > 0 {
				fill(v.Elem(), variant)
			}
			name := fmt.Sprintf("%s/%d", typ, variant)
			want, err := json.Marshal(v.Interface())
			require.NoError(t, err, name)
			got, err := bus.Encode(v.Interface())
			require.NoError(t, err, name)
			require.Equal(t, string(want), string(got), "%s encodes differently", name)

			std, fast := reflect.New(typ), reflect.New(typ)
			require.NoError(t, json.Unmarshal(want, std.Interface()), name)
			require.NoError(t, bus.DecodeReply(want, fast.Interface()), name)
			require.Equal(t, std.Interface(), fast.Interface(), "%s decodes differently", name)
		}
	}
}

// tricky holds what JSON encoders differ on: HTML characters, the line
// separators JavaScript cannot take raw, non-ASCII, escapes, control
// characters and invalid UTF-8.
var tricky = []string{"<b>&amp;</b> \u2028\u2029 é 日本 \"q\" \\ \x01\t", "a\xffb"}

// rawJSON is raw JSON with spaces and HTML characters, which encoding/json
// compacts and escapes.
var rawJSON = []json.RawMessage{json.RawMessage(` {"a": [1, 2.50, -3e2], "h": "<i>&</i>", "u": "\u00e9"} `), json.RawMessage(`"x"`)}

// fill sets every field of v reachable by JSON to a non-zero value of
// the given variant (1 or 2), recursing into structs, pointers, slices and
// maps.
func fill(v reflect.Value, variant int) {
	if v.Type() == reflect.TypeFor[json.RawMessage]() {
		v.Set(reflect.ValueOf(rawJSON[variant-1]))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(tricky[variant-1])
	case reflect.Bool:
		v.SetBool(variant == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt([]int64{-15, 1<<53 - 1}[variant-1] % (1 << (v.Type().Bits() - 1)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(variant * 7))
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0.000001, 1e21}[variant-1])
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), variant)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), variant)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(s.Index(i), variant)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for _, k := range []string{"b<", "a"} {
			key, val := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			key.SetString(k + tricky[variant-1])
			fill(val, variant)
			m.SetMapIndex(key, val)
		}
		v.Set(m)
	case reflect.Interface:
		v.Set(reflect.ValueOf(map[string]any{"k": tricky[variant-1], "n": 1.5}))
	}
}
