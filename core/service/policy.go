package service

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// A job type's policy (DESIGN §10.1): type_set, type_get and type_list
// keep it in the store. Its limits (concurrency, rate) act in the store's
// lease scripts, so that they hold across every core at once; its
// defaults act here, in create, from a cache each core keeps for
// policyCacheFor: a policy set on one core reaches the creates of another
// within that bound (at once on the core that set it).

func (s *Service) registerTypes() error {
	return errors.Join(
		handle(s, bus.MethodTypeSet, s.typeSet),
		handle(s, bus.MethodTypeGet, s.typeGet),
		handle(s, bus.MethodTypeList, s.typeList),
	)
}

func (s *Service) typeSet(ctx context.Context, req *core.TypePolicy) (*core.TypePolicy, error) {
	if err := req.Normalize(); err != nil {
		return nil, err
	}
	if err := s.store.SetType(ctx, req); err != nil {
		return nil, err
	}
	s.policies.forget(req.Type)
	// A limit raised or dropped makes room now: this core's waiting leases
	// of the type try again (other cores' at the end of their wait, or at
	// the next job of the type leaving active there).
	s.waits.wake(req.Type)
	return req, nil
}

func (s *Service) typeGet(ctx context.Context, req *core.TypeRequest) (*core.TypePolicy, error) {
	if req.Type == "" {
		return nil, core.Invalidf("type", "missing")
	}
	if err := checkType(req.Type); err != nil {
		return nil, err
	}
	p, err := s.store.TypePolicy(ctx, req.Type)
	if err != nil || p != nil {
		return p, err
	}
	return &core.TypePolicy{Type: req.Type}, nil
}

func (s *Service) typeList(ctx context.Context, _ *core.Empty) (*core.TypePoliciesReply, error) {
	list, err := s.store.TypePolicies(ctx)
	if err != nil {
		return nil, err
	}
	if list == nil {
		list = []core.TypePolicy{}
	}
	return &core.TypePoliciesReply{Types: list}, nil
}

// withTypeDefaults fills what a spec does not give from its type's policy
// defaults, before Normalize fills what is still missing. A spec whose
// type is not a token is left as it is, for Normalize to refuse.
func (s *Service) withTypeDefaults(ctx context.Context, sp *core.Spec) error {
	if bus.ValidToken(sp.Type) != nil {
		return nil
	}
	p, err := s.policies.get(ctx, s.store, sp.Type)
	if err != nil {
		return err
	}
	if p != nil && p.Defaults != nil {
		*sp = p.Defaults.Apply(*sp)
	}
	return nil
}

// policyCacheFor is how long a core uses a type's policy as read before
// it reads it again: the bound on how late a policy set on another core
// reaches this core's creates.
const policyCacheFor = time.Second

// policyCache holds the policies read lately, absent ones included, so
// that a create of a type without a policy costs a map lookup.
type policyCache struct {
	now    func() time.Time
	mu     sync.RWMutex
	byType map[string]cachedPolicy
}

type cachedPolicy struct {
	p      *core.TypePolicy // nil: none
	readAt time.Time
}

func newPolicyCache(now func() time.Time) *policyCache {
	return &policyCache{now: now, byType: map[string]cachedPolicy{}}
}

// get returns jobType's policy (nil for none), read from store when the
// cached one is older than policyCacheFor.
func (c *policyCache) get(ctx context.Context, store Store, jobType string) (*core.TypePolicy, error) {
	now := c.now()
	c.mu.RLock()
	e, ok := c.byType[jobType]
	c.mu.RUnlock()
	if ok && now.Sub(e.readAt) < policyCacheFor {
		return e.p, nil
	}
	p, err := store.TypePolicy(ctx, jobType)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.byType) >= maxCachedPolicies {
		clear(c.byType) // types come and go; the next reads refill it
	}
	c.byType[jobType] = cachedPolicy{p: p, readAt: now}
	c.mu.Unlock()
	return p, nil
}

// maxCachedPolicies bounds the cache: far more types than a deployment
// runs, few enough that a stream of made-up types cannot grow it.
const maxCachedPolicies = 10_000

// forget drops a type's cached policy, after this core set it.
func (c *policyCache) forget(jobType string) {
	c.mu.Lock()
	delete(c.byType, jobType)
	c.mu.Unlock()
}

// addLimits fills st.Limits: each type with a concurrency, a rate or a
// group limit, and
// the inactive jobs a limit holds back now. A type stats could not read
// (st.TypeErrors) is left out.
func (s *Service) addLimits(ctx context.Context, st *core.Stats) error {
	list, err := s.store.TypePolicies(ctx)
	if err != nil {
		return err
	}
	now := s.dueNow()
	for _, p := range list {
		counts, read := st.Types[p.Type]
		grouped := p.GroupConcurrency > 0 || p.GroupRate != nil
		if !read || (p.Concurrency == 0 && p.Rate == nil && !grouped) {
			continue
		}
		l := core.TypeLimits{Concurrency: p.Concurrency, Rate: p.Rate, GroupConcurrency: p.GroupConcurrency, GroupRate: p.GroupRate}
		var per int64
		if p.Rate != nil {
			per = p.Rate.Per.Milliseconds()
		}
		h, err := s.store.Holding(ctx, &core.Job{Type: p.Type}, now, per, 0)
		if err != nil {
			return err
		}
		l.Starts = h.Starts
		switch {
		case p.Concurrency > 0 && counts.Active >= p.Concurrency:
			l.Held, l.HeldBy = counts.Inactive, core.ReasonConcurrency
		case p.Rate != nil && l.Starts >= p.Rate.Limit:
			l.Held, l.HeldBy = counts.Inactive, core.ReasonRate
		case h.Parked > 0:
			// the jobs parked by their group's limit; which limit holds
			// each is explain's to say, per job
			l.Held, l.HeldBy = h.Parked, core.ReasonGroupConcurrency
			if p.GroupConcurrency == 0 {
				l.HeldBy = core.ReasonGroupRate
			}
		}
		if st.Limits == nil {
			st.Limits = map[string]core.TypeLimits{}
		}
		st.Limits[p.Type] = l
	}
	return nil
}
