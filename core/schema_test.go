package core_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math"
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
// is in core.Methods (so in the schema), and every method there is served;
// $SRV.INFO's metadata links to the schema.
func TestSchemaListsEveryMethodCoreServes(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	nc := bustest.Connect(t, c.NATS.ClientURL())
	msg, err := nc.Request("$SRV.INFO."+bus.CoreServiceName, nil, 5*time.Second)
	require.NoError(t, err)
	var info struct {
		Endpoints []struct{ Name string }
		Metadata  map[string]string
	}
	require.NoError(t, json.Unmarshal(msg.Data, &info))
	// The schema's $id (protocolSchema), so a client that discovers core
	// finds its bodies' schema.
	require.Equal(t, bus.SchemaURL, info.Metadata[bus.MetadataSchema])
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
	requests := map[string]bool{}
	for _, m := range core.Methods {
		methods[m.Name] = map[string]any{
			"request": leaseOpShape(m.Name, g.of(t, reflect.TypeOf(m.Request))),
			"reply":   g.of(t, reflect.TypeOf(m.Reply)),
			"x-error-codes": slices.Concat([]bus.Code{bus.CodeInvalid, bus.CodeUnavailable, bus.CodeInternal},
				methodCodes[m.Name]),
		}
		structsOf(reflect.TypeOf(m.Request), requests)
	}
	for name := range requests {
		g.closeRequest(t, name)
	}
	g.unitsByName()
	codes := map[string]any{}
	for _, c := range []bus.Code{bus.CodeInvalid, bus.CodeNotFound, bus.CodeConflict, bus.CodeUnavailable, bus.CodeInternal} {
		codes[string(c)] = map[string]any{"status": bus.StatusOf(c), "description": codeMeaning[c]}
	}
	doc := map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         bus.SchemaURL,
		"title":       "kuebus protocol " + bus.ProtocolVersion,
		"description": "The bodies of kuebus's RPC methods (core.<method>: request and reply) and of its events (job.<event>.<id>.<type>, queue.<event>), as docs/protocol.md describes them. A request refuses fields it does not list (core decodes strictly) and states its required fields, bounds and units (x-unit: ms for a duration, unix ms for an instant, bytes where a limit counts UTF-8 bytes, which maxLength, counting characters, can only approach); x-limit-default is the default of a limit a core's configuration may change. A reply or event may gain fields in a later version: a client ignores those it does not know. Errors travel in headers, not bodies: x-errors. Written from the Go types by core's schema test; do not edit by hand.",
		"$defs":       g.defs,
		"x-methods":   methods,
		"x-event":     g.of(t, reflect.TypeOf(core.Event{})),
		"x-errors": map[string]any{
			"description": "A failed request is answered with an empty body and headers: " + bus.HeaderKuebusCode + " (the code), " + bus.HeaderErrorCode + " (its HTTP-like status) and " + bus.HeaderError + " (the message; for invalid it starts with the field at fault, then a colon). docs/protocol.md §1 Errors says which to retry.",
			"codes":       codes,
		},
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
			"oneOf": []any{map[string]any{"type": "integer", "minimum": -core.MaxPriority, "maximum": core.MaxPriority}, map[string]any{"enum": []string{"low", "normal", "medium", "high", "critical"}}}}
	},
	reflect.TypeFor[core.Retention](): func() map[string]any {
		return map[string]any{"description": "true: removed as it finishes; {age (ms), count}: kept that long, while among the newest count",
			"oneOf": []any{map[string]any{"type": "boolean"}, map[string]any{"type": "object", "additionalProperties": false,
				"properties": map[string]any{"age": map[string]any{"type": "integer", "minimum": 0, "maximum": math.MaxInt64, "x-unit": "ms"}, "count": map[string]any{"type": "integer", "minimum": 0, "maximum": math.MaxInt64}}}}}
	},
	// A time.Time on the wire is unix ms (core/units.go).
	reflect.TypeFor[time.Time](): func() map[string]any {
		return map[string]any{"type": "integer"}
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

// msOnTheWire are the structs whose JSON methods only write their
// time.Duration fields as integers of milliseconds (core/units.go): their
// schema is their fields', a duration an integer.
var msOnTheWire = map[reflect.Type]bool{
	reflect.TypeFor[core.Spec]():               true,
	reflect.TypeFor[core.Backoff]():            true,
	reflect.TypeFor[core.ScheduleSetRequest](): true,
	reflect.TypeFor[core.Schedule]():           true,
	reflect.TypeFor[core.BulkActionRequest]():  true,
	reflect.TypeFor[core.Rate]():               true,
	reflect.TypeFor[core.Aging]():              true,
	reflect.TypeFor[core.TypeDefaults]():       true,
}

func (g *schemaGen) of(t *testing.T, typ reflect.Type) map[string]any {
	t.Helper()
	if f, ok := special[typ]; ok {
		return f()
	}
	if (typ.Implements(reflect.TypeFor[json.Marshaler]()) || reflect.PointerTo(typ).Implements(reflect.TypeFor[json.Unmarshaler]())) && !msOnTheWire[typ] && typ.Kind() != reflect.Pointer {
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

// codeMeaning is what each error code says, as docs/protocol.md §1 does.
var codeMeaning = map[bus.Code]string{
	bus.CodeInvalid:     "bad input: the message starts with the field at fault; do not retry, fix the request",
	bus.CodeNotFound:    "no such job (or schedule)",
	bus.CodeConflict:    "a stale lease, or a state the change does not apply to (cancel of a finished job)",
	bus.CodeUnavailable: "Redis down or failing over, core shutting down or busy, no core answering: retry later",
	bus.CodeInternal:    "a bug or an unexpected failure, logged by core",
}

// leaseOpTakes are the fields of a LeaseOp that each single lease
// operation takes besides id, lease, type and op; core refuses the others
// (checkOp).
var leaseOpTakes = map[string][]string{
	bus.MethodComplete: {"result"},
	bus.MethodFail:     {"error", "final", "stack", "delay"},
	bus.MethodTouch:    nil,
	bus.MethodRelease:  nil,
	bus.MethodRejoin:   {"delay"},
	bus.MethodProgress: {"complete", "total"},
}

// leaseOpShape narrows a lease operation's request to the fields its
// method takes: LeaseOp's own, less the others' ("field": false).
func leaseOpShape(method string, ref map[string]any) map[string]any {
	takes, ok := leaseOpTakes[method]
	if !ok {
		return ref
	}
	not := map[string]any{}
	for _, f := range []string{"result", "error", "final", "stack", "delay", "complete", "total"} {
		if !slices.Contains(takes, f) {
			not[f] = false
		}
	}
	shape := map[string]any{"$ref": ref["$ref"], "properties": not}
	if method == bus.MethodProgress {
		shape["required"] = []string{"complete", "total"}
	}
	return shape
}

// methodCodes are the codes a method may answer besides invalid,
// unavailable and internal, which any may: docs/protocol.md §3's method
// table says the same (TestTheMethodTableListsEachMethodsCodes).
var methodCodes = map[string][]bus.Code{
	bus.MethodGet:            {bus.CodeNotFound},
	bus.MethodRemove:         {bus.CodeNotFound},
	bus.MethodLog:            {bus.CodeNotFound},
	bus.MethodAddLog:         {bus.CodeNotFound},
	bus.MethodSetState:       {bus.CodeNotFound},
	bus.MethodSetPriority:    {bus.CodeNotFound},
	bus.MethodComplete:       {bus.CodeNotFound, bus.CodeConflict},
	bus.MethodFail:           {bus.CodeNotFound, bus.CodeConflict},
	bus.MethodTouch:          {bus.CodeNotFound, bus.CodeConflict},
	bus.MethodRelease:        {bus.CodeNotFound, bus.CodeConflict},
	bus.MethodRejoin:         {bus.CodeNotFound, bus.CodeConflict},
	bus.MethodProgress:       {bus.CodeNotFound, bus.CodeConflict},
	bus.MethodScheduleRemove: {bus.CodeNotFound},
	bus.MethodScheduleRun:    {bus.CodeNotFound, bus.CodeConflict},
	bus.MethodExplain:        {bus.CodeNotFound},
	bus.MethodDependencies:   {bus.CodeNotFound},
	bus.MethodDependents:     {bus.CodeNotFound},
	bus.MethodCancel:         {bus.CodeNotFound, bus.CodeConflict},
	bus.MethodHeartbeat:      {bus.CodeConflict},
}

// structsOf adds the names of the structs typ is made of, itself included.
func structsOf(typ reflect.Type, names map[string]bool) {
	if _, ok := special[typ]; ok {
		return
	}
	switch typ.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		structsOf(typ.Elem(), names)
	case reflect.Struct:
		if names[typ.Name()] {
			return
		}
		names[typ.Name()] = true
		for i := range typ.NumField() {
			if f := typ.Field(i); f.IsExported() {
				structsOf(f.Type, names)
			}
		}
	}
}

// Schema fragments of the request rules.
func between(lo, hi int64) map[string]any { return map[string]any{"minimum": lo, "maximum": hi} }

func ms(lo, hi int64) map[string]any {
	return map[string]any{"minimum": lo, "maximum": hi, "x-unit": "ms"}
}

func unixMS(desc string) map[string]any {
	return map[string]any{"minimum": 0, "maximum": math.MaxInt64, "x-unit": "unix ms", "description": desc}
}

// maxBytes bounds a string counted in UTF-8 bytes: maxLength counts
// characters, so it holds a string that still has too many bytes.
func maxBytes(n int) map[string]any {
	return map[string]any{"maxLength": n, "x-unit": "bytes", "description": fmt.Sprintf("at most %d bytes of UTF-8", n)}
}

// tokenRule is a job type, schedule name: one subject token.
func tokenRule() map[string]any {
	return map[string]any{"type": "string", "pattern": "^[A-Za-z0-9_-]+$", "minLength": 1, "maxLength": 128}
}

// limitDefault is a limit a core's configuration sets (service.Config's
// field), with its default.
func limitDefault(field string, n int, unit string) map[string]any {
	return map[string]any{"x-limit-default": n, "x-unit": unit,
		"description": fmt.Sprintf("at most service.Config.%s, %d %s by default", field, n, unit)}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := maps.Clone(m)
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// required marks a rule's field as one the request must give.
var required = map[string]any{"x-required": true}

// opaque is a string core made and reads back (a cursor, a lease token):
// its bound is core's parser.
var opaque = map[string]any{"description": "opaque: as a reply gave it"}

// requestRules are what core checks of each request's fields beyond their
// JSON types (docs/protocol.md §1 Size limits and §3), written into the
// schema. Every integer of a request has its bounds here, every string its
// length or pattern, every array its size: TestSchemaMatchesTheGoTypes
// fails on a request field without one, so a new field comes with its.
var requestRules = map[string]map[string]map[string]any{
	"Spec": {
		"type":               with(tokenRule(), "x-required", true),
		"data":               limitDefault("MaxDataBytes", core.MaxDataBytesDefault, "bytes"),
		"delay":              ms(0, core.MaxDelay),
		"max_attempts":       with(between(0, core.MaxAttempts), "description", "0 means 1"),
		"ttl":                with(ms(0, core.MaxDelay), "description", fmt.Sprintf("0 means %d", core.TTLDefault)),
		"unique_key":         maxBytes(core.MaxUniqueKeyLen),
		"stall_limit":        between(0, core.MaxStallLimit),
		"trace":              {"pattern": "^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$", "description": "a W3C traceparent, version 00"},
		"priority":           {},
		"backoff":            {},
		"remove_on_complete": {},
		"remove_on_fail":     {},
		"broadcast":          {"description": "true: published to every listener when due, never leased"},
		"group":              with(tokenRule(), "description", "the job's group within its type: leases take the groups in turn"),
		"depends_on": {"maxItems": core.MaxDependencies, "uniqueItems": true, "items": between(1, math.MaxInt64),
			"description": "ids of existing jobs this one waits for"},
		"on_dependency_failure": {"enum": []core.DepPolicy{core.DepFail, core.DepIgnore, core.DepCancel}},
	},
	"FlowRequest": {"jobs": {"minItems": 1, "maxItems": core.MaxFlowJobs, "x-required": true}},
	"FlowJob": {
		"ref":        with(maxBytes(core.MaxRefLen), "x-required", true, "minLength", 1),
		"spec":       required,
		"depends_on": {"maxItems": core.MaxDependencies, "description": "each a ref of the flow (a string) or the id of an existing job (a number)"},
	},
	"TypeRequest": {"type": with(tokenRule(), "x-required", true)},
	"TypePolicy": {
		"type":              with(tokenRule(), "x-required", true),
		"defaults":          {},
		"concurrency":       with(between(0, core.MaxConcurrency), "description", "0 means no limit"),
		"rate":              {},
		"group_concurrency": with(between(0, core.MaxConcurrency), "description", "0 means no limit; at most this many active jobs of each group of the type"),
		"group_rate":        {"description": "at most limit starts of each group of the type in any window of per ms"},
		"aging":             {},
	},
	"Rate": {
		"limit": with(between(0, core.MaxRateLimit), "description", "starts in any window of per ms; 0 with per 0 means no limit"),
		"per":   with(ms(0, core.MaxRatePer.Milliseconds()), "description", "the window; 0 only with limit 0"),
	},
	"Aging": {"per": with(ms(0, core.MaxAgingPer.Milliseconds()), "description", "ms of credit per step of priority; 0 means strict priority")},
	"TypeDefaults": {
		"priority":           {},
		"max_attempts":       between(0, core.MaxAttempts),
		"backoff":            {},
		"ttl":                ms(0, core.MaxDelay),
		"stall_limit":        between(0, core.MaxStallLimit),
		"remove_on_complete": {},
		"remove_on_fail":     {},
	},
	"Backoff": {
		"type":  required,
		"delay": ms(0, core.MaxDelay),
	},
	"BulkRequest": {
		"jobs":     with(limitDefault("MaxBulk", 1000, "jobs"), "minItems", 1, "x-required", true),
		"ids_only": {},
	},
	"GetRequest": {
		"id":         between(1, math.MaxInt64),
		"type":       tokenRule(),
		"unique_key": maxBytes(core.MaxUniqueKeyLen),
	},
	"IDRequest": {"id": with(between(1, math.MaxInt64), "x-required", true)},
	"AddLogRequest": {
		"id":   with(between(1, math.MaxInt64), "x-required", true),
		"line": with(limitDefault("MaxLogLineBytes", 64<<10, "bytes"), "x-required", true),
	},
	"RangeRequest": {
		"state":  {},
		"type":   tokenRule(),
		"from":   with(between(0, math.MaxInt64), "description", fmt.Sprintf("a position; to − from < %d, and below %d without a type", core.MaxRangeSize, core.MaxUntypedPosition)),
		"to":     with(between(0, math.MaxInt64), "description", "a position, from or after from"),
		"order":  {"enum": []string{"asc", "desc"}},
		"cursor": opaque,
		"limit":  with(between(0, core.MaxRangeSize), "description", fmt.Sprintf("0 means %d", core.RangeLimitDefault)),
	},
	"CountRequest": {"state": {}, "type": tokenRule()},
	"IDsRequest": {
		"state":  required,
		"cursor": opaque,
		"limit":  with(between(0, core.MaxIDsLimit), "description", fmt.Sprintf("0 means %d", core.IDsLimitDefault)),
	},
	"StatsRequest":       {"partial": {}},
	"SetStateRequest":    {"id": with(between(1, math.MaxInt64), "x-required", true), "state": required},
	"SetPriorityRequest": {"id": with(between(1, math.MaxInt64), "x-required", true), "priority": required},
	"LimitRequest":       {"limit": with(between(0, core.MaxMoveLimit), "description", fmt.Sprintf("0 means %d", core.MoveLimitDefault))},
	"LeaseRequest": {
		"types":  {"x-required": true, "minItems": 1, "maxItems": core.MaxLeaseTypes, "items": tokenRule()},
		"max":    with(between(0, core.MaxLeaseBatch), "description", "0 means 1"),
		"worker": maxBytes(core.MaxWorkerLen),
		"wait":   ms(0, core.MaxLeaseWait),
		"ttl":    with(ms(0, core.MaxDelay), "description", "0: each job's own ttl"),
	},
	"BatchLease": {
		"types":  {"x-required": true, "minItems": 1, "maxItems": core.MaxLeaseTypes, "items": tokenRule()},
		"max":    with(between(0, core.MaxLeaseBatch), "description", "0 means 1"),
		"worker": maxBytes(core.MaxWorkerLen),
	},
	"LeaseOp": {
		"op":       {},
		"id":       with(between(1, math.MaxInt64), "x-required", true),
		"lease":    with(opaque, "x-required", true),
		"type":     tokenRule(),
		"result":   limitDefault("MaxDataBytes", core.MaxDataBytesDefault, "bytes"),
		"error":    limitDefault("MaxLogLineBytes", 64<<10, "bytes"),
		"final":    {},
		"delay":    ms(0, core.MaxDelay),
		"complete": between(0, math.MaxInt64),
		"total":    between(1, math.MaxInt64),
		"stack":    maxBytes(core.MaxStackBytes),
	},
	"BatchRequest": {
		"ops":   {"x-required": true, "minItems": 1, "maxItems": core.MaxBatch},
		"lease": {},
	},
	"RescueRequest": {
		"limit":       with(between(0, core.MaxMoveLimit), "description", fmt.Sprintf("0 means %d", core.MoveLimitDefault)),
		"stall_limit": with(between(0, core.MaxStallLimit), "description", "0 means the core's"),
	},
	"PauseRequest": {"type": with(tokenRule(), "x-required", true)},
	"CancelRequest": {
		"id":     with(between(1, math.MaxInt64), "x-required", true),
		"reason": limitDefault("MaxLogLineBytes", 64<<10, "bytes"),
	},
	"BulkActionRequest": {
		"action":      required,
		"state":       required,
		"type":        tokenRule(),
		"error":       limitDefault("MaxLogLineBytes", 64<<10, "bytes"),
		"error_group": with(maxBytes(200), "description", "a group as failed_errors gives it, compared whole"),
		"before":      unixMS("only jobs last changed before this instant; 0 for any time"),
		"limit":       with(between(0, core.BulkLimitMax), "description", "0 means the default"),
		"cursor":      opaque,
	},
	"ScheduleSetRequest": {
		"name":   with(tokenRule(), "x-required", true),
		"cron":   with(maxBytes(core.MaxCronLen), "description", "5 fields, 6 with seconds first, or a descriptor (@hourly); the zone in tz"),
		"every":  ms(core.MinEvery.Milliseconds(), core.MaxDelay),
		"tz":     with(maxBytes(core.MaxTZLen), "description", "an IANA time zone, for cron only; default UTC"),
		"spec":   required,
		"paused": {},
	},
	"NameRequest": {"name": with(tokenRule(), "x-required", true)},
	"SearchRequest": {
		"q":           with(maxBytes(core.MaxSearchQuery), "description", "required unless error or error_group is given"),
		"error":       maxBytes(core.MaxSearchQuery),
		"error_group": maxBytes(200),
		"type":        tokenRule(),
		"state":       {},
		"limit":       with(between(0, core.MaxSearchLimit), "description", fmt.Sprintf("0 means %d", core.SearchLimitDefault)),
		"cursor":      opaque,
	},
	"HistoryRequest": {
		"type":    tokenRule(),
		"minutes": with(between(0, core.MaxHistoryMinutes), "description", "0 means the default"),
		"hours":   with(between(0, core.MaxHistoryHours), "description", "not with minutes; 0 means minutes"),
	},
	"FailedErrorsRequest": {
		"type":  with(tokenRule(), "x-required", true),
		"limit": with(between(0, core.MaxFailedErrorsLimit), "description", fmt.Sprintf("0 means %d", core.FailedErrorsLimitDefault)),
	},
	"Heartbeat": {
		"worker":      with(maxBytes(core.MaxWorkerLen), "x-required", true, "minLength", 1),
		"types":       {"maxItems": core.MaxLeaseTypes, "items": tokenRule()},
		"concurrency": between(0, core.MaxWorkerConcurrency),
		"running":     with(between(0, core.MaxWorkerConcurrency), "description", "at most concurrency, when that is above 0"),
		"host":        maxBytes(core.MaxWorkerLen),
		"pid":         between(0, core.MaxWorkerPID),
		"started_at":  unixMS("when the worker started; at most a day after core's now"),
		"gone":        {},
		"instance":    maxBytes(core.MaxInstanceLen),
	},
	"Empty": {},
}

// requestShapes are what a request needs beyond each field's own rule:
// which fields go together.
var requestShapes = map[string]map[string]any{
	"GetRequest": {"oneOf": []any{
		map[string]any{"required": []string{"id"}, "not": map[string]any{"anyOf": []any{
			map[string]any{"required": []string{"type"}}, map[string]any{"required": []string{"unique_key"}}}}},
		map[string]any{"required": []string{"type", "unique_key"}, "not": map[string]any{"required": []string{"id"}}},
	}},
	"ScheduleSetRequest": {
		"oneOf":             []any{map[string]any{"required": []string{"cron"}}, map[string]any{"required": []string{"every"}}},
		"dependentRequired": map[string]any{"tz": []string{"cron"}},
	},
}

// unitsByName gives each integer field of a reply or event the unit its
// name says, the protocol's one word per concept: *_at, next_due and
// lease_until are instants (unix ms); delay, ttl, duration, every and
// work_time durations (ms); progress a percent. A request's fields have
// theirs from requestRules already.
func (g *schemaGen) unitsByName() {
	for _, d := range g.defs {
		def, ok := d.(map[string]any)
		if !ok {
			continue
		}
		props, _ := def["properties"].(map[string]any)
		for name, p := range props {
			prop, ok := p.(map[string]any)
			if !ok || prop["type"] != "integer" || prop["x-unit"] != nil {
				continue
			}
			switch {
			case name == "at" || strings.HasSuffix(name, "_at") || name == "next_due" || name == "lease_until":
				prop["x-unit"] = "unix ms"
			case slices.Contains([]string{"delay", "ttl", "duration", "every", "work_time"}, name):
				prop["x-unit"] = "ms"
			case name == "progress":
				prop["x-unit"] = "percent"
			}
		}
	}
}

// closeRequest makes the definition of a request type what core accepts:
// no unknown field, the required ones, and each field's rule; a field
// without a rule fails the test.
func (g *schemaGen) closeRequest(t *testing.T, name string) {
	t.Helper()
	def, ok := g.defs[name].(map[string]any)
	if !ok {
		return
	}
	rules, ok := requestRules[name]
	if !ok {
		t.Errorf("request type core.%s has no entry in requestRules", name)
		return
	}
	props := def["properties"].(map[string]any)
	var need []string
	for field, p := range props {
		rule, ok := rules[field]
		if !ok {
			t.Errorf("core.%s.%s: a request field without its rule in requestRules (bounds, unit, required)", name, field)
			continue
		}
		prop := maps.Clone(p.(map[string]any))
		for k, v := range rule {
			if k == "x-required" {
				need = append(need, field)
				continue
			}
			prop[k] = v
		}
		switch prop["type"] {
		case "integer":
			if prop["minimum"] == nil || prop["maximum"] == nil {
				t.Errorf("core.%s.%s: an integer without minimum and maximum", name, field)
			}
		case "string":
			if prop["maxLength"] == nil && prop["enum"] == nil && prop["pattern"] == nil && prop["description"] == nil {
				t.Errorf("core.%s.%s: a string without maxLength, enum, pattern or a description of its bound", name, field)
			}
		case "array":
			if prop["maxItems"] == nil && prop["x-limit-default"] == nil {
				t.Errorf("core.%s.%s: an array without maxItems", name, field)
			}
		}
		props[field] = prop
	}
	for field := range rules {
		if props[field] == nil {
			t.Errorf("requestRules: core.%s has no field %s", name, field)
		}
	}
	def["additionalProperties"] = false
	if len(need) > 0 {
		slices.Sort(need)
		def["required"] = need
	}
	maps.Copy(def, requestShapes[name])
}
