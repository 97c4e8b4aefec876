package httprule

import (
	"fmt"
	"strings"
)

// BasePath says what is wrong with a base path (httpapi.Config.BasePath),
// or nil: "" (none) or "/" followed by segments of letters, digits and
// - _ . ~, without a trailing slash, "." or ".." segments or "//".
func BasePath(p string) error {
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return nil
	}
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("%q must start with /", p)
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%q: empty, . and .. segments are not allowed", p)
		}
		for _, c := range seg {
			ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.~", c)
			if !ok {
				return fmt.Errorf("%q: character %q is not a letter, digit, or one of - _ . ~", p, c)
			}
		}
	}
	return nil
}
