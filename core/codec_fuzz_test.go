package core_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// requestTypes are the bodies core decodes, one maker each.
var requestTypes = []func() any{
	func() any { return new(core.Spec) },
	func() any { return new(core.BulkRequest) },
	func() any { return new(core.LeaseRequest) },
	func() any { return new(core.BatchRequest) },
	func() any { return new(core.LeaseOp) },
	func() any { return new(core.IDRequest) },
	func() any { return new(core.GetRequest) },
	func() any { return new(core.LimitRequest) },
	func() any { return new(core.SearchRequest) },
	func() any { return new(core.ScheduleSetRequest) },
	func() any { return new(core.RescueRequest) },
	func() any { return new(core.PauseRequest) },
	func() any { return new(core.IDsRequest) },
	func() any { return new(core.BulkActionRequest) },
	func() any { return new(core.SetStateRequest) },
	func() any { return new(core.SetPriorityRequest) },
	func() any { return new(core.RangeRequest) },
	func() any { return new(core.CountRequest) },
	func() any { return new(core.CancelRequest) },
	func() any { return new(core.AddLogRequest) },
	func() any { return new(core.HistoryRequest) },
	func() any { return new(core.StatsRequest) },
	func() any { return new(core.NameRequest) },
}

// FuzzDecodeAgreesWithEncodingJSON: bus.Decode takes a request through
// goccy first (bus/codec.go); whatever it takes, encoding/json alone
// (bus.DecodeStrict) takes too, into the same value, and what it refuses
// is refused in encoding/json's words. Every request type, seeded with
// valid bodies and the edges where decoders differ.
func FuzzDecodeAgreesWithEncodingJSON(f *testing.F) {
	for _, seed := range []string{
		`{}`, ``, ` `, `null`, `[]`, `{"ops":[]}`, `{} x`, `{}{}`, `{"id":1} `,
		`{"type":"email","data":{"to":"a"},"priority":"high","delay":5,"max_attempts":3,"backoff":{"type":"exponential","delay":100}}`,
		`{"type":"email","remove_on_complete":true,"remove_on_fail":{"age":"1h","count":5},"unique_key":"k","stall_limit":2}`,
		`{"jobs":[{"type":"a"},{"type":"b","data":[1,2,{"x":null}]}]}`,
		`{"types":["a","b"],"max":5,"worker":"w","wait":1000,"ttl":200}`,
		`{"ops":[{"op":"complete","id":1,"lease":"L","type":"t","result":{"ok":true}},{"op":"fail","id":2,"lease":"M","error":"boom","final":true,"delay":0,"stack":"at x"}],"lease":{"types":["t"],"max":2,"worker":"w"}}`,
		`{"id":1,"lease":"L","complete":3,"total":4}`,
		`{"ID":1}`, `{"Id":1,"id":2}`, `{"id":1,"id":2}`, `{"id":1.0}`, `{"id":1e3}`, `{"id":"1"}`, `{"id":-0}`,
		`{"id":9223372036854775808}`, `{"id":01}`, `{"id":1,}`, `{"unknown":1}`, `{"type":"a\u0000b"}`,
		"{\"type\":\"\xff\"}", `{"type":"\ud800"}`, `{"data":{"a":1,"a":2}}`, `{"data": {"a" : 1} }`,
		`{"priority":-10}`, `{"priority":"critical"}`, `{"priority":"nope"}`, `{"state":"failed","type":"t","limit":10,"cursor":"c"}`,
		`{"action":"retry","state":"failed","before":1}`, `{"name":"n","cron":"* * * * *","spec":{"type":"t"}}`,
		`{"from":0,"to":10,"order":"desc"}`, `{"query":"x","limit":3}`, `{"partial":true}`, `{"id":1,"reason":"r"}`,
		`{"jobs":[{"type":"bulk","data":{"i":1},"max_attempts":1},{"type":"bulk","priority":"high","delay":5,"ttl":9,"unique_key":"u","stall_limit":0,"trace":"t","broadcast":false,"group":"g","depends_on":[1,2],"on_dependency_failure":"ignore","remove_on_complete":{"age":1},"remove_on_fail":true,"backoff":{"type":"fixed","delay":1}}],"ids_only":true}`,
		`{"jobs":[{"type":"a","type":"b"}]}`, `{"jobs":[{"TYPE":"a"}]}`, `{"jobs":[{"type":"a\u0062","data":null}]}`, `{"jobs":[],"jobs":[]}`,
		` { "jobs" : [ { "type" : "a" , "data" : [ 1 , 2.5e-3 ] } ] } `, `{"jobs":[{"delay":9223372036855}]}`, `{"jobs":[{"depends_on":[]}]}`,
		`{"id":1,"line":"l"}`, `{"id":1,"state":"inactive"}`, `{"id":1,"priority":"low"}`, `{"stall_limit":2,"limit":100}`,
	} {
		for which := range requestTypes {
			f.Add(uint8(which), []byte(seed))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		make := requestTypes[int(which)%len(requestTypes)]
		fast, strict := make(), make()
		errFast := bus.Decode(data, fast)
		errStrict := bus.DecodeStrict(data, strict)
		if errStrict != nil {
			require.Error(t, errFast, "%T: goccy took %q, which encoding/json refuses: %v", strict, data, errStrict)
			require.Equal(t, errStrict.Error(), errFast.Error())
			return
		}
		require.NoError(t, errFast, "%T: %q", strict, data)
		require.Equal(t, strict, fast, "%T: %q decodes otherwise", strict, data)
	})
}
