package service

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// Fuzz tests of every method's request: decoding (bus.Decode, as the RPC
// server does) and the checks that run before the store is touched. Their
// seeds run with every `go test`; `go test -fuzz FuzzCreate ./core/` digs
// further. The property: nothing panics, every refusal is invalid and names
// a field, and whatever is accepted keeps the invariants the store and the
// readers rely on.

// fuzzChecks is the Service the checks run on: defaults only, no store.
func fuzzChecks() *Service { return &Service{cfg: Config{}.withDefaults()} }

// fuzzRequest registers seeds and runs decode + check on every input; holds
// asserts the invariants of an accepted request.
func fuzzRequest[Req any](f *testing.F, seeds []string, check func(*Req) error, holds func(*testing.T, *Req)) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req Req
		if err := bus.Decode(body, &req); err != nil {
			mustBeInvalid(t, err)
			return
		}
		if err := check(&req); err != nil {
			mustBeInvalid(t, err)
			return
		}
		holds(t, &req)
	})
}

func mustBeInvalid(t *testing.T, err error) {
	t.Helper()
	if code := bus.CodeOf(err); code != bus.CodeInvalid {
		t.Fatalf("a refusal must be invalid, got %s: %v", code, err)
	}
	if msg := bus.MessageOf(err); !strings.Contains(msg, ": ") {
		t.Fatalf("a refusal must name its field: %q", msg)
	}
}

func require(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}

// Seeds shared by several targets: the numbers at the edges of int64 and
// float64, broken text, broken JSON.
var edgeSeeds = []string{
	``, `{}`, `null`, `[]`, `{"id":`, `{"id":1} {}`, "\xff", `{"id":"1"}`,
	`{"id":9223372036854775807}`, `{"id":-9223372036854775808}`, `{"id":9223372036854775808}`,
	`{"id":1e999999}`, `{"id":1.5}`, `{"id":0}`, `{"unknown":1}`,
}

func specSeeds(wrap func(string) string) []string {
	specs := []string{
		`{"type":"email"}`,
		`{"type":"email","data":{"to":"a@example.com"},"priority":"high","delay":1000,"max_attempts":3,"backoff":{"type":"exponential","delay":100},"ttl":5000,"unique_key":"k"}`,
		`{"type":"e","data":1e999999}`, `{"type":"e","data":-1e309}`, `{"type":"e","data":1e308}`,
		`{"type":"e","data":"\ud800"}`, `{"type":"e","data":"\udc00"}`, `{"type":"e","data":"\ud83d\ude00"}`,
		"{\"type\":\"e\",\"data\":\"\xff\"}", `{"type":"e","data":"\ud800\u0041"}`,
		`{"type":"e","delay":9223372036854775807}`, `{"type":"e","delay":-1}`, `{"type":"e","delay":315360000001}`,
		`{"type":"e","ttl":9223372036854775807}`, `{"type":"e","max_attempts":2147483648}`,
		`{"type":"e","priority":9007199254740992}`, `{"type":"e","priority":-9007199254740991}`, `{"type":"e","priority":"9223372036854775807"}`,
		`{"type":"e","priority":1e999999}`, `{"type":"e","priority":1.5}`,
		`{"type":"e","backoff":{"type":"exponential","delay":0},"max_attempts":1000000}`,
		`{"type":"e","backoff":{"type":"exponential","delay":315360000000},"max_attempts":1000000}`,
		`{"type":"e","backoff":{"type":"fixed","delay":-1}}`, `{"type":"a.b"}`, `{"type":"a*"}`, `{"type":""}`,
		`{"type":"` + strings.Repeat("t", 129) + `"}`, `{"type":"e","unique_key":"` + strings.Repeat("k", 513) + `"}`,
		`{"type":"e","remove_on_complete":true,"remove_on_fail":{"age":1,"count":9223372036854775807}}`,
		`{"type":"e","remove_on_complete":{"age":-1}}`, `{"type":"e","remove_on_fail":{}}`, `{"type":"e","remove_on_fail":{"count":1e3}}`,
		`{"type":"e","remove_on_complete":{"age":1,"age":-1}}`, `{"type":"e","remove_on_complete":[]}`, `{"type":"e","remove_on_fail":null}`,
	}
	out := append([]string{}, edgeSeeds...)
	for _, s := range specs {
		out = append(out, wrap(s))
	}
	return out
}

