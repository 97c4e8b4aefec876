package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kuebus/kuebus/bus"
)

// A bulk of a thousand specs is the largest body a producer sends and core
// reads, and the reflective codec spent most of its time around the
// specs rather than in them: per spec, two values made to ask Retention's
// IsZero on encode; on decode, the spec's bytes scanned and copied to be
// handed to Spec.UnmarshalJSON, decoded again into the twin, copied back,
// and the slice of specs grown as it filled (BenchmarkBulkRequestWire,
// docs/benchmarks-log.md). So a spec and a bulk
// have JSON code of their own here, for the usual case only, with the
// reflective codec as the reference for everything else:
//
//   - appendJSON writes a spec as the reflective encoder writes its twin,
//     field by field, and hands every value it does not write plainly (a
//     string that needs an escape, data that is not compact ASCII-safe
//     JSON) to bus.Encode, which writes it or says why it cannot.
//   - DecodeFast reads the usual body (exact keys, each once; strings
//     without escapes; plain integers) and gives up on anything else, an
//     error included: bus.Decode then decodes the body its usual way, whose
//     errors name the field at fault.
//
// TestSpecAppendJSON and FuzzDecodeAgreesWithEncodingJSON hold both to the
// reflective codec; a field added to specJSON fails TestSpecAppendJSON
// until it is written by appendJSON and read by fastDecoder.spec.

// appendJSON appends the spec's JSON, the bytes bus.Encode writes for its
// twin (s.wire(), kept in wirefast_internal_test.go as the reference).
func (s *Spec) appendJSON(b []byte) ([]byte, error) {
	var err error
	b = append(b, `{"type":`...)
	b, err = appendString(b, s.Type, "type")
	if err != nil {
		return nil, err
	}
	if len(s.Data) > 0 {
		b = append(b, `,"data":`...)
		if b, err = appendRaw(b, s.Data, "data"); err != nil {
			return nil, err
		}
	}
	b = appendInt(b, `,"priority":`, int64(s.Priority))
	b = appendInt(b, `,"delay":`, s.Delay.Milliseconds())
	b = appendInt(b, `,"max_attempts":`, int64(s.MaxAttempts))
	if s.Backoff != nil {
		b = append(b, `,"backoff":{"type":`...)
		if b, err = appendString(b, string(s.Backoff.Type), "backoff.type"); err != nil {
			return nil, err
		}
		b = append(b, `,"delay":`...)
		b = append(strconv.AppendInt(b, s.Backoff.Delay.Milliseconds(), 10), '}')
	}
	b = appendInt(b, `,"ttl":`, s.TTL.Milliseconds())
	if !s.RemoveOnComplete.IsZero() {
		b = s.RemoveOnComplete.appendJSON(append(b, `,"remove_on_complete":`...))
	}
	if b, err = appendStringField(b, `,"unique_key":`, s.UniqueKey, "unique_key"); err != nil {
		return nil, err
	}
	if s.StallLimit != nil {
		b = strconv.AppendInt(append(b, `,"stall_limit":`...), int64(*s.StallLimit), 10)
	}
	if !s.RemoveOnFail.IsZero() {
		b = s.RemoveOnFail.appendJSON(append(b, `,"remove_on_fail":`...))
	}
	if b, err = appendStringField(b, `,"trace":`, s.Trace, "trace"); err != nil {
		return nil, err
	}
	if s.Broadcast {
		b = append(b, `,"broadcast":true`...)
	}
	if b, err = appendStringField(b, `,"group":`, s.Group, "group"); err != nil {
		return nil, err
	}
	if len(s.DependsOn) > 0 {
		b = append(b, `,"depends_on":[`...)
		for i, id := range s.DependsOn {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, id, 10)
		}
		b = append(b, ']')
	}
	if b, err = appendStringField(b, `,"on_dependency_failure":`, string(s.OnDependencyFailure), "on_dependency_failure"); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendJSON appends the request's JSON, the bytes bus.Encode writes for
