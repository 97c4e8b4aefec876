package bus

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"
)

// The hot path (every request, reply and event) encodes and decodes
// kuebus's own types with goccy/go-json: it writes the same bytes as
// encoding/json (codec_test.go and core's codec test check it on every
// wire type, tricky strings and raw JSON included), about twice as fast,
// and reads a lease reply of 32 jobs about four times as fast; profiles
// of core and of a worker put encoding/json at 15-30% of their CPU.
// Requests (Decode) come from anyone: goccy decodes them first, as
// strictly (unknown fields and trailing data refused, valid UTF-8 only),
// and what it refuses goes to encoding/json, whose strictness and error
// types decide and name the field at fault. A request goccy takes is one
// encoding/json takes, into the same value: core/codec_fuzz_test.go checks
// that on every request type. encoding/json alone was 16% of core's CPU
// while processing jobs (a 36-op batch: 38.9 µs, goccy 11.8).

// Encode marshals v as JSON, byte for byte as encoding/json.Marshal does.
func Encode(v any) ([]byte, error) {
	data, err := gojson.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("bus: encode %T: %w", v, err)
	}
	return data, nil
}

// DecodeReply unmarshals what a kuebus server wrote (a reply, an event)
// into v. It is lenient where Decode is strict: unknown fields are
// ignored, so that a newer core may add some.
func DecodeReply(data []byte, v any) error {
	return gojson.Unmarshal(data, v)
}

// Decode unmarshals a JSON body into v, refusing unknown fields and trailing
// data. An empty body decodes as {}. Every failure is an *Error with code
// invalid whose message names the field at fault when there is one.
func Decode(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	if fd, ok := v.(FastDecoder); ok && utf8.Valid(data) && fd.DecodeFast(data) {
		return nil
	}
	if decodeFast(data, v) {
		return nil
	}
	// A fast try that failed may have filled part of v.
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv.Elem().SetZero()
	}
	return DecodeStrict(data, v)
}

// FastDecoder is a request type that reads its usual body itself, faster
// than goccy does (core.BulkRequest: a bulk of a thousand specs). Decode
// calls DecodeFast first, with valid UTF-8, into a zero value: it reports
// whether it decoded data whole, as strictly as Decode would and into the
// same value, leaving v unchanged when it did not; then goccy and
// encoding/json decide as for any type, and word the errors.
type FastDecoder interface {
	DecodeFast(data []byte) bool
}

// decodeFast decodes data into v with goccy as strictly as DecodeStrict
// does, reporting whether it did; on false, v may be partly filled and
// DecodeStrict decides. Invalid UTF-8, which encoding/json replaces, is
// left to it.
func decodeFast(data []byte, v any) bool {
	if !utf8.Valid(data) {
		return false
	}
	dec := gojson.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if dec.Decode(v) != nil {
		return false
	}
	off := dec.InputOffset()
	// JSON's whitespace only: bytes.TrimSpace would take "\v" too, which
	// encoding/json refuses.
	return off >= 0 && off <= int64(len(data)) && len(bytes.TrimLeft(data[off:], " \t\r\n")) == 0
}

// DecodeStrict is Decode by encoding/json alone: the reference the fast
// path is checked against.
func DecodeStrict(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := describeJSONError(err)
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			// encoding/json names the key alone; the path says where.
			if path := unknownFieldPath(data, reflect.TypeOf(v)); path != "" {
				msg = path + ": unknown field"
			}
		}
		return &Error{Code: CodeInvalid, Message: msg}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &Error{Code: CodeInvalid, Message: "body: unexpected data after the JSON value"}
	}
	return nil
}

// DecodeField is Decode for a type's own UnmarshalJSON that reads its
// object through another type (core.Spec reads its durations as
// milliseconds this way): as strict as Decode (unknown fields refused),
// and every error is an *json.UnmarshalTypeError naming the key at fault
// within data, so that the decoder that called the UnmarshalJSON puts the
// field's own path before it, as for a FieldError.
func DecodeField(data []byte, v any) error {
	// The value is whole (the decoder that called UnmarshalJSON found its
	// end), so Unmarshal reads it: a stream Decoder, which decodeFast needs
	// to see trailing data, costs 600 ns and 900 bytes more per value.
	if utf8.Valid(data) && gojson.UnmarshalWithOption(data, v, disallowUnknownFields) == nil {
		return nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv.Elem().SetZero()
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr):
		return typeErr
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		if path := unknownFieldPath(data, reflect.TypeOf(v)); path != "" {
			return FieldError(path, "unknown field")
		}
	}
	return FieldError("", describeJSONError(err))
}

