package core

import (
	"context"
	"time"

	"github.com/kuebus/kuebus/bus"
)

// Per-type policy (DESIGN §10.1, protocol §3.40): what every core
// applies to the jobs of one type, kept in Redis beside the type's keys so
// that it holds across every core and worker at once.

// Bounds of a policy's numbers. A rate's log keeps one entry per start in
// its window, so its limit bounds the memory a type's log may take; its
// window is at most a day, which no limit a partner's API sets exceeds.
const (
	MaxConcurrency = 1_000_000
	MaxRateLimit   = 100_000
	MaxRatePer     = 24 * time.Hour
	// MaxAgingPer bounds aging's credit per step of priority: an hour per
	// step already lets a low job (10) pass a week of normal ones.
	MaxAgingPer = time.Hour
)

// Rate is at most Limit starts in any window of Per (whole ms on the
// wire: units.go).
type Rate struct {
	Limit int64         `json:"limit"`
	Per   time.Duration `json:"per"`
}

// Aging ranks a job as if it had been created Priority × Per later (Per
// in whole ms on the wire: units.go).
type Aging struct {
	Per time.Duration `json:"per"` // credit per step of priority
}

// TypeDefaults are the spec fields a create of the type takes when it does
// not give them: a field the create gives wins. A priority of 0 (normal) is
// "not given" on the wire, so a type's default priority applies to a create
// that says normal too.
type TypeDefaults struct {
	Priority         Priority      `json:"priority,omitempty"`
	MaxAttempts      int           `json:"max_attempts,omitempty"`
	Backoff          *Backoff      `json:"backoff,omitempty"`
	TTL              time.Duration `json:"ttl,omitempty"` // whole ms on the wire (units.go)
	StallLimit       *int          `json:"stall_limit,omitempty"`
	RemoveOnComplete Retention     `json:"remove_on_complete,omitzero"`
	RemoveOnFail     Retention     `json:"remove_on_fail,omitzero"`
}

// TypePolicy is type_set's request and type_get's reply: a type's policy.
// Absent or 0 is "no such limit"; setting a policy replaces the whole of
// the one before.
type TypePolicy struct {
	Type     string        `json:"type"`
	Defaults *TypeDefaults `json:"defaults,omitempty"`
	// Concurrency is how many jobs of the type may be active at once,
	// deployment-wide.
	Concurrency int64 `json:"concurrency,omitempty"`
	// Rate bounds how many jobs of the type start in any window.
	Rate *Rate `json:"rate,omitempty"`
	// GroupConcurrency and GroupRate are Concurrency and Rate for each
	// group of the type, applied by the lease scripts (docs/policy.md).
	GroupConcurrency int64 `json:"group_concurrency,omitempty"`
	GroupRate        *Rate `json:"group_rate,omitempty"`
	// Aging makes priority a time credit: a ready job ranks as if created
	// Priority × Aging.Per ms later. Nil: strict priority.
	Aging *Aging `json:"aging,omitempty"`
}

// IsZero reports whether p sets nothing: the type has no policy.
func (p *TypePolicy) IsZero() bool {
	return p.Defaults == nil && p.Concurrency == 0 && p.Rate == nil && p.GroupConcurrency == 0 && p.GroupRate == nil && p.Aging == nil
}

// TypeLimits is one type's entry in stats' limits: its limits, its starts
// in the rate's current window, and the inactive jobs a limit holds back
// now (all of them while the type is at a limit, else none), with the
// limit that does (HeldBy: ReasonConcurrency or ReasonRate; or, when no
// type limit holds, ReasonGroupConcurrency or ReasonGroupRate with the
// jobs parked by their group's limit: group_concurrency when the type has
// one, as a job parked may be held by either).
type TypeLimits struct {
	Concurrency      int64  `json:"concurrency,omitempty"`
	Rate             *Rate  `json:"rate,omitempty"`
	GroupConcurrency int64  `json:"group_concurrency,omitempty"`
	GroupRate        *Rate  `json:"group_rate,omitempty"`
	Starts           int64  `json:"starts,omitempty"`
	Held             int64  `json:"held"`
	HeldBy           string `json:"held_by,omitempty"`
}

// TypeRequest is type_get's request.
type TypeRequest struct {
	Type string `json:"type"`
}

// TypePoliciesReply is type_list's reply: every type that has a policy,
// sorted by type.
type TypePoliciesReply struct {
	Types []TypePolicy `json:"types"`
}

