package core

import (
	"strings"
	"testing"
)

// BenchmarkCheckJSON: the cost the data check adds to a create, for a
// typical small payload and for one at the size limit.
func BenchmarkCheckJSON(b *testing.B) {
	small := []byte(`{"to":"a@example.com","subject":"Welcome, Zoë","n":42,"tags":["a","b"],"ratio":0.25}`)
	big := []byte(`{"rows":[` + strings.Repeat(`{"id":12345,"name":"x\u00e9y","v":1.5e3},`, 10000) + `0]}`)
	for _, c := range []struct {
		name string
		data []byte
	}{{"small", small}, {"512KiB", big}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				if err := CheckJSON("data", c.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
