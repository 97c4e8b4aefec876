package clusterconfig

import (
	"slices"
	"strings"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// Types are job types' policies (DESIGN §10.1), which a node of the core
// role stores as it starts, as `kuebus type set` would: each replaces the
// whole policy its type had (set from the CLI or another node's config
// included), and a type left out keeps what it has. In YAML:
//
//	types:
//	  email:
//	    concurrency: 5
//	    rate: {limit: 100, per: 1s}
//	    group_concurrency: 1
//	    group_rate: {limit: 10, per: 1s}
//	    aging: 1s
//	    defaults: {priority: high, max_attempts: 3, ttl: 2m, stall_limit: 2}
//
// Default: none, no type's policy is touched.
type Types map[string]TypePolicy

// TypePolicy is one type's policy; absent or 0 is no limit.
type TypePolicy struct {
	Concurrency      int64         `yaml:"concurrency"`
	Rate             *TypeRate     `yaml:"rate"`
	GroupConcurrency int64         `yaml:"group_concurrency"`
	GroupRate        *TypeRate     `yaml:"group_rate"`
	Aging            time.Duration `yaml:"aging"`
	Defaults         *TypeDefaults `yaml:"defaults"`
}

// TypeRate is at most Limit starts in any window of Per.
type TypeRate struct {
	Limit int64         `yaml:"limit"`
	Per   time.Duration `yaml:"per"`
}

// TypeDefaults are the spec fields a create of the type takes when it
// gives none: a priority name or integer, attempts, a ttl, a stall limit.
type TypeDefaults struct {
	Priority    string        `yaml:"priority"`
	MaxAttempts int           `yaml:"max_attempts"`
	TTL         time.Duration `yaml:"ttl"`
	StallLimit  *int          `yaml:"stall_limit"`
}

// Policies returns the policies as core takes them, sorted by type. The
// config must be valid (Validate).
func (t Types) Policies() []core.TypePolicy {
	out := make([]core.TypePolicy, 0, len(t))
	for _, name := range sortedKeys(t) {
		p, _ := t[name].policy(name)
		out = append(out, p)
	}
	return out
}

func (p TypePolicy) policy(jobType string) (core.TypePolicy, error) {
	out := core.TypePolicy{Type: jobType, Concurrency: p.Concurrency, GroupConcurrency: p.GroupConcurrency,
		Rate: p.Rate.core(), GroupRate: p.GroupRate.core()}
	if p.Aging != 0 {
		out.Aging = &core.Aging{Per: p.Aging}
	}
	if d := p.Defaults; d != nil {
		out.Defaults = &core.TypeDefaults{MaxAttempts: d.MaxAttempts, TTL: d.TTL, StallLimit: d.StallLimit}
		if d.Priority != "" {
			pr, err := core.ParsePriority(d.Priority)
			if err != nil {
				return out, core.Invalidf("defaults.priority", "%v", err)
			}
			out.Defaults.Priority = pr
		}
	}
	return out, out.Normalize()
}

func (r *TypeRate) core() *core.Rate {
	if r == nil {
		return nil
	}
	return &core.Rate{Limit: r.Limit, Per: r.Per}
}

// types checks every policy as core's type_set does, naming the field by
// path: types.email.rate.per.
func (v *validator) types() {
	for _, name := range sortedKeys(v.c.Types) {
		path := "types." + name
		if err := bus.ValidToken(name); err != nil {
			v.fail(path, "%q is not a job type: %v", name, err)
			continue
		}
		p := v.c.Types[name]
		for field, d := range map[string]time.Duration{"aging": p.Aging, "rate.per": p.Rate.per(), "group_rate.per": p.GroupRate.per()} {
			if d%time.Millisecond != 0 {
				v.fail(path+"."+field, "%v is not a whole number of milliseconds", d)
			}
		}
		if _, err := p.policy(name); err != nil {
			// core names the field first: "rate.per: ..." is then
			// types.email.rate.per's
			field, why, _ := strings.Cut(bus.MessageOf(err), ": ")
			v.fail(path+"."+field, "%s", why)
		}
	}
}

func (r *TypeRate) per() time.Duration {
	if r == nil {
		return 0
	}
	return r.Per
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // errors and policies in a stable order
	return keys
}