// Normalize checks every field of a policy, returning an invalid error
// that names the first bad one, and drops what sets nothing (a rate of
// limit 0, aging of per 0, empty defaults), so that the stored policy
// reads back as it acts.
func (p *TypePolicy) Normalize() error {
	if err := bus.ValidToken(p.Type); err != nil {
		return Invalidf("type", "%q is not a job type: %v", p.Type, err)
	}
	if p.Concurrency < 0 || p.Concurrency > MaxConcurrency {
		return Invalidf("concurrency", "%d is outside 0..%d (0: no limit)", p.Concurrency, MaxConcurrency)
	}
	if p.GroupConcurrency < 0 || p.GroupConcurrency > MaxConcurrency {
		return Invalidf("group_concurrency", "%d is outside 0..%d (0: no limit)", p.GroupConcurrency, MaxConcurrency)
	}
	var err error
	if p.Rate, err = normalizeRate("rate", p.Rate); err != nil {
		return err
	}
	if p.GroupRate, err = normalizeRate("group_rate", p.GroupRate); err != nil {
		return err
	}
	if p.Aging != nil {
		if p.Aging.Per < 0 || p.Aging.Per > MaxAgingPer {
			return Invalidf("aging.per", "%d ms is outside 0..%d (0: strict priority)", p.Aging.Per.Milliseconds(), MaxAgingPer.Milliseconds())
		}
		if p.Aging.Per == 0 {
			p.Aging = nil
		}
	}
	if p.Defaults != nil {
		if err := p.Defaults.check(p.Type); err != nil {
			return err
		}
		if *p.Defaults == (TypeDefaults{}) {
			p.Defaults = nil
		}
	}
	return nil
}

func normalizeRate(field string, r *Rate) (*Rate, error) {
	switch {
	case r == nil:
		return nil, nil
	case r.Limit < 0 || r.Limit > MaxRateLimit:
		return nil, Invalidf(field+".limit", "%d is outside 0..%d (0: no limit)", r.Limit, MaxRateLimit)
	case r.Limit == 0 && r.Per == 0:
		return nil, nil
	case r.Limit == 0:
		return nil, Invalidf(field+".limit", "0 with a window: give the number of starts the window allows")
	case r.Per < time.Millisecond || r.Per > MaxRatePer:
		return nil, Invalidf(field+".per", "%d ms is outside 1..%d", r.Per.Milliseconds(), MaxRatePer.Milliseconds())
	}
	return r, nil
}

// check checks defaults as create checks the same fields of a spec, naming
// a bad field "defaults.<field>".
func (d *TypeDefaults) check(jobType string) error {
	sp := d.Apply(Spec{Type: jobType})
	if err := sp.Normalize(0); err != nil {
		return bus.Errorf(bus.CodeInvalid, "defaults.%s", bus.MessageOf(err))
	}
	return nil
}

// Apply returns sp with the defaults filled in where sp does not give the
// field: 0 (or nil, or false) is "not given", as on the wire. It runs
// before Normalize, which fills what is still missing (max_attempts 1,
// ttl 60000).
func (d *TypeDefaults) Apply(sp Spec) Spec {
	if d == nil {
		return sp
	}
	if sp.Priority == 0 {
		sp.Priority = d.Priority
	}
	if sp.MaxAttempts == 0 {
		sp.MaxAttempts = d.MaxAttempts
	}
	if sp.Backoff == nil && d.Backoff != nil {
		b := *d.Backoff
		sp.Backoff = &b
	}
	if sp.TTL == 0 {
		sp.TTL = d.TTL
	}
	if sp.StallLimit == nil && d.StallLimit != nil {
		n := *d.StallLimit
		sp.StallLimit = &n
	}
	if sp.RemoveOnComplete.IsZero() {
		sp.RemoveOnComplete = d.RemoveOnComplete
	}
	if sp.RemoveOnFail.IsZero() {
		sp.RemoveOnFail = d.RemoveOnFail
	}
	return sp
}

// SetType stores a type's policy, replacing the one it had, and returns it
// as stored (what sets nothing left out). Every core applies it within
// core's policy cache bound (docs/policy.md).
func (c *Client) SetType(ctx context.Context, p *TypePolicy) (*TypePolicy, error) {
	var reply TypePolicy
	if err := c.call(ctx, bus.MethodTypeSet, p, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}

// GetType reads a type's policy: {"type":T} alone when it has none.
func (c *Client) GetType(ctx context.Context, jobType string) (*TypePolicy, error) {
	var reply TypePolicy
	if err := c.call(ctx, bus.MethodTypeGet, TypeRequest{Type: jobType}, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}

// ListTypes lists the policy of every type that has one, sorted by type.
func (c *Client) ListTypes(ctx context.Context) ([]TypePolicy, error) {
	var reply TypePoliciesReply
	if err := c.call(ctx, bus.MethodTypeList, Empty{}, &reply); err != nil {
		return nil, err
	}
	return reply.Types, nil
}
