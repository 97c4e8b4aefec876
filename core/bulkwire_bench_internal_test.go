package core

import (
	"encoding/json"
	"testing"

	"github.com/kuebus/kuebus/bus"
)

// BenchmarkBulkRequestWire: a bulk of 1000 small specs encoded as the
// client does (appendJSON, wirefast.go) against as its twin by the
// reflective encoder (bulkRequestJSON, the client's way before) and
// through each spec's MarshalJSON; and decoded as core decodes it
// (bus.Decode: DecodeFast) against by the reflective decoder alone (core's
// way before).
func BenchmarkBulkRequestWire(b *testing.B) {
	specs := make([]Spec, 1000)
	for i := range specs {
		specs[i] = Spec{Type: "bulk", Data: json.RawMessage(`{"i":1}`), MaxAttempts: 1}
	}
	req := BulkRequest{Jobs: specs, IDsOnly: true}
	type specsOneByOne struct {
		Jobs    []Spec `json:"jobs"`
		IDsOnly bool   `json:"ids_only,omitempty"`
	}
	b.Run("encode/append", func(b *testing.B) {
		for b.Loop() {
			if _, err := encodeRequest(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode/twin", func(b *testing.B) {
		for b.Loop() {
			if _, err := bus.Encode(req.wire()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode/one-by-one", func(b *testing.B) {
		for b.Loop() {
			if _, err := bus.Encode(specsOneByOne{Jobs: specs, IDsOnly: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	body, _ := bus.Encode(req.wire())
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			var r BulkRequest
			if err := bus.Decode(body, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The same fields without DecodeFast: goccy, each spec through
	// Spec.UnmarshalJSON.
	type reflectiveBulk BulkRequest
	b.Run("decode/reflective", func(b *testing.B) {
		for b.Loop() {
			var r reflectiveBulk
			if err := bus.Decode(body, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
