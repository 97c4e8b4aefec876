package core

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
)

// Values the spec generator picks from: the edges of each kind, and every
// string and raw JSON the reflective encoder escapes, compacts or refuses.
var (
	genStrings = []string{"", "a", "bulk", "email.send", `a"b`, `a\b`, "<b>&</b>", "a<b", "a>b", "a&b", "\u2028", "\u2029", "é€😀",
		"\x00\x1f", "\xff", "a\tb\nc", "\u007f", "/", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	genData = []string{"", `{}`, `[]`, `{"i":1}`, `[1,2.5e3,-0,0.5E-7,true,false,null,"x"]`, `{"a": 1}`, " 1 ", `"<b>&"`,
		"\"\u2028\"", `{"s":"\ud800\"\\\/\b\f\n\r\t"}`, `"é"`, `{"i":`, "\"\xff\"", `1e999`, `01`, `nul`, `-`, `1.`, `1e`,
		`{"a":{"b":[[[]]]}}`, strings.Repeat("[", 150) + strings.Repeat("]", 150), "\"\x01\"", `"\x"`, `"\u12"`, `{"a" 1}`,
		`{"a":1,}`, `[1 2]`, `{1:2}`, `null`, `true`, `"a"`, `{"name":"a b\tc"}`, `["x y", "z"]`, `{"q":"say \"hi there\"","n": 2}`,
		`{"e":"\\ ","f":" \" "}`, "{\"nl\":\"a\nb\"}"}
	genInts      = []int64{0, 1, -1, 7, math.MaxInt64, math.MinInt64, MaxPriority, -MaxPriority, MaxPriority + 1}
	genDurations = []time.Duration{0, time.Millisecond, 999 * time.Microsecond, -time.Millisecond, 3 * time.Hour,
		math.MaxInt64, math.MinInt64, MaxDelay * time.Millisecond}
	genRetentions = []Retention{{}, RemoveAtOnce, {Age: 5 * time.Millisecond}, {Count: 3}, {Age: time.Hour, Count: 10},
		{AtOnce: true, Count: 1}, {Age: 500 * time.Microsecond}, {Age: -time.Second, Count: -1}}
)

// genSpec fills every field of a Spec by its type from the values above,
// each left zero now and then unless nonzero. A field of a type it does
// not know fails the test: teach it, so that the field is encoded here.
func genSpec(t testing.TB, r *rand.Rand, nonzero bool) Spec {
	var sp Spec
	v := reflect.ValueOf(&sp).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		for {
			switch f.Interface().(type) {
			case string, BackoffType, DepPolicy:
				f.SetString(genStrings[r.IntN(len(genStrings))])
			case json.RawMessage:
				f.SetBytes([]byte(genData[r.IntN(len(genData))]))
			case time.Duration:
				f.SetInt(int64(genDurations[r.IntN(len(genDurations))]))
			case Priority, int, int64:
				f.SetInt(genInts[r.IntN(len(genInts))])
			case bool:
				f.SetBool(r.IntN(2) == 0)
			case *Backoff:
				f.Set(reflect.ValueOf(&Backoff{Type: BackoffType(genStrings[r.IntN(len(genStrings))]), Delay: genDurations[r.IntN(len(genDurations))]}))
			case Retention:
				f.Set(reflect.ValueOf(genRetentions[r.IntN(len(genRetentions))]))
			case *int:
				f.Set(reflect.ValueOf(new(int(genInts[r.IntN(len(genInts))]))))
			case []int64:
				ids := make([]int64, r.IntN(4))
				for j := range ids {
					ids[j] = genInts[r.IntN(len(genInts))]
				}
				f.Set(reflect.ValueOf(ids))
			case []int:
				f.Set(reflect.ValueOf([]int{r.IntN(3)}))
			default:
				t.Fatalf("genSpec: Spec.%s is a %s: give it values", v.Type().Field(i).Name, f.Type())
			}
			if !nonzero || !f.IsZero() {
				break
			}
		}
		if !nonzero && r.IntN(4) == 0 {
			f.SetZero()
		}
	}
	return sp
}

// plainSpec is a spec with every field set to a value that appendJSON
// writes itself and DecodeFast reads itself: nothing to escape, compact
// data, durations in whole ms.
func plainSpec() Spec {
	return Spec{Type: "t", Data: json.RawMessage(`{"a":[1,-2.5e3,"x\n",true,null]}`), Priority: PriorityHigh,
		Delay: time.Second, MaxAttempts: 3, Backoff: &Backoff{Type: BackoffFixed, Delay: time.Minute}, TTL: time.Hour,
		RemoveOnComplete: RemoveAtOnce, UniqueKey: "u", StallLimit: new(2), RemoveOnFail: Retention{Age: 5 * time.Millisecond, Count: 2},
		Trace: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", Broadcast: true, Group: "g",
		DependsOn: []int64{7, -8}, OnDependencyFailure: DepIgnore}
}

