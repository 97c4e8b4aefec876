package core_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// protocolDoc is the wire reference whose examples the schema must take.
const protocolDoc = "../docs/protocol.md"

// example is one request of docs/protocol.md: `→ core.get {"id":1}` or
// `nats req core.get '{"id":1}'`, with the reply the document shows.
type example struct {
	line    int
	method  string
	request string
	// reply is the JSON the document answers with on the same line, ""
	// when it shows none there or something else (an error, "…").
	reply string
	// invalid: the document shows core answering `invalid`.
	invalid bool
}

var (
	arrowExample = regexp.MustCompile(`^→ core\.([a-z_]+) (\{.*?\})(?:\s+← (.*))?$`)
	natsExample  = regexp.MustCompile(`^(?:\$ )?nats req .*?core\.([a-z_]+) '(.*)'$`)
	// answeredInvalid is how the document shows an invalid answer, on the
	// example's line or the lines after it, up to the next example: the
	// whole request's, or one batch operation's.
	answeredInvalid = regexp.MustCompile(`← invalid|Kuebus-Error-Code: invalid|"code":"invalid"`)
)

// protocolExamples reads every example request of the document.
func protocolExamples(t *testing.T) []example {
	t.Helper()
	text, err := os.ReadFile(protocolDoc)
	require.NoError(t, err)
	lines := strings.Split(string(text), "\n")
	var out []example
	for i, l := range lines {
		var ex example
		if m := arrowExample.FindStringSubmatch(l); m != nil {
			ex = example{line: i + 1, method: m[1], request: m[2]}
			if json.Valid([]byte(m[3])) {
				ex.reply = m[3]
			}
		} else if m := natsExample.FindStringSubmatch(l); m != nil {
			ex = example{line: i + 1, method: m[1], request: m[2]}
		} else {
			continue
		}
		// What follows, up to the next example or the end of the block.
		for j := i; j < len(lines) && j < i+8; j++ {
			if j > i && (arrowExample.MatchString(lines[j]) || natsExample.MatchString(lines[j]) || strings.HasPrefix(lines[j], "```")) {
				break
			}
			if answeredInvalid.MatchString(lines[j]) {
				ex.invalid = true
			}
		}
		out = append(out, ex)
	}
	return out
}

// compileMethodSchemas compiles the request and reply schema of every
// method of the schema file.
func compileMethodSchemas(t *testing.T) (requests, replies map[string]*jsonschema.Schema) {
	t.Helper()
	f, err := os.Open(schemaFile)
	require.NoError(t, err)
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource(bus.SchemaURL, doc))
	var top struct {
		Methods map[string]json.RawMessage `json:"x-methods"`
	}
	raw, err := os.ReadFile(schemaFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &top))
	requests, replies = map[string]*jsonschema.Schema{}, map[string]*jsonschema.Schema{}
	for m := range top.Methods {
		requests[m], err = c.Compile(bus.SchemaURL + "#/x-methods/" + m + "/request")
		require.NoError(t, err, m)
		replies[m], err = c.Compile(bus.SchemaURL + "#/x-methods/" + m + "/reply")
		require.NoError(t, err, m)
	}
	return requests, replies
}