// disallowUnknownFields makes goccy's Unmarshal refuse an unknown object
// key, as its Decoder's DisallowUnknownFields does: it sets the flags that
// method sets, read from a Decoder once (goccy has no option of its own
// for Unmarshal).
var disallowUnknownFields = func() gojson.DecodeOptionFunc {
	dec := gojson.NewDecoder(strings.NewReader("{}"))
	dec.DisallowUnknownFields()
	var strict gojson.DecodeOption
	if err := dec.DecodeWithOption(&struct{}{}, func(o *gojson.DecodeOption) { strict.Flags = o.Flags }); err != nil {
		panic("bus: read goccy's strict flags: " + err.Error())
	}
	return func(o *gojson.DecodeOption) { o.Flags |= strict.Flags }
}()

// FieldError is what a field's own UnmarshalJSON returns to say why its
// value is bad: encoding/json prefixes key with the path of the field (so a
// job's remove_on_complete reports "remove_on_complete.age"), and Decode
// words it "<path>: <why>". key may be "" for the field itself.
func FieldError(key, why string) error {
	return &json.UnmarshalTypeError{Value: why, Type: reasonType, Field: key}
}

// reasonType marks the UnmarshalTypeErrors that FieldError makes: their
// Value is the reason, not a JSON value.
var reasonType = reflect.TypeFor[struct{ reason string }]()

// describeJSONError rewrites encoding/json's errors so that they lead with the
// field a person has to fix.
func describeJSONError(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Type == reasonType:
		return cmp.Or(typeErr.Field, "body") + ": " + typeErr.Value
	case errors.As(err, &typeErr):
		want := typeErr.Type.String()
		if typeErr.Type.Kind() == reflect.Struct {
			want = "a JSON object"
		}
		field := typeErr.Field
		if field == "" {
			field = "body"
		}
		return fmt.Sprintf("%s: expected %s, got JSON %s", field, want, typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("body: not valid JSON at byte %d: %v", syntaxErr.Offset, syntaxErr)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "body: truncated JSON"
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return strings.Trim(name, `"`) + ": unknown field"
	}
	// Errors from a field's own UnmarshalJSON (for example a priority name)
	// already name the field.
	return strings.TrimPrefix(msg, "json: ")
}

// unknownFieldPath is the path of the first key in data that no field of t
// takes, as encoding/json's own errors write a path ("spec.priority": the
// JSON names of the fields, no array index), or "" when it finds none.
// encoding/json reports such a key by its name alone; DecodeStrict calls
// this to say where it is.
func unknownFieldPath(data []byte, t reflect.Type) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	path, _ := walkUnknown(dec, t, "")
	return path
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// walkUnknown reads one JSON value from dec as a value of type t would
// be read and returns the path of the first key t has no field for. A type
// that decodes itself (json.Unmarshaler), an interface or a map key is
// read without looking inside.
func walkUnknown(dec *json.Decoder, t reflect.Type, path string) (string, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	delim, ok := tok.(json.Delim)
	if !ok || delim == '}' || delim == ']' {
		return "", nil // a scalar
	}
	opaque := t == nil || reflect.PointerTo(t).Implements(unmarshalerType) || t.Implements(unmarshalerType)
	for dec.More() {
		var elem reflect.Type
		elemPath := path
		if delim == '{' {
			keyTok, err := dec.Token()
			if err != nil {
				return "", err
			}
			key, _ := keyTok.(string)
			switch {
			case opaque:
			case t.Kind() == reflect.Struct:
				f, found := jsonField(t, key)
				if !found {
					return joinPath(path, key), nil
				}
				elem, elemPath = f.Type, joinPath(path, jsonName(f))
			case t.Kind() == reflect.Map:
				elem = t.Elem()
			}
		} else if !opaque && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		if p, err := walkUnknown(dec, elem, elemPath); p != "" || err != nil {
			return p, err
		}
	}
	_, err = dec.Token() // the closing delimiter
	return "", err
}

// jsonField finds the field of struct t that encoding/json decodes key
// into: by its JSON name, exactly or else ignoring case, fields of embedded
// structs included.
func jsonField(t reflect.Type, key string) (reflect.StructField, bool) {
	var folded reflect.StructField
	foundFolded := false
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Tag.Get("json") == "-" {
			continue
		}
		if f.Anonymous && f.Tag.Get("json") == "" {
			if ft := f.Type; ft.Kind() == reflect.Struct || (ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct) {
				continue // its fields are visible themselves
			}
		}
		name := jsonName(f)
		if name == key {
			return f, true
		}
		if !foundFolded && strings.EqualFold(name, key) {
			folded, foundFolded = f, true
		}
	}
	return folded, foundFolded
}

// jsonName is the name a field has in JSON: its tag's, or its Go name.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return cmp.Or(name, f.Name)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