// TestSpecAppendJSON: a spec and a bulk are written by appendJSON as
// bus.Encode writes their twins, byte for byte, and refused where it
// refuses them, for many generated specs; what DecodeFast reads back is
// what encoding/json reads; and a spec with every field set is written
// and read back by the code of its own, so a field added to specJSON and
// forgotten in wirefast.go fails here.
func TestSpecAppendJSON(t *testing.T) {
	sp := plainSpec()
	rv := reflect.ValueOf(sp)
	for i := range rv.NumField() {
		if rv.Type().Field(i).Tag.Get("json") != "-" {
			require.False(t, rv.Field(i).IsZero(), "plainSpec: set Spec.%s", rv.Type().Field(i).Name)
		}
	}
	checkSpecJSON(t, sp, true)

	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		checkSpecJSON(t, genSpec(t, r, r.IntN(4) == 0), false)
	}
	for range 2000 {
		req := BulkRequest{IDsOnly: r.IntN(2) == 0}
		if n := r.IntN(4); n > 0 || r.IntN(2) == 0 {
			req.Jobs = make([]Spec, n)
		}
		for i := range req.Jobs {
			req.Jobs[i] = genSpec(t, r, false)
		}
		want, wantErr := bus.Encode(req.wire())
		got, err := req.appendJSON(nil)
		if wantErr != nil {
			require.Error(t, err, "%+v: bus.Encode refuses it: %v", req, wantErr)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
		var fast, strict BulkRequest
		if fast.DecodeFast(got) {
			require.NoError(t, bus.DecodeStrict(got, &strict), "%s", got)
			require.Equal(t, strict, fast, "%s", got)
		}
	}
}

// checkSpecJSON checks one spec's encoding and its reading back; plain:
// DecodeFast must read it.
func checkSpecJSON(t *testing.T, sp Spec, plain bool) {
	t.Helper()
	want, wantErr := bus.Encode(sp.wire())
	got, err := sp.appendJSON(nil)
	if wantErr != nil {
		require.Error(t, err, "%+v: bus.Encode refuses it: %v", sp, wantErr)
		return
	}
	require.NoError(t, err, "%+v", sp)
	require.Equal(t, string(want), string(got))
	viaMethod, err := json.Marshal(sp)
	require.NoError(t, err)
	require.Equal(t, string(want), string(viaMethod), "Spec.MarshalJSON")

	var fast, strict Spec
	if !fast.DecodeFast(got) {
		require.False(t, plain, "DecodeFast gave up on %s: read every field of specJSON in fastDecoder.spec", got)
		return
	}
	require.NoError(t, bus.DecodeStrict(got, &strict), "%s", got)
	require.Equal(t, strict, fast, "%s", got)
	bulk := []byte(`{"jobs":[` + string(got) + `,` + string(got) + `]}`)
	var fastBulk, strictBulk BulkRequest
	require.True(t, fastBulk.DecodeFast(bulk), "%s", bulk)
	require.NoError(t, bus.DecodeStrict(bulk, &strictBulk))
	require.Equal(t, strictBulk, fastBulk)
}

// TestDecodeFastGivesUp: DecodeFast leaves every body that is not in the
// usual form to bus.Decode's usual way (which refuses it, or reads it as
// encoding/json does), the value untouched.
func TestDecodeFastGivesUp(t *testing.T) {
	for _, body := range []string{
		``, `null`, `[]`, `{"type":"a"} x`, `{"type":"a"}{}`, `{"TYPE":"a"}`, `{"Type":"a"}`, `{"type":"a","type":"b"}`,
		`{"type":null}`, `{"type":"a\u0062"}`, `{"type":"a\tb"}`, `{"typ\u0065":"a"}`, `{"unknown":1}`, `{"type":"a",}`,
		`{"delay":1.0}`, `{"delay":1e3}`, `{"delay":"1"}`, `{"delay":01}`, `{"delay":-}`, `{"delay":9223372036854775807}`,
		`{"delay":9223372036855}`, `{"priority":"nope"}`, `{"priority":1.5}`, `{"data":null}`, `{"data":{"a":}}`,
		`{"backoff":{"type":"fixed","delay":1,"x":1}}`, `{"backoff":null}`, `{"remove_on_complete":{"age":0}}`,
		`{"remove_on_fail":null}`, `{"stall_limit":null}`, `{"broadcast":1}`, `{"broadcast":tru}`, `{"depends_on":[1,"2"]}`,
		`{"depends_on":null}`, `{"depends_on":[1,]}`, `{"on_dependency_failure":7}`, `{"data":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`,
	} {
		sp := Spec{Type: "untouched"}
		require.False(t, sp.DecodeFast([]byte(body)), "%s", body)
		require.Equal(t, Spec{Type: "untouched"}, sp, "%s", body)
		bulk := `{"jobs":[{"type":"a"},` + body + `]}`
		req := BulkRequest{IDsOnly: true}
		require.False(t, req.DecodeFast([]byte(bulk)), "%s", bulk)
		require.Equal(t, BulkRequest{IDsOnly: true}, req)
		for _, v := range []func() any{func() any { return new(Spec) }, func() any { return new(BulkRequest) }} {
			for _, data := range []string{body, bulk} {
				got, want := v(), v()
				errGot, errWant := bus.Decode([]byte(data), got), bus.DecodeStrict([]byte(data), want)
				if errWant != nil {
					require.EqualError(t, errGot, errWant.Error(), "%s", data)
					continue
				}
				require.NoError(t, errGot, "%s", data)
				require.Equal(t, want, got, "%s", data)
			}
		}
	}
	for _, bulk := range []string{`{"jobs":null}`, `{"jobs":[],"jobs":[]}`, `{"jobs":[{"type":"a"}],"ids_only":null}`, `{"jobs":{}}`,
		`{"jobs":[{"type":"a"}] ,"ids_only":true,"x":1}`, `{"Jobs":[]}`} {
		req := BulkRequest{IDsOnly: true}
		require.False(t, req.DecodeFast([]byte(bulk)), "%s", bulk)
	}
}