func validate(s *jsonschema.Schema, body string) error {
	if strings.TrimSpace(body) == "" {
		body = "{}" // core reads an empty body as {}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(body)))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	return s.Validate(v)
}

// TestEveryProtocolExampleValidates: each request docs/protocol.md shows
// is valid by the schema, but those the document shows answered with
// invalid, which the schema refuses too; and each reply shown whole on an
// example's line is valid by the method's reply schema. The validator is
// santhosh-tekuri/jsonschema: it implements draft 2020-12 (the schema's)
// whole, passes the official test suite, and needs no module beyond
// golang.org/x/text.
func TestEveryProtocolExampleValidates(t *testing.T) {
	t.Parallel()
	requests, replies := compileMethodSchemas(t)
	examples := protocolExamples(t)
	require.Greater(t, len(examples), 60, "the document's examples were not found: has their form changed?")
	seen := map[string]bool{}
	for _, ex := range examples {
		s, ok := requests[ex.method]
		if !assertTrue(t, ok, "%s:%d: core.%s is no method of the schema", protocolDoc, ex.line, ex.method) {
			continue
		}
		seen[ex.method] = true
		err := validate(s, ex.request)
		if ex.invalid {
			if err == nil {
				t.Errorf("%s:%d: core.%s %s is answered invalid there, but the schema takes it", protocolDoc, ex.line, ex.method, ex.request)
			}
		} else if err != nil {
			t.Errorf("%s:%d: core.%s %s: %v", protocolDoc, ex.line, ex.method, ex.request, err)
		}
		if ex.reply != "" {
			if err := validate(replies[ex.method], ex.reply); err != nil {
				t.Errorf("%s:%d: the reply of core.%s %s: %v", protocolDoc, ex.line, ex.method, ex.reply, err)
			}
		}
	}
	for m := range requests {
		if !seen[m] {
			t.Errorf("%s shows no example request of core.%s", protocolDoc, m)
		}
	}
}

// TestTheSchemaRefusesWhatCoreRefuses: a few requests core answers with
// invalid for their shape (a missing type, an unknown field, a bound
// passed) are refused by the schema too, and their nearest valid
// neighbours are taken.
func TestTheSchemaRefusesWhatCoreRefuses(t *testing.T) {
	t.Parallel()
	requests, _ := compileMethodSchemas(t)
	for _, tc := range []struct {
		method, body string
		valid        bool
	}{
		{"create", `{"type":"email"}`, true},
		{"create", `{}`, false},
		{"create", `{"type":"email","bogus":1}`, false},
		{"create", `{"type":"e.mail"}`, false},
		{"create", `{"type":"email","delay":315360000000}`, true},
		{"create", `{"type":"email","delay":315360000001}`, false},
		{"create", `{"type":"email","delay":-1}`, false},
		{"create", `{"type":"email","priority":"urgent"}`, false},
		{"create", `{"type":"email","backoff":{"delay":5}}`, false},
		{"create", `{"type":"email","remove_on_complete":{"age":1,"days":2}}`, false},
		{"create_bulk", `{"jobs":[]}`, false},
		{"get", `{"id":1}`, true},
		{"get", `{"type":"t","unique_key":"k"}`, true},
		{"get", `{"id":1,"type":"t","unique_key":"k"}`, false},
		{"get", `{"type":"t"}`, false},
		{"get", `{"id":0}`, false},
		{"lease", `{"types":["a"],"wait":300000}`, true},
		{"lease", `{"types":["a"],"wait":300001}`, false},
		{"lease", `{"types":[]}`, false},
		{"schedule_set", `{"name":"n","every":1000,"spec":{"type":"t"}}`, true},
		{"schedule_set", `{"name":"n","every":999,"spec":{"type":"t"}}`, false},
		{"schedule_set", `{"name":"n","cron":"@daily","every":1000,"spec":{"type":"t"}}`, false},
		{"schedule_set", `{"name":"n","every":1000,"tz":"UTC","spec":{"type":"t"}}`, false},
		{"schedule_set", `{"name":"n","cron":"@daily","spec":{}}`, false},
		{"types", `{}`, true},
		{"types", `{"x":1}`, false},
	} {
		err := validate(requests[tc.method], tc.body)
		if tc.valid {
			require.NoError(t, err, "%s %s", tc.method, tc.body)
		} else {
			require.Error(t, err, "%s %s", tc.method, tc.body)
		}
	}
}

// TestTheMethodTableListsEachMethodsCodes: docs/protocol.md §3's table of
// methods has a row for each method of core.Methods, and its last column
// names the codes the schema's x-error-codes gives beside invalid,
// unavailable and internal ("—" for none; for batch, per operation).
func TestTheMethodTableListsEachMethodsCodes(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile(protocolDoc)
	require.NoError(t, err)
	head := "| method | request | reply | codes besides invalid/unavailable/internal |"
	_, table, ok := strings.Cut(string(text), head)
	require.True(t, ok, "%s: no method table", protocolDoc)
	table, _, _ = strings.Cut(table, "\n\n")
	rows := map[string][]string{}
	code := regexp.MustCompile("`(not_found|conflict)`")
	for _, row := range strings.Split(strings.TrimSpace(table), "\n")[1:] {
		cells := strings.Split(row, "|")
		require.Len(t, cells, 6, row)
		var codes []string
		if !strings.Contains(cells[4], "per op") {
			for _, m := range code.FindAllStringSubmatch(cells[4], -1) {
				codes = append(codes, m[1])
			}
		}
		for _, name := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(cells[1], -1) {
			rows[name[1]] = codes
		}
	}
	for _, m := range core.Methods {
		got, ok := rows[m.Name]
		if !assertTrue(t, ok, "%s: the method table has no row for %s", protocolDoc, m.Name) {
			continue
		}
		var want []string
		for _, c := range methodCodes[m.Name] {
			want = append(want, string(c))
		}
		require.Equal(t, want, got, "%s: %s's codes in the method table and methodCodes", protocolDoc, m.Name)
	}
}

// TestTheSchemasBoundsAreCores: for each method, its first valid example
// in docs/protocol.md with one top-level field moved just past a bound the
// schema states (minimum, maximum, maxLength, minItems, maxItems) is
// answered invalid by a running core, naming the field; moved to the
// bound itself (minimum, maximum), core does not refuse it for that field,
// unless schemaLooser says why. So the schema's bounds are core's, neither
// looser nor stricter. (Nested fields, a spec's inside
// schedule_set, are checked where they are top level: create.)
func TestTheSchemasBoundsAreCores(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(schemaFile)
	require.NoError(t, err)
	var doc struct {
		Defs    map[string]map[string]any `json:"$defs"`
		Methods map[string]struct {
			Request map[string]any `json:"request"`
		} `json:"x-methods"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&doc))
	base := map[string]string{}
	for _, ex := range protocolExamples(t) {
		if _, ok := base[ex.method]; !ok && !ex.invalid {
			base[ex.method] = ex.request
		}
	}
	requests, _ := compileMethodSchemas(t)
	c := nodetest.NewCore(t, service.Config{})
	rpc := bus.NewClient(c.NATS.Conn, 5*time.Second)
	var subj bus.Subjects
	checked := 0
	for method, body := range base {
		ref, _ := doc.Methods[method].Request["$ref"].(string)
		def := doc.Defs[strings.TrimPrefix(ref, "#/$defs/")]
		props, _ := def["properties"].(map[string]any)
		for field, p := range props {
			for _, edge := range atBounds(p.(map[string]any)) {
				req := map[string]any{}
				require.NoError(t, json.Unmarshal([]byte(body), &req))
				req[field] = edge
				b, err := json.Marshal(req)
				require.NoError(t, err)
				if validate(requests[method], string(b)) != nil || schemaLooser[method+"."+field] != "" {
					continue // the schema refuses it as a whole, or says why core may
				}
				err = rpc.CallRaw(t.Context(), subj.Core(method), b, nil)
				if nodetest.ErrCode(err) == bus.CodeInvalid && strings.HasPrefix(bus.MessageOf(err), field+":") {
					t.Errorf("core.%s %.200s: the schema takes it, core does not: %v", method, b, err)
				}
			}
			for _, bad := range pastBounds(t, p.(map[string]any), body, field) {
				req := map[string]any{}
				require.NoError(t, json.Unmarshal([]byte(body), &req))
				req[field] = bad
				b, err := json.Marshal(req)
				require.NoError(t, err)
				err = rpc.CallRaw(t.Context(), subj.Core(method), b, nil)
				require.Equal(t, bus.CodeInvalid, nodetest.ErrCode(err), "core.%s %.200s: %v", method, b, err)
				require.Contains(t, err.Error(), field, "core.%s %.200s: the error names the field", method, b)
				checked++
			}
		}
	}
	t.Logf("%d values past a bound, each refused by core", checked)
	require.Greater(t, checked, 50, "bounds checked")
}

// schemaLooser are the bounds core checks against another field or its
// clock, which the schema states in the field's description only.
var schemaLooser = map[string]string{
	"heartbeat.running":    "at most concurrency",
	"heartbeat.started_at": "at most a day past core's clock",
	"range.to":             "to − from below 1000",
	"range.limit":          "a page by cursor (limit) takes no from or to",
	"lease.wait":           "a lease that waits 5 minutes would hold the test up",
	"history.hours":        "minutes or hours, not both",
}

// atBounds are a field's extreme values its schema p takes.
func atBounds(p map[string]any) []any {
	var out []any
	for _, k := range []string{"minimum", "maximum"} {
		if n, ok := p[k].(json.Number); ok {
			out = append(out, n)
		}
	}
	return out
}

// pastBounds are values of one field just outside each bound its schema
// p states; body is the request the field belongs to.
func pastBounds(t *testing.T, p map[string]any, body, field string) []any {
	t.Helper()
	var out []any
	num := func(k string) (*big.Int, bool) {
		n, ok := p[k].(json.Number)
		if !ok {
			return nil, false
		}
		v, ok := new(big.Int).SetString(string(n), 10)
		require.True(t, ok, "%s: %s %s", field, k, n)
		return v, true
	}
	if lo, ok := num("minimum"); ok {
		out = append(out, json.Number(lo.Sub(lo, big.NewInt(1)).String()))
	}
	if hi, ok := num("maximum"); ok {
		out = append(out, json.Number(hi.Add(hi, big.NewInt(1)).String()))
	}
	if n, ok := num("maxLength"); ok && p["x-limit-default"] == nil {
		out = append(out, strings.Repeat("a", int(n.Int64())+1))
	}
	if n, ok := num("minItems"); ok && n.Int64() > 0 {
		out = append(out, []any{})
	}
	if n, ok := num("maxItems"); ok {
		// As many of the example's own first item as one too many.
		var req map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &req))
		items, _ := req[field].([]any)
		if len(items) > 0 {
			out = append(out, slices.Repeat(items[:1], int(n.Int64())+1))
		}
	}
	return out
}

func assertTrue(t *testing.T, ok bool, format string, args ...any) bool {
	t.Helper()
	if !ok {
		t.Errorf(format, args...)
	}
	return ok
}
