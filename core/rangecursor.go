package core

import (
	"math"
	"strconv"
	"strings"
)

// RangeCursor is the place of one job in the index a range reads: the
// state whose index it is ("" for every job), and the job's score and
// member there. Indexes order by score, then member as bytes, and a
// member names one job across every type, so a place orders the merged
// index of every type as well as one type's: a page by cursor reads, in
// each type, only the jobs after the place, whatever its depth.
//
// On the wire it is "<state>_<score>_<member>", state "all" for every
// job (for example "inactive_0_0000000000000012:42"); treat it as opaque.
type RangeCursor struct {
	State  State
	Score  float64
	Member string
}

// rangeCursorAll stands for State "" in a cursor's text.
const rangeCursorAll = "all"

// maxCursorMember bounds a member in a cursor: a ready member is 16
// digits, a colon and an id of up to 19.
const maxCursorMember = 40

func (c RangeCursor) String() string {
	st := string(c.State)
	if st == "" {
		st = rangeCursorAll
	}
	return st + "_" + strconv.FormatFloat(c.Score, 'f', -1, 64) + "_" + c.Member
}

// ParseRangeCursor reads a cursor that a range sent, of the index of
// state: "" or a cursor of another state's index is invalid.
func ParseRangeCursor(s string, state State) (RangeCursor, error) {
	bad := func(why string) (RangeCursor, error) {
		return RangeCursor{}, Invalidf("cursor", "%q is not a cursor from a range reply: %s", s, why)
	}
	parts := strings.Split(s, "_")
	if len(parts) != 3 {
		return bad("expected <state>_<score>_<member>")
	}
	st := State(parts[0])
	if parts[0] == rangeCursorAll {
		st = ""
	} else if _, err := ParseState(parts[0]); err != nil {
		return bad("no state " + strconv.Quote(parts[0]))
	}
	score, err := strconv.ParseFloat(parts[1], 64)
	if err != nil || math.IsInf(score, 0) || math.IsNaN(score) {
		return bad("the score is not a finite number")
	}
	if !validMember(parts[2]) {
		return bad("the member is not digits, or digits:digits")
	}
	if st != state {
		return RangeCursor{}, Invalidf("cursor", "%q is a cursor of %s, not of %s", s, stateName(st), stateName(state))
	}
	return RangeCursor{State: st, Score: score, Member: parts[2]}, nil
}

// validMember tells whether m has the form of an index member: digits,
// or digits, a colon and digits.
func validMember(m string) bool {
	if m == "" || len(m) > maxCursorMember {
		return false
	}
	a, b, colon := strings.Cut(m, ":")
	return digits(a) && (!colon || digits(b))
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// stateName names a state's jobs in messages: "every state" for "".
func stateName(st State) string {
	if st == "" {
		return "every state"
	}
	return "state " + string(st)
}