// TestDecodeFastReads: the usual bodies, whitespace included, are read by
// DecodeFast as encoding/json reads them, and a job's data is its own
// copy, not the caller's body.
func TestDecodeFastReads(t *testing.T) {
	for _, body := range []string{
		`{}`, `{"jobs":[]}`, ` { "jobs" : [ { "type" : "a" , "data" : { "x" : [ 1 , 2 ] } } ] , "ids_only" : false } `,
		`{"ids_only":true,"jobs":[{"type":"a","priority":"critical","depends_on":[]},{"type":"a","priority":-10,"stall_limit":0}]}`,
		"{\"jobs\":[{\"type\":\"é\",\"data\":\"\\u2028\\ud800\",\"remove_on_complete\":{\"count\":1,\"age\":2},\"remove_on_fail\":false}]}",
		`{"jobs":[{"type":"a","delay":-0,"ttl":-5,"max_attempts":-1,"backoff":{"delay":3,"type":"x"}}]}`,
	} {
		var fast, strict BulkRequest
		require.True(t, fast.DecodeFast([]byte(body)), "%s", body)
		require.NoError(t, bus.DecodeStrict([]byte(body), &strict))
		require.Equal(t, strict, fast, "%s", body)
	}
	body := []byte(`{"jobs":[{"type":"a","data":[1]},{"type":"a","data":[2]}]}`)
	var req BulkRequest
	require.True(t, req.DecodeFast(body))
	clear(body)
	require.Equal(t, "[1]", string(req.Jobs[0].Data))
	req.Jobs[0].Data = append(req.Jobs[0].Data, '!')
	require.Equal(t, "[2]", string(req.Jobs[1].Data), "a data's capacity ends with it")
}

// The references the encoders of wirefast.go are held to: a spec and a
// bulk as their twins, which bus.Encode writes reflectively.

// wire is the spec as its twin, the reference of its encoding
// (TestSpecAppendJSON).
func (s *Spec) wire() specJSON {
	return specJSON{
		Type: s.Type, Data: s.Data, Priority: s.Priority, Delay: s.Delay.Milliseconds(),
		MaxAttempts: s.MaxAttempts, Backoff: s.Backoff, TTL: s.TTL.Milliseconds(),
		RemoveOnComplete: s.RemoveOnComplete, UniqueKey: s.UniqueKey, StallLimit: s.StallLimit,
		RemoveOnFail: s.RemoveOnFail, Trace: s.Trace, Broadcast: s.Broadcast, Group: s.Group,
		DependsOn: s.DependsOn, OnDependencyFailure: s.OnDependencyFailure,
	}
}

// bulkRequestJSON is BulkRequest on the wire, its specs as their twins:
// the reference of the JSON that BulkRequest.appendJSON writes by code of
// its own (wirefast.go), which the client sends (sendNow) and core reads
// (BulkRequest.DecodeFast); TestSpecAppendJSON holds the two alike.
type bulkRequestJSON struct {
	Jobs    []specJSON `json:"jobs"`
	IDsOnly bool       `json:"ids_only,omitempty"`
}

// wire is the request as its twin (TestWireTwins keeps the two alike).
func (r *BulkRequest) wire() bulkRequestJSON {
	w := bulkRequestJSON{Jobs: make([]specJSON, len(r.Jobs)), IDsOnly: r.IDsOnly}
	for i := range r.Jobs {
		w.Jobs[i] = r.Jobs[i].wire()
	}
	return w
}
