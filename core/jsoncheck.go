package core

import (
	"strconv"
	"unicode/utf8"
)

// checkJSON checks a JSON value that a client sends to be stored as is and
// read back by others (a job's data, a result): encoding/json parses it as
// JSON, but keeps a json.RawMessage byte for byte, so without this check
// invalid UTF-8, lone UTF-16 surrogates (\ud800) and numbers that no reader
// can hold (1e999999) would be stored and handed to every reader, whose own
// decoder may then refuse the whole job. The message names field and byte.
func CheckJSON(field string, raw []byte) error {
	if !utf8.Valid(raw) {
		return Invalidf(field, "not valid UTF-8 (at byte %d)", invalidUTF8At(raw))
	}
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case c == '"':
			end, err := checkString(field, raw, i)
			if err != nil {
				return err
			}
			i = end
		case c == '-' || (c >= '0' && c <= '9'):
			end := i + 1
			for end < len(raw) && isNumberByte(raw[end]) {
				end++
			}
			if mayOverflow(raw[i:end]) && !fitsFloat64(raw[i:end]) {
				return Invalidf(field, "the number %.40s (at byte %d) does not fit a 64-bit float", raw[i:end], i)
			}
			i = end
		default:
			i++
		}
	}
	return nil
}

// checkString checks the JSON string that opens at raw[start] and returns
// the index just past its closing quote. Every \u escape must be a
// character: a high surrogate followed by a low one, or no surrogate.
func checkString(field string, raw []byte, start int) (int, error) {
	for i := start + 1; i < len(raw); {
		switch raw[i] {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 < len(raw) && raw[i+1] == 'u' {
				n, err := checkEscape(field, raw, i)
				if err != nil {
					return 0, err
				}
				i += n
				continue
			}
			i += 2
		default:
			i++
		}
	}
	return 0, Invalidf(field, "a string that opens at byte %d never closes", start)
}

// checkEscape checks the \u escape at raw[i] and returns its length: 6, or
// 12 for a surrogate pair.
func checkEscape(field string, raw []byte, i int) (int, error) {
	r, ok := hex4(raw, i+2)
	switch {
	case !ok:
		return 0, Invalidf(field, "a broken \\u escape at byte %d", i)
	case r >= 0xDC00 && r <= 0xDFFF:
		return 0, Invalidf(field, "\\u%04x at byte %d is a lone UTF-16 surrogate, not a character", r, i)
	case r < 0xD800 || r > 0xDBFF:
		return 6, nil
	}
	if i+7 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
		if low, ok := hex4(raw, i+8); ok && low >= 0xDC00 && low <= 0xDFFF {
			return 12, nil
		}
	}
	return 0, Invalidf(field, "\\u%04x at byte %d is a lone UTF-16 surrogate, not a character", r, i)
}

func hex4(raw []byte, at int) (rune, bool) {
	if at+4 > len(raw) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw[at:at+4]), 16, 16)
	return rune(n), err == nil
}

// mayOverflow is false for a number that surely fits a float64: one with no
// exponent and fewer digits than the largest float64 (309), which saves
// parsing the numbers of ordinary data.
func mayOverflow(num []byte) bool {
	if len(num) >= 309 {
		return true
	}
	for _, c := range num {
		if c == 'e' || c == 'E' {
			return true
		}
	}
	return false
}

func fitsFloat64(num []byte) bool {
	_, err := strconv.ParseFloat(string(num), 64)
	return err == nil
}

func isNumberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

func invalidUTF8At(raw []byte) int {
	for i := 0; i < len(raw); {
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(raw)
}
