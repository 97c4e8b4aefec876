package redisstore

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

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
	rdb   redis.UniversalClient
	where string
	addr  string    // host:port of a standalone server; "" otherwise
	topo  *topology // a Cluster's (topology.go); nil otherwise
}

// Open returns a connection to the Redis c names. It does not dial yet:
// Ping checks that Redis answers, LoadScripts loads the scripts. It fails
// only on a URL go-redis cannot read. For a Cluster it starts the goroutine
// that follows failovers (topology.go), which Close stops.
func Open(c Conn) (*Redis, error) {
	r := &Redis{where: c.String()}
	switch {
	case c.Sentinel != nil:
		opts := &redis.FailoverOptions{MasterName: c.Sentinel.Master, SentinelAddrs: c.Sentinel.Addrs, Password: c.Sentinel.Password}
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

// Ping checks that Redis answers.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis ping: %w", err)
	}
	return nil
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
