package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/kuebus/kuebus/bus"
)

// Retention is how long a finished job is kept: a job's remove_on_complete
// (for the state complete) or remove_on_fail (failed). On the wire it is
//
//	false (or absent)       kept, unless its type has a default (a node's
//	                        config, retention:) that says otherwise
//	true                    removed the moment it finishes, with its log
//	{"age":ms,"count":n}    kept at most age ms after it finished, and only
//	                        while it is among the n newest of its type in
//	                        that state; either may be left out (0: no limit)
//
// The leader's cleaner (core.clean) removes jobs past their age or count in
// bounded batches. A job's own setting wins over its type's default, as in
// BullMQ: a job with {"count":10} of a type whose default is {"age":...}
// is kept by its count alone.
type Retention struct {
	// AtOnce is true on the wire: the job goes as it finishes.
	AtOnce bool
	// Age is how long after it finished the job is kept (whole ms on the
	// wire); 0: no limit of age.
	Age time.Duration
	// Count is how many jobs of its type in its state are kept: the job goes
	// once Count newer ones finished; 0: no limit of count.
	Count int64
}

// RemoveAtOnce is the retention true: removed the moment it finishes.
var RemoveAtOnce = Retention{AtOnce: true}

// IsZero reports whether r is false on the wire: the job has no retention
// of its own.
func (r Retention) IsZero() bool { return r == Retention{} }

// Limited reports whether r keeps a job for a while: {age, count}.
func (r Retention) Limited() bool { return !r.AtOnce && (r.Age > 0 || r.Count > 0) }

// MarshalJSON writes false, true or {"age":ms,"count":n} (a zero limit
// left out).
func (r Retention) MarshalJSON() ([]byte, error) {
	return r.appendJSON(nil), nil
}

// appendJSON appends the retention as MarshalJSON writes it.
func (r Retention) appendJSON(b []byte) []byte {
	switch {
	case r.AtOnce:
		return append(b, "true"...)
	case r.IsZero():
		return append(b, "false"...)
	}
	b = append(b, '{')
	if r.Age != 0 {
		b = strconv.AppendInt(append(b, `"age":`...), r.Age.Milliseconds(), 10)
	}
	if r.Count != 0 {
		if r.Age != 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(b, `"count":`...), r.Count, 10)
	}
	return append(b, '}')
}

// UnmarshalJSON reads false, true, null (as false) or an object with only
// age and count, both integers ≥ 0 and not both 0 (for "remove at once"
// send true, for "keep" false). Errors name the key at fault; encoding/json
// adds the field's own name before it (bus.FieldError).
func (r *Retention) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch string(b) {
	case "true":
		*r = RemoveAtOnce
		return nil
	case "false", "null":
		*r = Retention{}
		return nil
	}
	if len(b) == 0 || b[0] != '{' {
		return bus.FieldError("", fmt.Sprintf(`expected true, false or {"age":ms,"count":n}, got %.40s`, b))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return bus.FieldError("", fmt.Sprintf("not a JSON object: %v", err))
	}
	var out Retention
	// In the keys' order, not the map's: of two bad keys, every decoder
	// names the same one (bus.Decode's two decoders call this both).
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		v := obj[key]
		if key != "age" && key != "count" {
			return bus.FieldError(key, "unknown key (age, count)")
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
		if err != nil {
			return bus.FieldError(key, fmt.Sprintf("expected an integer, got %.40s", v))
		}
		if n < 0 {
			return bus.FieldError(key, fmt.Sprintf("%d is negative", n))
		}
		if key == "count" {
			out.Count = n
			continue
		}
		if out.Age, err = msDuration("", n); err != nil {
			return bus.FieldError(key, fmt.Sprintf("%d ms is more than a duration holds", n))
		}
	}
	if out.Age == 0 && out.Count == 0 {
		return bus.FieldError("", `age and count are both 0: send true to remove at once, false to keep`)
	}
	*r = out
	return nil
}

// validate checks a retention built in Go (the wire's is checked as it
// decodes).
func (r Retention) validate(field string) error {
	switch {
	case r.Age < 0:
		return Invalidf(field+".age", "%d is negative", r.Age.Milliseconds())
	case r.Count < 0:
		return Invalidf(field+".count", "%d is negative", r.Count)
	case r.AtOnce && (r.Age != 0 || r.Count != 0):
		return Invalidf(field, "true (remove at once) has no age or count")
	}
	return nil
}

// TypeRetention is a job type's default retention in each finished state,
// for the jobs that have none of their own (a node's config, retention:).
// Each is zero (none: kept) or {age, count}. Cancelled has no per-job
// setting (a cancel is a person's act, not the producer's plan): the
// type's default alone says how long cancelled jobs are kept.
type TypeRetention struct {
	Complete  Retention `json:"complete,omitzero"`
	Failed    Retention `json:"failed,omitzero"`
	Cancelled Retention `json:"cancelled,omitzero"`
}

// FinishedStates are the states a retention applies to, in the order the
// cleaner goes through them.
var FinishedStates = []State{StateComplete, StateFailed, StateCancelled}

// For returns the default of state (complete, failed or cancelled).
func (t TypeRetention) For(state State) Retention {
	switch state {
	case StateFailed:
		return t.Failed
	case StateCancelled:
		return t.Cancelled
	}
	return t.Complete
}

// CleanLimitDefault is clean's limit when none is given: how many finished
// jobs of one type and state one call reads at most.
const CleanLimitDefault = 1000

// CleanReply is clean's reply: how many jobs it removed, and whether it
// stopped short somewhere having removed some (call again at once).
type CleanReply struct {
	Removed int  `json:"removed"`
	More    bool `json:"more"`
	// TypeErrors lists the types this call could not clean, sorted by
	// type: the Redis Cluster master that holds them failed. Left out when
	// every type was cleaned.
	TypeErrors []TypeError `json:"type_errors,omitempty"`
}
