package core

import (
	stdjson "encoding/json"
	"testing"

	gojson "github.com/goccy/go-json"
)

// The micro-benchmarks behind bus's codec (bus/codec.go): an event and a
// lease reply of 32 jobs through encoding/json and goccy/go-json.
//
//	go test ./core -run '^$' -bench 'EventEncode|LeaseReplyDecode' -benchmem

func sampleJob(i int) Job {
	return Job{ID: int64(1000 + i), Type: "email", Priority: PriorityNormal, State: StateActive, MaxAttempts: 3, Attempts: 1,
		TTL: 60000, CreatedAt: 1764000000000, UpdatedAt: 1764000000100, StartedAt: 1764000000100, StallLimit: 1,
		Data: stdjson.RawMessage(`{"to":"someone@example.com","n":12345,"t":1764000000000}`), Lease: "AbCdEfGhIjKlMnOpQrStUv", LeaseUntil: 1764000060100, WorkerID: "w-123"}
}

func BenchmarkEventEncode(b *testing.B) {
	j := sampleJob(1)
	ev := Event{Event: "start", ID: j.ID, Type: j.Type, At: 1764000000100, Job: j.ForEvent()}
	x, _ := stdjson.Marshal(&ev)
	y, _ := gojson.Marshal(&ev)
	if string(x) != string(y) {
		b.Fatalf("differ:\n%s\n%s", x, y)
	}
	b.Run("std", func(b *testing.B) {
		for b.Loop() {
			stdjson.Marshal(&ev)
		}
	})
	b.Run("goccy", func(b *testing.B) {
		for b.Loop() {
			gojson.Marshal(&ev)
		}
	})
}

func BenchmarkLeaseReplyDecode(b *testing.B) {
	var r JobsReply
	for i := range 32 {
		r.Jobs = append(r.Jobs, sampleJob(i))
	}
	data, _ := stdjson.Marshal(&r)
	b.Run("std", func(b *testing.B) {
		for b.Loop() {
			var out JobsReply
			stdjson.Unmarshal(data, &out)
		}
	})
	b.Run("goccy", func(b *testing.B) {
		for b.Loop() {
			var out JobsReply
			gojson.Unmarshal(data, &out)
		}
	})
	b.Run("goccy-presized", func(b *testing.B) { // as Client.Lease decodes
		for b.Loop() {
			out := JobsReply{Jobs: make([]Job, 0, 32)}
			gojson.Unmarshal(data, &out)
		}
	})
}
