package node

import (
	"context"
	"errors"
	"fmt"

	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
)

// startCore connects to Redis, checks that it answers, and serves core.
func (n *Node) startCore(ctx context.Context) error {
	var err error
	if n.redis, err = redisstore.Open(redisConn(n.cfg.Redis)); err != nil {
		return configErrorf("config: redis.url: %v", err)
	}
	n.store, err = n.redis.Store(redisstore.Config{
		Prefix:       n.cfg.RedisPrefix,
		WaitReplicas: n.cfg.Redis.WaitReplicas,
		WaitTimeout:  n.cfg.Redis.WaitTimeout,
	})
	if err != nil {
		// Validate checked both redis_prefix and the wait settings.
		return configErrorf("config: redis: %v", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, redisPingTimeout)
	err = n.redis.WaitReady(pingCtx)
	if err == nil {
		// Every script on every master and replica now, so that a failover
		// finds them there; a failure only costs an EVAL later, so it is
		// logged, not fatal.
		if lerr := n.redis.LoadScripts(pingCtx); lerr != nil {
			n.log.WarnContext(ctx, "node: scripts not loaded at start; Redis gets them on first use", "err", lerr)
		}
	}
	cancel()
	if errors.Is(err, redisstore.ErrSentinelAuth) {
		return configErrorf("config: redis.sentinel.sentinel_password: Redis at %s: %w", n.redis, err)
	}
	if err != nil {
		return fmt.Errorf("node: Redis at %s does not answer: %w", n.redis, err)
	}
	// The config's policies replace what their types had, as a `kuebus
	// type set` would; the cores apply them within their policy cache's
	// bound (core/service/policy.go).
	for _, p := range n.cfg.Types.Policies() {
		if err := n.store.SetType(ctx, &p); err != nil {
			return fmt.Errorf("node: types.%s: store the policy: %w", p.Type, err)
		}
	}
	if n.coreConn, err = n.connect("core"); err != nil {
		return err
	}
	// The stream is there before core's first event, so it keeps them all.
	if err := n.ensureEventStream(ctx); err != nil {
		return err
	}
	cfg := service.Config{
		Store:           n.store,
		Conn:            n.coreConn,
		Subjects:        n.subj,
		Logger:          n.log,
		ShutdownTimeout: n.cfg.ShutdownTimeout,
		StallLimit:      n.cfg.StallLimit,
		Retention:       n.cfg.Retention.Core(),
	}
	if n.nats != nil {
		// Beside the embedded server: events nobody would receive are
		// not encoded nor sent.
		cfg.Listening = n.nats.Interest
	}
	if n.opts.Service != nil {
		n.opts.Service(&cfg)
	}
	if n.svc, err = service.New(cfg); err != nil {
		return fmt.Errorf("node: core: %w", err)
	}
	return nil
}

// redisConn is the config's Redis section in redisstore's terms.
func redisConn(r clusterconfig.Redis) redisstore.Conn {
	c := redisstore.Conn{URL: r.URL}
	if s := r.Sentinel; s != nil {
		c.Sentinel = &redisstore.Sentinel{
			Master: s.Master, Addrs: s.Addrs, Password: s.Password,
			SentinelUsername: s.SentinelUsername, SentinelPassword: s.SentinelPassword,
		}
	}
	if cl := r.Cluster; cl != nil {
		c.Cluster = &redisstore.Cluster{Addrs: cl.Addrs, Password: cl.Password}
	}
	return c
}
