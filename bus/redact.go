package bus

import "strings"

// RedactURL masks the password (or bare token) of every URL in s, which
// may be one URL, a comma-separated list of them, or any text that quotes
// them, such as an error message wrapped any number of times:
// "nats://w1:secret@host:4222" becomes "nats://w1:xxxxx@host:4222", and
// "nats://token@host" "nats://xxxxx@host". It works on the text, not on a
// parsed URL, so a URL that does not parse (a bad port) is masked too. A
// URL runs to the next space or quote, or the next URL of a list; one
// that follows a double quote, as net/url's errors quote it, runs to the
// closing quote, spaces and escaped quotes included.
func RedactURL(s string) string {
	if !strings.Contains(s, "://") || !strings.Contains(s, "@") {
		return s // the common case, without a copy
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			break
		}
		scheme := schemeStart(s, i)
		quoted := scheme > 0 && s[scheme-1] == '"'
		start := i + len("://")
		b.WriteString(s[:start])
		s = s[start:]
		// The userinfo runs to the last @ of the authority.
		end := urlEnd(s, quoted)
		if next := strings.Index(s[:end], "://"); next >= 0 {
			end = schemeStart(s, next)
		}
		at := strings.LastIndexByte(s[:end], '@')
		if at < 0 {
			continue
		}
		if user, _, hasPassword := strings.Cut(s[:at], ":"); hasPassword {
			b.WriteString(user + ":xxxxx")
		} else {
			b.WriteString("xxxxx")
		}
		s = s[at:]
	}
	b.WriteString(s)
	return b.String()
}

// urlEnd is where the URL whose authority starts s ends: at the next
// space or quote, or, quoted, at the next quote not escaped.
func urlEnd(s string, quoted bool) int {
	if !quoted {
		if end := strings.IndexAny(s, " \t\r\n\"'`<>"); end >= 0 {
			return end
		}
		return len(s)
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++ // an escaped character, as in \"
		case '"':
			return i
		}
	}
	return len(s)
}

// schemeStart is where the scheme before s[i:] ("://") starts.
func schemeStart(s string, i int) int {
	for i > 0 {
		c := s[i-1]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
			break
		}
		i--
	}
	return i
}
