package core

import (
	"math"
	"strconv"
	"strings"

	"github.com/kuebus/kuebus/bus"
)

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
// by type (types sorted by name), each type's in creation order (oldest
// first). Cursor is set
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

// SearchCursor is where a search goes on: a job type, and the place of
// the last job looked at in that type's jobs index, its score (creation
// order: the job's created_at × 1000 and its place among the jobs its
// core created in that ms)
// and its member (the job's id), as core.RangeCursor holds a place. A
// place, not an id: many jobs may share a score, and a search must
// neither skip nor repeat one at a page's end.
//
// On the wire it is "<type>:<score>:<member>" (for example
// "order:1764240000000002:3"); treat it as opaque. The "<type>:<id>" of
// earlier versions still reads, as the place (id, id): jobs stored then
// are scored by id until the leader re-scores them, so it goes on where
// it was, or, for jobs already re-scored, from the start of its type: it
// may repeat jobs, it never skips one.
type SearchCursor struct {
	Type   string
	Score  float64
	Member string
}

func (c SearchCursor) String() string {
	return c.Type + ":" + strconv.FormatFloat(c.Score, 'f', -1, 64) + ":" + c.Member
}

// ParseSearchCursor reads a cursor that search sent; "" is the beginning.
func ParseSearchCursor(s string) (SearchCursor, error) {
	if s == "" {
		return SearchCursor{}, nil
	}
	bad := func(why string) (SearchCursor, error) {
		return SearchCursor{}, Invalidf("cursor", "%q is not a cursor from a search reply: %s", s, why)
	}
	parts := strings.Split(s, ":")
	if len(parts) == 2 { // an earlier version's "<type>:<id>"
		parts = []string{parts[0], parts[1], parts[1]}
	}
	if len(parts) != 3 {
		return bad("expected <type>:<score>:<member>")
	}
	if err := bus.ValidToken(parts[0]); err != nil {
		return bad("the type: " + err.Error())
	}
	score, err := strconv.ParseFloat(parts[1], 64)
	if err != nil || math.IsInf(score, 0) || math.IsNaN(score) {
		return bad("the score is not a finite number")
	}
	if !digits(parts[2]) || len(parts[2]) > maxCursorMember {
		return bad("the member is not a job id")
	}
	return SearchCursor{Type: parts[0], Score: score, Member: parts[2]}, nil
}
