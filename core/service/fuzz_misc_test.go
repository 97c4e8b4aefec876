package service

import (
	"strings"
	"testing"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// Fuzz tests of get (by id, or by type and unique key) and search, in the
// shape of fuzz_test.go.

func FuzzGet(f *testing.F) {
	seeds := append([]string{`{"id":1}`, `{"type":"t","unique_key":"k"}`, `{"id":1,"type":"t","unique_key":"k"}`,
		`{"unique_key":"k"}`, `{"type":"t"}`, `{"type":"a.b","unique_key":"k"}`,
		`{"type":"t","unique_key":"` + strings.Repeat("k", 600) + `"}`}, edgeSeeds...)
	fuzzRequest(f, seeds, checkGet, func(t *testing.T, req *core.GetRequest) {
		if req.ID != 0 {
			require(t, req.ID > 0 && req.Type == "" && req.UniqueKey == "", "%+v", *req)
			return
		}
		require(t, bus.ValidToken(req.Type) == nil, "type %q", req.Type)
		require(t, req.UniqueKey != "" && len(req.UniqueKey) <= core.MaxUniqueKeyLen, "unique_key of %d bytes", len(req.UniqueKey))
	})
}

func FuzzSearch(f *testing.F) {
	seeds := append([]string{`{"q":"acme"}`, `{"q":""}`, `{"q":"a","limit":-1}`, `{"q":"a","limit":1001}`,
		`{"q":"a","type":"t","state":"failed","limit":5,"cursor":"t:9"}`, `{"q":"a","type":"t","cursor":"u:9"}`,
		`{"q":"a","cursor":"t:-1"}`, `{"q":"a","cursor":"a.b:1"}`, `{"q":"a","state":"done"}`,
		`{"q":"` + strings.Repeat("q", 300) + `"}`}, edgeSeeds...)
	fuzzRequest(f, seeds, func(req *core.SearchRequest) error { _, _, err := checkSearch(req); return err },
		func(t *testing.T, req *core.SearchRequest) {
			from, limit, err := checkSearch(req)
			require(t, err == nil, "%v", err)
			require(t, req.Q != "" && len(req.Q) <= core.MaxSearchQuery, "q of %d bytes", len(req.Q))
			require(t, limit >= 1 && limit <= core.MaxSearchLimit, "limit %d", limit)
			require(t, from.Type == "" || (bus.ValidToken(from.Type) == nil && from.Member != ""), "cursor %+v", from)
			require(t, req.Type == "" || from.Type == "" || from.Type == req.Type, "cursor %q of type %q", req.Cursor, req.Type)
		})
}
