package clusterconfig

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// RetentionAnyType is the key of Config.Retention whose defaults hold for
// every job type without an entry of its own.
const RetentionAnyType = "*"

// Retention is the core role's default retention of finished jobs, by job
// type (or RetentionAnyType), for the jobs that bring none of their own
// (remove_on_complete / remove_on_fail; a job's own always wins; a
// cancelled job has none of its own, so only its type's default for
// cancelled applies). In YAML:
//
//	retention:
//	  "*":
//	    complete: {age: 24h}
//	    cancelled: {age: 168h}
//	  email:
//	    complete: {count: 1000}
//	    failed: {age: 168h, count: 100}
//
// and in the variable KUEBUS_RETENTION, comma-separated
// TYPE.STATE.KEY=VALUE items:
//
//	KUEBUS_RETENTION='*.complete.age=24h,email.complete.count=1000'
//
// A job is kept at most age after it finished, and only while it is among
// the count newest of its type in that state; either may be left out. The
// leader's cleaner removes the rest. Default: none, finished jobs
// (complete, failed, cancelled) are kept.
type Retention map[string]TypeRetention

// TypeRetention is one type's defaults: for its complete, its failed and
// its cancelled jobs (nil: kept).
type TypeRetention struct {
	Complete  *RetentionLimit `yaml:"complete"`
	Failed    *RetentionLimit `yaml:"failed"`
	Cancelled *RetentionLimit `yaml:"cancelled"`
}

// RetentionLimit keeps finished jobs at most Age after they finished and
// only the Count newest; zero is no limit, but not both.
type RetentionLimit struct {
	Age   time.Duration `yaml:"age"`
	Count int64         `yaml:"count"`
}

// Core returns the defaults as core's service takes them.
func (r Retention) Core() map[string]core.TypeRetention {
	if len(r) == 0 {
		return nil
	}
	out := make(map[string]core.TypeRetention, len(r))
	for t, tr := range r {
		out[t] = core.TypeRetention{Complete: tr.Complete.core(), Failed: tr.Failed.core(), Cancelled: tr.Cancelled.core()}
	}
	return out
}

func (l *RetentionLimit) core() core.Retention {
	if l == nil {
		return core.Retention{}
	}
	return core.Retention{Age: l.Age, Count: l.Count}
}

// retention checks every entry, naming it by path:
// retention.email.complete.age.
func (v *validator) retention() {
	types := make([]string, 0, len(v.c.Retention))
	for t := range v.c.Retention {
		types = append(types, t)
	}
	slices.Sort(types) // errors in a stable order
	for _, t := range types {
		path := "retention." + t
		if t != RetentionAnyType {
			if err := bus.ValidToken(t); err != nil {
				v.fail(path, "%q is not a job type (nor %q, every type): %v", t, RetentionAnyType, err)
				continue
			}
		}
		tr := v.c.Retention[t]
		if tr.Complete == nil && tr.Failed == nil && tr.Cancelled == nil {
			v.fail(path, "none of complete, failed and cancelled is set")
		}
		for state, l := range map[string]*RetentionLimit{"complete": tr.Complete, "failed": tr.Failed, "cancelled": tr.Cancelled} {
			if l == nil {
				continue
			}
			p := path + "." + state
			switch {
			case l.Age < 0:
				v.fail(p+".age", "%v is negative", l.Age)
			case l.Age%time.Millisecond != 0:
				v.fail(p+".age", "%v is not a whole number of milliseconds", l.Age)
			case l.Count < 0:
				v.fail(p+".count", "%d is negative", l.Count)
			case l.Age == 0 && l.Count == 0:
				v.fail(p, "age and count are both 0: give one, or leave %s out to keep the jobs", state)
			}
		}
	}
}

// Cleaner tunes the promoter leader's cleaner (promoter.CleanConfig): it
// calls core's clean, again at once while there is more to remove, else
// every Interval.
type Cleaner struct {
	// Interval is the wait after a call that left nothing to remove at
	// once. Default (and 0): 5s.
	Interval time.Duration `yaml:"interval"`
	// Limit is how many finished jobs of one type and state one call reads
	// (so removes) at most. 1 … 100000; default (and 0): 1000.
	Limit int `yaml:"limit"`
}

func (v *validator) cleaner() {
	c := v.c.Cleaner
	if c.Interval < 0 {
		v.fail("cleaner.interval", "%v is negative", c.Interval)
	}
	if c.Limit < 0 || c.Limit > core.MaxMoveLimit {
		v.fail("cleaner.limit", "%d is outside 1..%d (0: the default, 1000)", c.Limit, core.MaxMoveLimit)
	}
}

// ParseRetention reads and checks the variable form of Retention (as
// KUEBUS_RETENTION gives it): `kuebus dev --retention` takes it too.
func ParseRetention(raw string) (Retention, error) {
	r, err := parseRetention(raw)
	if err != nil {
		return nil, err
	}
	v := &validator{c: &Config{Retention: r}}
	v.retention()
	return r, errors.Join(v.errs...)
}

// parseRetention reads KUEBUS_RETENTION: TYPE.STATE.KEY=VALUE items,
// comma-separated, STATE complete, failed or cancelled, KEY age (a
// duration) or count.
// Values are checked by Validate.
func parseRetention(raw string) (Retention, error) {
	out := Retention{}
	for i, item := range strings.Split(raw, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		path, value, ok := strings.Cut(item, "=")
		parts := strings.Split(path, ".")
		if !ok || len(parts) != 3 || parts[0] == "" {
			return nil, fmt.Errorf("item %d %q is not TYPE.STATE.KEY=VALUE (email.complete.count=1000)", i+1, item)
		}
		t, state, key := parts[0], parts[1], parts[2]
		tr := out[t]
		var l **RetentionLimit
		switch state {
		case "complete":
			l = &tr.Complete
		case "failed":
			l = &tr.Failed
		case "cancelled":
			l = &tr.Cancelled
		default:
			return nil, fmt.Errorf("item %d %q: %q is not complete, failed or cancelled", i+1, item, state)
		}
		if *l == nil {
			*l = &RetentionLimit{}
		}
		switch key {
		case "age":
			d, err := time.ParseDuration(value)
			if err != nil {
				return nil, fmt.Errorf("item %d %q: %q is not a duration like 24h", i+1, item, value)
			}
			(*l).Age = d
		case "count":
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("item %d %q: %q is not a whole number", i+1, item, value)
			}
			(*l).Count = n
		default:
			return nil, fmt.Errorf("item %d %q: %q is not age or count", i+1, item, key)
		}
		out[t] = tr
	}
	return out, nil
}
