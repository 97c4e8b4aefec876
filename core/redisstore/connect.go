package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Conn says which Redis to reach: exactly one of URL, Sentinel and
// Cluster. It is what a node's config gives, without go-redis's types, so
// that the packages that assemble a node need not import go-redis.
type Conn struct {
	// URL is redis://[user:password@]host:port/db, rediss:// for TLS, or
	// unix:///path: a standalone server.
	URL string
	// Sentinel reaches the master of a set the Sentinels watch, and follows
	// it through failovers.
	Sentinel *Sentinel
	// Cluster reaches a Redis Cluster.
	Cluster *Cluster
}

// Sentinel names a master set and the Sentinels that watch it.
type Sentinel struct {
	Master   string
	Addrs    []string // HOST:PORT of each Sentinel
	Password string   // the master's and replicas' password
	// SentinelPassword is the Sentinels' own password (their
	// requirepass), or SentinelUsername's with an ACL user; "" for
	// Sentinels that take connections without one.
	SentinelUsername string
	SentinelPassword string
}

// Cluster lists some nodes of a Redis Cluster; the client finds the others.
type Cluster struct {
	Addrs    []string
	Password string
}

// String says where c points, without passwords, for messages.
func (c Conn) String() string {
	switch {
	case c.Sentinel != nil:
		return fmt.Sprintf("master %s of Sentinels %s", c.Sentinel.Master, strings.Join(c.Sentinel.Addrs, ","))
	case c.Cluster != nil:
		return "cluster " + strings.Join(c.Cluster.Addrs, ",")
	}
	if u, err := url.Parse(c.URL); err == nil && u.User != nil {
		return u.Redacted()
	}
	return c.URL
}

// Redis is a connection (a pool) to the Redis a Conn names, with kuebus's
// client options (ApplyOptions). It is the one way code outside this
// package reaches Redis: it opens stores on it, and gives the bench the
// few server-level reads and deletes it needs (client.go).
type Redis struct {
	rdb      redis.UniversalClient
	where    string
	addr     string    // host:port of a standalone server; "" otherwise
	topo     *topology // a Cluster's (topology.go); nil otherwise
	sentinel *Sentinel // a Sentinel set's; nil otherwise
}

// Open returns a connection to the Redis c names. It does not dial yet:
// Ping checks that Redis answers, LoadScripts loads the scripts. It fails
// only on a URL go-redis cannot read. For a Cluster it starts the goroutine
// that follows failovers (topology.go), which Close stops.
func Open(c Conn) (*Redis, error) {
	r := &Redis{where: c.String()}
	switch {
	case c.Sentinel != nil:
		sn := *c.Sentinel
		sn.Addrs = slices.Clone(sn.Addrs)
		r.sentinel = &sn
		opts := &redis.FailoverOptions{
			MasterName:       c.Sentinel.Master,
			SentinelAddrs:    c.Sentinel.Addrs,
			SentinelUsername: c.Sentinel.SentinelUsername,
			SentinelPassword: c.Sentinel.SentinelPassword,
			Password:         c.Sentinel.Password,
		}
		ApplyOptions(opts)
		r.rdb = redis.NewFailoverClient(opts)
	case c.Cluster != nil:
		opts := &redis.ClusterOptions{Addrs: slices.Clone(c.Cluster.Addrs), Password: c.Cluster.Password}
		ApplyOptions(opts)
		cc := redis.NewClusterClient(opts)
		r.rdb, r.topo = cc, newTopology(cc)
		r.topo.start()
	default:
		opts, err := ParseURL(c.URL)
		if err != nil {
			return nil, err
		}
		r.rdb, r.addr = redis.NewClient(opts), opts.Addr
	}
	return r, nil
}

// String says where r points, without passwords.
func (r *Redis) String() string { return r.where }

// Addr is the HOST:PORT of a standalone server (a URL's), "" for Sentinel
// and Cluster.
func (r *Redis) Addr() string { return r.addr }

