package service

import (
	"slices"
	"strings"
	"testing"

	"github.com/kuebus/kuebus/core"
)

// Fuzz tests of cancel's and bulk's requests, as fuzz_test.go's: decoding
// and checks never panic, refusals are invalid and name a field, and an
// accepted request keeps what the store relies on.

func FuzzCancel(f *testing.F) {
	seeds := append([]string{`{"id":1}`, `{"id":1,"reason":"x"}`, `{"id":1,"reason":7}`, `{"id":-1,"reason":"x"}`,
		`{"id":1,"reason":"` + strings.Repeat("r", 70_000) + `"}`}, edgeSeeds...)
	s := fuzzChecks()
	fuzzRequest(f, seeds, s.checkCancel, func(t *testing.T, req *core.CancelRequest) {
		require(t, req.ID > 0 && len(req.Reason) <= s.cfg.MaxLogLineBytes, "%+v", *req)
	})
}

func FuzzBulk(f *testing.F) {
	seeds := append([]string{
		`{"action":"retry","state":"failed"}`, `{"action":"retry","state":"cancelled","type":"a","error":"x","before":1,"limit":10000}`,
		`{"action":"retry","state":"inactive"}`, `{"action":"promote","state":"delayed"}`, `{"action":"remove","state":"complete"}`,
		`{"action":"cancel","state":"active","cursor":"a:3"}`, `{"action":"cancel","state":"active","type":"a","cursor":"b:3"}`,
		`{"action":"x","state":"failed"}`, `{"action":"retry","state":"failed","limit":10001}`,
		`{"action":"retry","state":"failed","limit":-1}`, `{"action":"retry","state":"failed","before":-1}`,
		`{"action":"retry","state":"failed","before":9223372036854775807}`, `{"action":"retry","state":"failed","cursor":"a:-1"}`,
	}, edgeSeeds...)
	s := fuzzChecks()
	fuzzRequest(f, seeds, func(req *core.BulkActionRequest) error { _, err := s.checkBulkAction(req); return err },
		func(t *testing.T, req *core.BulkActionRequest) {
			q, _ := s.checkBulkAction(req)
			require(t, slices.Contains(core.BulkStates(q.Action), q.State), "%s from %s", q.Action, q.State)
			require(t, q.Limit >= 1 && q.Limit <= core.BulkLimitMax, "limit %d", q.Limit)
			require(t, q.Before >= 0 && q.From.Position >= 0, "%+v", *q)
			require(t, q.Type == "" || q.From.Type == "" || q.From.Type == q.Type, "%+v", *q)
		})
}