// specHolds is what an accepted spec promises the store.
func specHolds(t *testing.T, sp *core.Spec, maxData int) {
	t.Helper()
	require(t, bus.ValidToken(sp.Type) == nil, "type %q", sp.Type)
	require(t, len(sp.Data) <= maxData, "data of %d bytes", len(sp.Data))
	if len(sp.Data) > 0 {
		require(t, utf8.Valid(sp.Data) && json.Valid(sp.Data), "data %q is not valid UTF-8 JSON", sp.Data)
		var v any
		require(t, json.Unmarshal(sp.Data, &v) == nil, "data %q does not decode", sp.Data)
		require(t, !replacedOnDecode(sp.Data, v), "data %q holds a lone surrogate", sp.Data)
	}
	require(t, sp.Delay >= 0 && sp.Delay <= core.MaxDelay*time.Millisecond && sp.Delay%time.Millisecond == 0, "delay %s", sp.Delay)
	require(t, sp.MaxAttempts >= 1 && sp.MaxAttempts <= core.MaxAttempts, "max_attempts %d", sp.MaxAttempts)
	require(t, sp.TTL >= time.Millisecond && sp.TTL <= core.MaxDelay*time.Millisecond && sp.TTL%time.Millisecond == 0, "ttl %s", sp.TTL)
	require(t, sp.Priority >= -core.MaxPriority && sp.Priority <= core.MaxPriority, "priority %d", sp.Priority)
	require(t, len(sp.UniqueKey) <= core.MaxUniqueKeyLen, "unique_key of %d bytes", len(sp.UniqueKey))
	if sp.Backoff != nil {
		// The wait itself is capped by the store (redisstore's fail tests).
		b := sp.Backoff
		require(t, (b.Type == core.BackoffFixed || b.Type == core.BackoffExponential) && b.Delay >= 0 && b.Delay <= core.MaxDelay*time.Millisecond,
			"backoff %+v", *b)
	}
	for _, r := range []core.Retention{sp.RemoveOnComplete, sp.RemoveOnFail} {
		require(t, r.Age >= 0 && r.Count >= 0 && (!r.AtOnce || r == core.RemoveAtOnce), "retention %+v", r)
	}
	now := time.Now().UnixMilli()
	require(t, now+sp.Delay.Milliseconds() >= now && now+sp.TTL.Milliseconds() > now, "now + delay/ttl overflows")
}