// Store returns a store on r; cfg.Client is set to r's. Closing r ends it.
// On a Cluster the store waits for r's slot map reload before it follows a
// MOVED reply (Store.eval).
func (r *Redis) Store(cfg Config) (*Store, error) {
	cfg.Client = r.rdb
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	s.topo = r.topo
	return s, nil
}

// ErrSentinelAuth is a Sentinel's refusal of the Sentinel credentials
// (Sentinel.SentinelUsername and SentinelPassword): none given to a
// Sentinel that requires a password, or the wrong one.
var ErrSentinelAuth = errors.New("redisstore: Sentinel authentication failed")

// Ping checks that Redis answers. When the answer is an authentication
// error on a Sentinel set, it asks each Sentinel itself, so that the error
// says who refused the password: go-redis reports Sentinels that refuse it
// as "all sentinels specified in configuration are unreachable", followed
// by the same NOAUTH or WRONGPASS a master gives when it refuses the
// servers' password. A Sentinel's refusal is ErrSentinelAuth.
func (r *Redis) Ping(ctx context.Context) error {
	err := r.rdb.Ping(ctx).Err()
	if err == nil {
		return nil
	}
	if r.sentinel != nil && redis.IsAuthError(err) {
		if serr := r.sentinelAuth(ctx); serr != nil {
			return serr
		}
		return fmt.Errorf("redis ping: the master refused the servers' password (the Sentinels accepted theirs): %w", err)
	}
	return fmt.Errorf("redis ping: %w", err)
}

// pingRetry is the pause between two pings of WaitReady.
const pingRetry = 200 * time.Millisecond

// WaitReady pings Redis until it answers or ctx ends, and returns the last
// ping's error then. A process that starts while a Cluster master fails
// over asks a node of the dead master's slots until its replica took them
// over (seconds), and a Redis that is still loading its data answers
// LOADING: both are passing, so they are waited out, where one ping would
// fail the start. A refused password is final: it is returned at once.
func (r *Redis) WaitReady(ctx context.Context) error {
	for {
		err := r.Ping(ctx)
		if err == nil || redis.IsAuthError(err) || errors.Is(err, ErrSentinelAuth) {
			return err
		}
		t := time.NewTimer(pingRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// sentinelAuth sends PING, with the Sentinel credentials, to each Sentinel,
// and returns ErrSentinelAuth with the refusals when one refuses them; nil
// when none does.
func (r *Redis) sentinelAuth(ctx context.Context) error {
	sn := r.sentinel
	var refused []error
	for _, addr := range sn.Addrs {
		c := redis.NewSentinelClient(&redis.Options{
			Addr: addr, Username: sn.SentinelUsername, Password: sn.SentinelPassword, MaxRetries: -1,
		})
		err := c.Ping(ctx).Err()
		_ = c.Close()
		if redis.IsAuthError(err) {
			refused = append(refused, fmt.Errorf("%s: %w", addr, err))
		}
	}
	if len(refused) == 0 {
		return nil
	}
	why := "the Sentinels refused the Sentinel password"
	switch {
	case sn.SentinelPassword == "":
		why = "the Sentinels require a password of their own and none was given"
	case sn.SentinelUsername != "":
		why = fmt.Sprintf("the Sentinels refused user %q with the Sentinel password", sn.SentinelUsername)
	}
	return fmt.Errorf("%w: %s: %w", ErrSentinelAuth, why, errors.Join(refused...))
}

// Close stops following the Cluster's failovers and closes the
// connections. Stores on r must not be used after it.
func (r *Redis) Close() error {
	if r.topo != nil {
		r.topo.close()
	}
	return r.rdb.Close()
}

// CheckURL returns go-redis's error for a URL it cannot read, unwrapped, so
// that a flag's message can name the flag; nil for a good one.
func CheckURL(u string) error {
	_, err := redis.ParseURL(u)
	return err
}