// its twin (r.wire()). An error names the spec at fault.
func (r *BulkRequest) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"jobs":[`...) // no jobs is [], as wire() writes it
	for i := range r.Jobs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = r.Jobs[i].appendJSON(b); err != nil {
			return nil, fmt.Errorf("jobs[%d].%w", i, err)
		}
	}
	b = append(b, ']')
	if r.IDsOnly {
		b = append(b, `,"ids_only":true`...)
	}
	return append(b, '}'), nil
}

// appendInt appends key and n unless n is 0 (omitempty).
func appendInt(b []byte, key string, n int64) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), n, 10)
}

// appendStringField appends key and s unless s is "" (omitempty).
func appendStringField(b []byte, key, s, field string) ([]byte, error) {
	if s == "" {
		return b, nil
	}
	return appendString(append(b, key...), s, field)
}

// appendString appends s as a JSON string: as it is between quotes when
// no byte of it needs an escape, else as bus.Encode writes it (its rules
// of escapes: HTML's <, > and &, U+2028, invalid UTF-8, ...).
func appendString(b []byte, s, field string) ([]byte, error) {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return appendEncoded(b, s, field)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), nil
}

// appendRaw appends raw JSON as it is when it is valid, compact and has
// nothing the encoder escapes (HTML's <, > and &, U+2028, U+2029, invalid
// UTF-8), else as bus.Encode writes it, or the error it gives.
func appendRaw(b, raw []byte, field string) ([]byte, error) {
	if plainJSON(raw) {
		if end, ok := skipValue(raw, 0, 0); ok && end == len(raw) {
			return append(b, raw...), nil
		}
	}
	return appendEncoded(b, json.RawMessage(raw), field)
}

// plainJSON says whether raw, if it is valid JSON, is what bus.Encode
// writes for it: valid UTF-8 without U+2028 or U+2029, none of <, > and
// &, and no whitespace outside its strings (within them it is the data:
// {"name":"a b"} is as compact as JSON gets).
func plainJSON(raw []byte) bool {
	if !utf8.Valid(raw) || bytes.Contains(raw, []byte("\u2028")) || bytes.Contains(raw, []byte("\u2029")) {
		return false
	}
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '<' || c == '>' || c == '&':
			return false
		case inString && c == '\\':
			i++ // the escaped byte: an escaped quote ends no string
		case c == '"':
			inString = !inString
		case !inString && isSpace(c):
			return false
		}
	}
	return true
}

// appendEncoded appends v as bus.Encode writes it.
func appendEncoded(b []byte, v any, field string) ([]byte, error) {
	enc, err := bus.Encode(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return append(b, enc...), nil
}

// DecodeFast decodes the usual body of a create, reporting whether it did;
// on false s is unchanged and bus.Decode, which calls it
// (bus.FastDecoder), decodes the body its usual way.
func (s *Spec) DecodeFast(data []byte) bool {
	d := fastDecoder{b: data}
	var sp Spec
	if !d.spec(&sp) || !d.end() {
		return false
	}
	*s = sp
	return true
}

// DecodeFast decodes the usual body of a create_bulk, reporting whether it
// did; on false r is unchanged and bus.Decode, which calls it
// (bus.FastDecoder), decodes the body its usual way.
func (r *BulkRequest) DecodeFast(data []byte) bool {
	d := fastDecoder{b: data}
	var req BulkRequest
	if !d.object(func(key []byte) bool {
		switch string(key) {
		case "jobs":
			if req.Jobs != nil {
				return false
			}
			// Room for a job per 48 bytes (a small spec's), up to a
			// bulk's default limit: the usual bulk never grows the slice,
			// and none reserves more than a few times its own size.
			req.Jobs = make([]Spec, 0, min(len(data)/48+1, 1000))
			return d.array(func() bool {
				req.Jobs = append(req.Jobs, Spec{})
				return d.spec(&req.Jobs[len(req.Jobs)-1])
			})
		case "ids_only":
			return d.boolean(&req.IDsOnly)
		}
		return false
	}) || !d.end() {
		return false
	}
	*r = req
	return true
}

// fastDecoder reads the JSON of a spec or a bulk in the usual form only:
// each method reports whether it read what it reads, and any false gives
// the whole body up to bus.Decode's usual way. A key must be a field's
// exact JSON name, once; a value must not be null (which leaves a field
// as it is: the reflective decoders decide).
type fastDecoder struct {
	b        []byte
	i        int
	own      []byte // a copy of b, once data was read
	lastType string // the type of the previous spec: a bulk's are mostly one
}

// ws skips JSON's whitespace.
func (d *fastDecoder) ws() {
	for d.i < len(d.b) && isSpace(d.b[d.i]) {
		d.i++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// end reports whether nothing but whitespace is left.
func (d *fastDecoder) end() bool {
	d.ws()
	return d.i == len(d.b)
}

// next skips whitespace and reports whether the next byte is c, taking it.
func (d *fastDecoder) next(c byte) bool {
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// object reads an object, calling field for each key with the value next.
func (d *fastDecoder) object(field func(key []byte) bool) bool {
	if !d.next('{') {
		return false
	}
	if d.next('}') {
		return true
	}
	for {
		key, ok := d.plainString()
		if !ok || !d.next(':') || !field(key) {
			return false
		}
		if d.next('}') {
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

// array reads an array, calling elem for each element.
func (d *fastDecoder) array(elem func() bool) bool {
	if !d.next('[') {
		return false
	}
	if d.next(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if d.next(']') {
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

// plainString reads a string without escapes or control characters (the
// body is valid UTF-8: bus.Decode checked), giving its bytes.
func (d *fastDecoder) plainString() ([]byte, bool) {
	if !d.next('"') {
		return nil, false
	}
	start := d.i
	for ; d.i < len(d.b); d.i++ {
		switch c := d.b[d.i]; {
		case c == '"':
			d.i++
			return d.b[start : d.i-1], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// str reads a plain string into *s.
func (d *fastDecoder) str(s *string) bool {
	raw, ok := d.plainString()
	*s = string(raw)
	return ok
}

// integer reads an integer written plainly, of at most 18 digits (within an
// int64; a larger one the usual way refuses, or reads as an int64).
func (d *fastDecoder) integer() (int64, bool) {
	d.ws()
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	digits := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	n := d.i - digits
	if n == 0 || n > 18 || (d.b[digits] == '0' && n > 1) {
		return 0, false
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return 0, false // a float's syntax: the usual way decides
	}
	v, err := strconv.ParseInt(string(d.b[start:d.i]), 10, 64)
	return v, err == nil
}

// boolean reads true or false into *v.
func (d *fastDecoder) boolean(v *bool) bool {
	d.ws()
	switch {
	case bytes.HasPrefix(d.b[d.i:], []byte("true")):
		*v, d.i = true, d.i+4
	case bytes.HasPrefix(d.b[d.i:], []byte("false")):
		*v, d.i = false, d.i+5
	default:
		return false
	}
	return true
}

// raw reads any value but null, valid JSON, giving its bytes.
func (d *fastDecoder) raw() ([]byte, bool) {
	start, end, ok := d.span()
	return d.b[start:end], ok
}

// span reads any value but null, valid JSON, giving where it is.
func (d *fastDecoder) span() (start, end int, ok bool) {
	d.ws()
	start = d.i
	end, ok = skipValue(d.b, d.i, 0)
	if !ok || string(d.b[start:end]) == "null" {
		return start, start, false
	}
	d.i = end
	return start, end, true
}

// data reads a job's data: its bytes in the decoder's own copy of the
// body, made once for every data of a bulk (the body is the caller's).
func (d *fastDecoder) data() (json.RawMessage, bool) {
	start, end, ok := d.span()
	if !ok {
		return nil, false
	}
	if d.own == nil {
		d.own = bytes.Clone(d.b)
	}
	return d.own[start:end:end], true
}

// spec reads a spec object into *sp, a zero Spec: its twin's fields,
// exactly named, each once, read as Spec.UnmarshalJSON reads them (delay
// and ttl in ms). Read in place, not through the twin: a bulk's thousand
// specs are not copied twice.
func (d *fastDecoder) spec(sp *Spec) bool {
	var seen uint32 // a bit per field: a key twice is the usual way's to read
	return d.object(func(key []byte) bool {
		i := slices.Index(specKeys, string(key))
		if i < 0 || seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
		switch string(key) {
		case "type":
			raw, ok := d.plainString()
			if string(raw) != d.lastType {
				d.lastType = string(raw)
			}
			sp.Type = d.lastType
			return ok
		case "data":
			var ok bool
			sp.Data, ok = d.data()
			return ok
		case "priority":
			// Priority's own method, as the reflective decoders call it:
			// a name or an integer.
			raw, ok := d.raw()
			return ok && sp.Priority.UnmarshalJSON(raw) == nil
		case "delay":
			return d.duration(&sp.Delay)
		case "max_attempts":
			n, ok := d.integer()
			sp.MaxAttempts = int(n)
			return ok
		case "backoff":
			raw, ok := d.raw()
			sp.Backoff = new(Backoff)
			return ok && sp.Backoff.UnmarshalJSON(raw) == nil
		case "ttl":
			return d.duration(&sp.TTL)
		case "remove_on_complete":
			raw, ok := d.raw()
			return ok && sp.RemoveOnComplete.UnmarshalJSON(raw) == nil
		case "unique_key":
			return d.str(&sp.UniqueKey)
		case "stall_limit":
			n, ok := d.integer()
			sp.StallLimit = new(int(n))
			return ok
		case "remove_on_fail":
			raw, ok := d.raw()
			return ok && sp.RemoveOnFail.UnmarshalJSON(raw) == nil
		case "trace":
			return d.str(&sp.Trace)
		case "broadcast":
			return d.boolean(&sp.Broadcast)
		case "group":
			return d.str(&sp.Group)
		case "depends_on":
			sp.DependsOn = []int64{}
			return d.array(func() bool {
				id, ok := d.integer()
				sp.DependsOn = append(sp.DependsOn, id)
				return ok
			})
		case "on_dependency_failure":
			var p string
			ok := d.str(&p)
			sp.OnDependencyFailure = DepPolicy(p)
			return ok
		}
		return false // a field of specJSON this switch forgot: TestSpecAppendJSON
	})
}

// duration reads ms into *v, as specJSON.spec turns them.
func (d *fastDecoder) duration(v *time.Duration) bool {
	ms, ok := d.integer()
	var err error
	*v, err = msDuration("", ms)
	return ok && err == nil
}

// specKeys are the JSON names of specJSON's fields: a key's index is its
// bit in fastDecoder.spec's record of the keys it read. Looked up in
// order, as a spec is usually written, they are found faster than in a
// map.
var specKeys = func() []string {
	t := reflect.TypeFor[specJSON]()
	var keys []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}()

// maxSkipDepth bounds the nesting skipValue follows; deeper data goes the
// usual way, which has bounds of its own.
const maxSkipDepth = 100

// skipValue returns the end of the JSON value at b[i:] (leading
// whitespace skipped), reporting whether it is one by JSON's grammar,
// strictly: strings with valid escapes and no control characters,
// numbers as JSON writes them, the three literals.
func skipValue(b []byte, i, depth int) (int, bool) {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i == len(b) || depth > maxSkipDepth {
		return i, false
	}
	switch c := b[i]; {
	case c == '{' || c == '[':
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == closing {
			return i + 1, true
		}
		for {
			var ok bool
			if c == '{' {
				if i, ok = skipString(b, i); !ok {
					return i, false
				}
				if i = skipSpace(b, i); i == len(b) || b[i] != ':' {
					return i, false
				}
				i++
			}
			if i, ok = skipValue(b, i, depth+1); !ok {
				return i, false
			}
			switch i = skipSpace(b, i); {
			case i == len(b):
				return i, false
			case b[i] == closing:
				return i + 1, true
			case b[i] != ',':
				return i, false
			}
			i = skipSpace(b, i+1)
		}
	case c == '"':
		return skipString(b, i)
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(b, i)
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(b[i:], []byte(lit)) {
			return i + len(lit), true
		}
	}
	return i, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the end of the string that opens at b[i].
func skipString(b []byte, i int) (int, bool) {
	if i == len(b) || b[i] != '"' {
		return i, false
	}
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			i++
			if i == len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return i, false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// skipNumber returns the end of the number that starts at b[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		start := i + 1
		if i = skipDigits(b, start); i == start {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		if i = skipDigits(b, start); i == start {
			return i, false
		}
	}
	return i, true
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
