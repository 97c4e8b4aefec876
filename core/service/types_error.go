package service

import (
	"maps"
	"slices"
	"strings"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// TypesError is a Store's error for a call over several job types that
// failed for some of them only. On Redis Cluster each type lives on the
// master that owns its hash slot, and a master that is down fails its own
// types while the others go on: the call did its work for every type not
// listed here (leased their jobs, moved their due jobs, counted them).
//
// It unwraps to one coded error whose message names each failing type:
// unavailable, or internal when some type's failure is internal (a script
// error). So bus.CodeOf, the queue.error report and a caller that knows
// nothing of TypesError see it as any other store error.
//
// A Store returns it only when the call served at least one type; a call
// that served none returns the coded error alone.
type TypesError struct {
	// Errs holds the coded error of each failing type, by type.
	Errs  map[string]error
	coded error
}

// NewTypesError returns a *TypesError for the failing types in errs, or
// nil when errs is empty.
func NewTypesError(errs map[string]error) error {
	if len(errs) == 0 {
		return nil
	}
	// Types failing alike (one master down holds many) share one line.
	byMessage := map[string][]string{}
	code := bus.CodeUnavailable
	for t, err := range errs {
		m := bus.MessageOf(err)
		byMessage[m] = append(byMessage[m], t)
		if bus.CodeOf(err) == bus.CodeInternal {
			code = bus.CodeInternal
		}
	}
	var parts []string
	for m, types := range byMessage {
		slices.Sort(types)
		noun := "job type "
		if len(types) > 1 {
			noun = "job types "
		}
		parts = append(parts, noun+strings.Join(types, ", ")+": "+m)
	}
	slices.Sort(parts)
	return &TypesError{Errs: errs, coded: bus.Errorf(code, "%s", strings.Join(parts, "; "))}
}

func (e *TypesError) Error() string { return e.coded.Error() }

// Unwrap returns the coded error that names every failing type.
func (e *TypesError) Unwrap() error { return e.coded }

// Types returns the failing types, sorted.
func (e *TypesError) Types() []string { return slices.Sorted(maps.Keys(e.Errs)) }

// Wire returns the failing types as a reply lists them, sorted by type.
func (e *TypesError) Wire() []core.TypeError {
	out := make([]core.TypeError, 0, len(e.Errs))
	for _, t := range e.Types() {
		err := e.Errs[t]
		out = append(out, core.TypeError{Type: t, Code: string(bus.CodeOf(err)), Error: bus.MessageOf(err)})
	}
	return out
}
