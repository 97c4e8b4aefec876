package core_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// schemaFile is the JSON Schema of the protocol: every method's request
// and reply, and the event body.
const schemaFile = "../docs/schema/kuebus.schema.json"

var updateSchema = flag.Bool("update", false, "write "+schemaFile+" from the Go types")

// TestSchemaMatchesTheGoTypes: docs/schema/kuebus.schema.json is what the
// Go wire types say (core.Methods and their JSON tags), so neither can
// change without the other; `go test ./core -run TestSchema -update`
// writes it anew.
func TestSchemaMatchesTheGoTypes(t *testing.T) {
	got := protocolSchema(t)
	if *updateSchema {
		require.NoError(t, os.WriteFile(schemaFile, got, 0o644))
	}
	want, err := os.ReadFile(schemaFile)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "%s is out of date: run go test ./core -run TestSchema -update", schemaFile)
}

// TestSchemaListsEveryMethodCoreServes: every endpoint of a running core
// is in core.Methods (so in the schema), and every method there is served.
func TestSchemaListsEveryMethodCoreServes(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	nc := bustest.Connect(t, c.NATS.ClientURL())
	msg, err := nc.Request("$SRV.INFO."+bus.CoreServiceName, nil, 5*time.Second)
	require.NoError(t, err)
	var info struct{ Endpoints []struct{ Name string } }
	require.NoError(t, json.Unmarshal(msg.Data, &info))
	var served, listed []string
	for _, e := range info.Endpoints {
		served = append(served, e.Name)
	}
	for _, m := range core.Methods {
		listed = append(listed, m.Name)
	}
	slices.Sort(served)
	slices.Sort(listed)
	require.Equal(t, served, listed)
}

// protocolSchema writes the schema: a definition per Go type, and per
// method the references of its request and reply.
func protocolSchema(t *testing.T) []byte {
	t.Helper()
	g := schemaGen{defs: map[string]any{}}
	methods := map[string]any{}
	for _, m := range core.Methods {
		methods[m.Name] = map[string]any{
			"request": g.of(t, reflect.TypeOf(m.Request)),
			"reply":   g.of(t, reflect.TypeOf(m.Reply)),
		}
	}
	doc := map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         "https://github.com/kuebus/kuebus/docs/schema/kuebus.schema.json",
		"title":       "kuebus protocol " + bus.ProtocolVersion,
		"description": "The bodies of kuebus's RPC methods (core.<method>: request and reply) and of its events (job.<event>.<id>.<type>, queue.<event>), as docs/protocol.md describes them. Written from the Go types by core's schema test; do not edit by hand.",
		"$defs":       g.defs,
		"x-methods":   methods,
		"x-event":     g.of(t, reflect.TypeOf(core.Event{})),
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(doc))
	return buf.Bytes()
}

// schemaGen turns Go wire types into JSON Schema: named structs become
// definitions referred to by name.
type schemaGen struct{ defs map[string]any }

// special are the types whose JSON is not what their Go kind says: they
// have JSON methods of their own, or only some values are valid.
var special = map[reflect.Type]func() map[string]any{
	reflect.TypeFor[json.RawMessage](): func() map[string]any {
		return map[string]any{"description": "any JSON value"}
	},
	reflect.TypeFor[core.Priority](): func() map[string]any {
		return map[string]any{"description": "lower runs first; a number or a name",
			"oneOf": []any{map[string]any{"type": "integer"}, map[string]any{"enum": []string{"low", "normal", "medium", "high", "critical"}}}}
	},
	reflect.TypeFor[core.Retention](): func() map[string]any {
		return map[string]any{"description": "true: removed as it finishes; {age (ms), count}: kept that long, while among the newest count",
			"oneOf": []any{map[string]any{"type": "boolean"}, map[string]any{"type": "object", "additionalProperties": false,
				"properties": map[string]any{"age": map[string]any{"type": "integer", "minimum": 0}, "count": map[string]any{"type": "integer", "minimum": 0}}}}}
	},
	reflect.TypeFor[core.State](): func() map[string]any {
		var states []string
		for _, s := range core.States {
			states = append(states, string(s))
		}
		return map[string]any{"type": "string", "enum": states}
	},
	reflect.TypeFor[core.BackoffType](): func() map[string]any {
		return map[string]any{"type": "string", "enum": []core.BackoffType{core.BackoffFixed, core.BackoffExponential}}
	},
	reflect.TypeFor[core.Op](): func() map[string]any {
		return map[string]any{"type": "string", "enum": []core.Op{core.OpComplete, core.OpFail, core.OpTouch, core.OpRelease, core.OpRejoin, core.OpProgress}}
	},
	reflect.TypeFor[core.DepRef](): func() map[string]any {
		return map[string]any{"description": "a ref of the same flow (a string), or the id of an existing job (a number)",
			"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer", "minimum": 1}}}
	},
	reflect.TypeFor[core.DepPolicy](): func() map[string]any {
		return map[string]any{"type": "string", "enum": []core.DepPolicy{core.DepFail, core.DepIgnore, core.DepCancel}}
	},
	reflect.TypeFor[core.BulkAction](): func() map[string]any {
		return map[string]any{"type": "string", "enum": []core.BulkAction{core.BulkRetry, core.BulkPromote, core.BulkRemove, core.BulkCancel}}
	},
}

func (g *schemaGen) of(t *testing.T, typ reflect.Type) map[string]any {
	t.Helper()
	if f, ok := special[typ]; ok {
		return f()
	}
	if typ.Implements(reflect.TypeFor[json.Marshaler]()) || reflect.PointerTo(typ).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		t.Fatalf("%v has JSON methods of its own: say its schema in special", typ)
	}
	switch typ.Kind() {
	case reflect.Pointer:
		return g.of(t, typ.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": g.of(t, typ.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.of(t, typ.Elem())}
	case reflect.Struct:
		name := typ.Name()
		if _, done := g.defs[name]; !done {
			g.defs[name] = nil // a type that refers to itself stops here
			g.defs[name] = g.object(t, typ)
		}
		return map[string]any{"$ref": "#/$defs/" + name}
	}
	t.Fatalf("%v: no schema for kind %v", typ, typ.Kind())
	return nil
}

// object is a struct's schema: its JSON fields, embedded structs' inlined.
func (g *schemaGen) object(t *testing.T, typ reflect.Type) map[string]any {
	props := map[string]any{}
	var add func(reflect.Type)
	add = func(typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			tag := f.Tag.Get("json")
			if f.Anonymous && tag == "" {
				add(f.Type)
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			props[name] = g.of(t, f.Type)
		}
	}
	add(typ)
	return map[string]any{"type": "object", "properties": props, "description": fmt.Sprintf("core.%s", typ.Name())}
}
