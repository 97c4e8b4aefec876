package core

// SearchRequest is search's request: jobs whose id, unique key or data
// contains Q (ASCII letters without case), of one type and one state when
// given, and whose error contains Error and is in ErrorGroup when those
// are given (as bulk's filters of the same names). Q may be empty when
// Error or ErrorGroup is set: the failed list filtered by error. A search
// starts with no cursor and goes on with the cursor of each reply until a
// reply has none.
type SearchRequest struct {
	Q string `json:"q,omitempty"`
	// Error: the job's error contains it (case-sensitive, as bulk's).
	Error string `json:"error,omitempty"`
	// ErrorGroup: the job's error's group (failed_errors) is it, whole.
	ErrorGroup string `json:"error_group,omitempty"`
	Type       string `json:"type,omitempty"`
	State      State  `json:"state,omitempty"`
	// Limit bounds the jobs of one reply: default SearchLimitDefault, at
	// most MaxSearchLimit.
	Limit int `json:"limit,omitempty"`
	// Cursor is the cursor of the previous reply; "" starts at the
	// beginning.
	Cursor string `json:"cursor,omitempty"`
}

// SearchReply is one page of a search: the jobs found (without data), type
// by type (types sorted by name), each type's in id order. Cursor is set
// while jobs remain to look at: a reply may hold fewer jobs than the limit,
// none even, and still have a cursor.
type SearchReply struct {
	Jobs   []Job  `json:"jobs"`
	Cursor string `json:"cursor,omitempty"`
}

// The bounds of a search.
const (
	SearchLimitDefault = 20
	MaxSearchLimit     = 1000
	// SearchBudget is how many jobs one search call looks at, at most,
	// whatever it finds: the bound on the work of one call.
	SearchBudget   = 1000
	MaxSearchQuery = 256 // bytes
)

// ParseSearchCursor reads a cursor that search sent; "" is the beginning.
// It has the form of an ids cursor: "<type>:<the last id looked at>".
func ParseSearchCursor(s string) (IDsCursor, error) {
	c, err := ParseIDsCursor(s)
	if err != nil {
		return IDsCursor{}, Invalidf("cursor", "%q is not a cursor from a search reply", s)
	}
	return c, nil
}