// replacedOnDecode reports whether decoding raw into v made up a U+FFFD
// that raw does not spell out: the mark of a lone surrogate, which
// encoding/json replaces without an error.
func replacedOnDecode(raw []byte, v any) bool {
	if strings.Contains(strings.ToLower(string(raw)), `\ufffd`) || strings.ContainsRune(string(raw), utf8.RuneError) {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			return strings.ContainsRune(v, utf8.RuneError)
		case []any:
			return slices.ContainsFunc(v, walk)
		case map[string]any:
			for k, e := range v {
				if walk(k) || walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

func FuzzCreate(f *testing.F) {
	s := fuzzChecks()
	fuzzRequest(f, specSeeds(func(sp string) string { return sp }),
		func(sp *core.Spec) error { return sp.Normalize(s.cfg.MaxDataBytes) },
		func(t *testing.T, sp *core.Spec) { specHolds(t, sp, s.cfg.MaxDataBytes) })
}

func FuzzCreateBulk(f *testing.F) {
	s := fuzzChecks()
	seeds := specSeeds(func(sp string) string { return `{"jobs":[{"type":"ok"},` + sp + `]}` })
	seeds = append(seeds, `{"jobs":[]}`, `{"jobs":null}`, `{"jobs":[{}]}`)
	fuzzRequest(f, seeds, s.checkBulk, func(t *testing.T, req *core.BulkRequest) {
		require(t, len(req.Jobs) >= 1 && len(req.Jobs) <= s.cfg.MaxBulk, "%d jobs", len(req.Jobs))
		for i := range req.Jobs {
			specHolds(t, &req.Jobs[i], s.cfg.MaxDataBytes)
		}
	})
}

// FuzzIDRequest covers get, exists, remove and log.
func FuzzIDRequest(f *testing.F) {
	fuzzRequest(f, edgeSeeds, func(req *core.IDRequest) error { return checkID(req.ID) },
		func(t *testing.T, req *core.IDRequest) { require(t, req.ID > 0, "id %d", req.ID) })
}

func FuzzAddLog(f *testing.F) {
	s := fuzzChecks()
	seeds := append([]string{`{"id":1,"line":"hello"}`, "{\"id\":1,\"line\":\"a\xffb\"}", `{"id":1,"line":"\ud800"}`,
		`{"id":1,"line":"` + strings.Repeat("y", 70000) + `"}`, `{"id":1,"line":7}`}, edgeSeeds...)
	fuzzRequest(f, seeds, s.checkAddLog, func(t *testing.T, req *core.AddLogRequest) {
		require(t, req.ID > 0, "id %d", req.ID)
		require(t, len(req.Line) <= s.cfg.MaxLogLineBytes, "line of %d bytes", len(req.Line))
		require(t, utf8.ValidString(req.Line), "line %q is not valid UTF-8", req.Line)
	})
}

func FuzzRange(f *testing.F) {
	seeds := append([]string{
		`{"from":0,"to":9223372036854775807}`, `{"from":9223372036854775807,"to":9223372036854775807}`,
		`{"from":9223372036854775000,"to":9223372036854775807,"state":"inactive"}`,
		`{"from":-9223372036854775808,"to":9223372036854775807}`, `{"from":0,"to":999}`, `{"from":0,"to":1000}`,
		`{"from":5,"to":1}`, `{"to":1,"order":"up"}`, `{"to":1,"order":"desc","type":"a","state":"failed"}`,
		`{"to":1,"type":"a>b"}`, `{"to":1,"state":"done"}`, `{"from":1000000,"to":1000019}`,
		`{"type":"a","from":1000000,"to":1000019}`, `{"limit":20}`, `{"limit":1001}`, `{"limit":-1}`,
		`{"cursor":"all_1_1"}`, `{"cursor":"inactive_-10_0000000000000012:42","state":"inactive","limit":5}`,
		`{"cursor":"all_1e400_1"}`, `{"cursor":"all_1_1","to":3}`, `{"cursor":"failed_1_1"}`, `{"cursor":"all__"}`,
	}, edgeSeeds...)
	fuzzRequest(f, seeds, checkRange, func(t *testing.T, req *core.RangeRequest) {
		require(t, req.From >= 0 && req.From <= req.To, "from %d to %d", req.From, req.To)
		require(t, req.To-req.From < core.MaxRangeSize, "%d..%d is over %d jobs", req.From, req.To, core.MaxRangeSize)
		require(t, req.Order == "" || req.Order == core.OrderAsc || req.Order == core.OrderDesc, "order %q", req.Order)
		require(t, req.Type != "" || req.To < core.MaxUntypedPosition, "every type read to %d", req.To)
		require(t, req.Limit >= 0 && req.Limit <= core.MaxRangeSize, "limit %d", req.Limit)
		if req.ByCursor() {
			require(t, req.From == 0 && req.To == 0, "a cursor page with %d..%d", req.From, req.To)
			p := rangeParams(req)
			require(t, p.Limit >= 1 && p.Limit <= core.MaxRangeSize, "store limit %d", p.Limit)
			require(t, (p.After != nil) == (req.Cursor != ""), "cursor %q read as %v", req.Cursor, p.After)
		}
	})
}

func FuzzCount(f *testing.F) {
	seeds := append([]string{`{"state":"inactive","type":"a"}`, `{"state":"x"}`, `{"type":"a b"}`}, edgeSeeds...)
	fuzzRequest(f, seeds, checkCount, func(t *testing.T, req *core.CountRequest) {
		require(t, checkState(req.State, true) == nil && checkType(req.Type) == nil, "%+v", *req)
	})
}

func FuzzIDs(f *testing.F) {
	seeds := append([]string{
		`{"state":"inactive"}`, `{"state":"inactive","limit":10000}`, `{"state":"inactive","limit":10001}`,
		`{"state":"inactive","limit":-1}`, `{"state":"inactive","cursor":"a:5"}`, `{"state":"inactive","cursor":"a:-1"}`,
		`{"state":"inactive","cursor":"a:9223372036854775807"}`, `{"state":"inactive","cursor":"a:9223372036854775808"}`,
		`{"state":"inactive","cursor":"a.b:1"}`, `{"state":"inactive","cursor":":1"}`, `{"state":"inactive","cursor":"a:"}`,
		`{"state":"inactive","cursor":"a:1:2"}`, `{"state":"inactive","cursor":"a:+1"}`,
	}, edgeSeeds...)
	fuzzRequest(f, seeds, func(req *core.IDsRequest) error { _, _, err := checkIDs(req); return err },
		func(t *testing.T, req *core.IDsRequest) {
			from, limit, _ := checkIDs(req)
			require(t, limit >= 1 && limit <= core.MaxIDsLimit, "limit %d", limit)
			require(t, from.Position >= 0, "position %d", from.Position)
			again, err := core.ParseIDsCursor(from.String())
			require(t, err == nil && again == from, "cursor %q does not round-trip: %+v, %v", req.Cursor, again, err)
		})
}

func FuzzSetState(f *testing.F) {
	seeds := append([]string{`{"id":1,"state":"failed"}`, `{"id":1,"state":"done"}`, `{"id":1}`}, edgeSeeds...)
	fuzzRequest(f, seeds, checkSetState, func(t *testing.T, req *core.SetStateRequest) {
		_, err := core.ParseState(string(req.State))
		require(t, req.ID > 0 && err == nil, "%+v", *req)
	})
}

func FuzzSetPriority(f *testing.F) {
	seeds := append([]string{`{"id":1,"priority":"critical"}`, `{"id":1,"priority":9007199254740991}`,
		`{"id":1,"priority":9007199254740992}`, `{"id":1,"priority":-1e999999}`, `{"id":1,"priority":"-9223372036854775808"}`,
		`{"id":1,"priority":null}`, `{"id":1}`}, edgeSeeds...)
	fuzzRequest(f, seeds, checkSetPriority, func(t *testing.T, req *core.SetPriorityRequest) {
		require(t, req.ID > 0 && req.Priority != nil, "%+v", *req)
		require(t, *req.Priority >= -core.MaxPriority && *req.Priority <= core.MaxPriority, "priority %d", *req.Priority)
	})
}

func FuzzPromote(f *testing.F) {
	seeds := append([]string{`{"limit":0}`, `{"limit":100000}`, `{"limit":100001}`, `{"limit":-1}`,
		`{"limit":9223372036854775807}`}, edgeSeeds...)
	fuzzRequest(f, seeds, func(req *core.LimitRequest) error { _, err := checkLimit(req.Limit); return err },
		func(t *testing.T, req *core.LimitRequest) {
			limit, _ := checkLimit(req.Limit)
			require(t, limit >= 1 && limit <= core.MaxMoveLimit, "limit %d", limit)
		})
}

func FuzzRescue(f *testing.F) {
	seeds := append([]string{`{"limit":10,"stall_limit":2}`, `{"stall_limit":-1}`, `{"stall_limit":9223372036854775807}`,
		`{"limit":100001}`}, edgeSeeds...)
	fuzzRequest(f, seeds, func(req *core.RescueRequest) error { _, err := checkRescue(req); return err },
		func(t *testing.T, req *core.RescueRequest) {
			limit, _ := checkRescue(req)
			require(t, limit >= 1 && limit <= core.MaxMoveLimit && req.StallLimit >= 0 && req.StallLimit <= core.MaxStallLimit, "%+v", *req)
		})
}

func FuzzLease(f *testing.F) {
	s := fuzzChecks()
	seeds := append([]string{
		`{"types":["a"],"max":10,"wait":5000,"worker":"w"}`, `{"types":[]}`, `{"types":["a.b"]}`,
		`{"types":["a"],"wait":300000}`, `{"types":["a"],"wait":300001}`, `{"types":["a"],"wait":9223372036854775807}`,
		`{"types":["a"],"wait":-1}`, `{"types":["a"],"max":1001}`, `{"types":["a"],"ttl":9223372036854775807}`,
		`{"types":["a"],"worker":"` + strings.Repeat("w", 257) + `"}`, `{"types":["` + strings.Repeat("a\",\"", 70) + `a"]}`,
	}, edgeSeeds...)
	fuzzRequest(f, seeds, s.checkLease, func(t *testing.T, req *core.LeaseRequest) {
		require(t, len(req.Types) >= 1 && len(req.Types) <= core.MaxLeaseTypes, "%d types", len(req.Types))
		for _, typ := range req.Types {
			require(t, bus.ValidToken(typ) == nil, "type %q", typ)
		}
		require(t, req.Max >= 0 && req.Max <= core.MaxLeaseBatch, "max %d", req.Max)
		require(t, req.Wait >= 0 && req.Wait <= core.MaxLeaseWait, "wait %d", req.Wait)
		require(t, time.Duration(req.Wait)*time.Millisecond >= 0, "wait %d overflows a Duration", req.Wait)
		require(t, req.TTL >= 0 && req.TTL <= core.MaxDelay, "ttl %d", req.TTL)
		require(t, len(req.Worker) <= core.MaxWorkerLen, "worker of %d bytes", len(req.Worker))
	})
}

var leaseOpSeeds = []string{
	`{"id":1,"lease":"t"}`, `{"id":1,"lease":""}`, `{"id":1,"lease":"t","type":"a.b"}`,
	`{"id":1,"lease":"t","result":{"ok":true}}`, `{"id":1,"lease":"t","result":1e999999}`, `{"id":1,"lease":"t","result":"\udead"}`,
	`{"id":1,"lease":"t","error":"boom","final":true}`, "{\"id\":1,\"lease\":\"t\",\"error\":\"\xff\"}",
	`{"id":1,"lease":"t","delay":315360000000}`, `{"id":1,"lease":"t","delay":9223372036854775807}`, `{"id":1,"lease":"t","delay":-1}`, `{"id":1,"lease":"t","delay":0}`, `{"id":1,"lease":"t","delay":1.5}`,
	`{"id":1,"lease":"t","complete":93000000000000000,"total":100000000000000000}`,
	`{"id":1,"lease":"t","complete":9223372036854775807,"total":1}`, `{"id":1,"lease":"t","complete":-1,"total":5}`,
	`{"id":1,"lease":"t","complete":1,"total":0}`, `{"id":1,"lease":"t","complete":1}`,
	`{"op":"progress","id":1,"lease":"t","complete":3,"total":8}`, `{"op":"explode","id":1,"lease":"t"}`,
}

// leaseOpHolds is what an accepted operation of a lease holder promises.
func leaseOpHolds(t *testing.T, s *Service, op core.Op, o *core.LeaseOp) {
	t.Helper()
	require(t, o.ID > 0 && o.Lease != "", "%+v", *o)
	switch op {
	case core.OpComplete:
		require(t, len(o.Result) <= s.cfg.MaxDataBytes, "result of %d bytes", len(o.Result))
		if len(o.Result) > 0 {
			var v any
			require(t, utf8.Valid(o.Result) && json.Unmarshal(o.Result, &v) == nil, "result %q", o.Result)
		}
	case core.OpFail:
		require(t, len(o.Error) <= s.cfg.MaxLogLineBytes && utf8.ValidString(o.Error), "error %q", o.Error)
	}
	switch op {
	case core.OpFail, core.OpRejoin:
		require(t, o.Delay == nil || (*o.Delay >= 0 && *o.Delay <= core.MaxDelay), "delay %v", o.Delay)
	default:
		require(t, o.Delay == nil, "delay %v given to %s", o.Delay, op)
	}
	switch op {
	case core.OpProgress:
		p := percent(*o.Complete, *o.Total)
		require(t, p >= 0 && p <= 100, "%d of %d is %d%%", *o.Complete, *o.Total, p)
	}
}

// FuzzLeaseOp covers complete, fail, touch, release, rejoin and progress,
// each as its own method does it.
func FuzzLeaseOp(f *testing.F) {
	s := fuzzChecks()
	ops := []core.Op{core.OpComplete, core.OpFail, core.OpTouch, core.OpRelease, core.OpRejoin, core.OpProgress}
	for _, seed := range append(leaseOpSeeds, edgeSeeds...) {
		for i := range ops {
			f.Add([]byte(seed), uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		op := ops[int(which)%len(ops)]
		var o core.LeaseOp
		if err := bus.Decode(body, &o); err != nil {
			mustBeInvalid(t, err)
			return
		}
		if o.Op != "" && o.Op != op {
			return // single refuses it before any check
		}
		if err := s.checkOp(op, &o); err != nil {
			mustBeInvalid(t, err)
			return
		}
		leaseOpHolds(t, s, op, &o)
	})
}

func FuzzBatch(f *testing.F) {
	s := fuzzChecks()
	seeds := []string{`{"ops":[]}`, `{"ops":null}`, `{"ops":[{"op":"touch","id":1,"lease":"x"}],"lease":{"types":["a"],"max":2,"worker":"w"}}`, `{"ops":[{"op":"touch","id":1,"lease":"x"}],"lease":{"types":[],"max":-1}}`}
	for _, o := range leaseOpSeeds {
		seeds = append(seeds, `{"ops":[`+strings.Replace(o, `{`, `{"op":"progress",`, 1)+`]}`,
			`{"ops":[`+strings.Replace(o, `{`, `{"op":"complete",`, 1)+`]}`)
	}
	fuzzRequest(f, append(seeds, edgeSeeds...), s.checkBatch, func(t *testing.T, req *core.BatchRequest) {
		require(t, len(req.Ops) >= 1 && len(req.Ops) <= core.MaxBatch, "%d ops", len(req.Ops))
		if l := req.Lease; l != nil {
			require(t, s.checkLease(&core.LeaseRequest{Types: l.Types, Max: l.Max, Worker: l.Worker}) == nil, "lease part %+v", *l)
		}
		for i := range req.Ops {
			o := &req.Ops[i]
			if err := s.checkOp(o.Op, o); err != nil {
				mustBeInvalid(t, err)
				continue
			}
			leaseOpHolds(t, s, o.Op, o)
		}
	})
}

// FuzzPercent: every pair of int64s gives 0..100.
func FuzzPercent(f *testing.F) {
	for _, p := range [][2]int64{{93_000_000_000_000_000, 100_000_000_000_000_000}, {math.MaxInt64, math.MaxInt64},
		{math.MaxInt64 - 1, math.MaxInt64}, {math.MinInt64, 1}, {1, math.MinInt64}, {3, 8}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, complete, total int64) {
		p := percent(complete, total)
		require(t, p >= 0 && p <= 100, "%d of %d is %d", complete, total, p)
		if complete > 0 && total > 0 && complete < total && complete <= math.MaxInt64/100 {
			require(t, p == complete*100/total, "%d of %d is %d, not %d", complete, total, p, complete*100/total)
		}
	})
}

// FuzzEmpty covers the methods that take no fields: types and stats.
func FuzzEmpty(f *testing.F) {
	fuzzRequest(f, edgeSeeds, func(*core.Empty) error { return nil }, func(*testing.T, *core.Empty) {})
}
