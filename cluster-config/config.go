package clusterconfig

import (
	"encoding/base64"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Roles a node can run.
const (
	RoleCore     = "core"     // the core service, the only Redis client
	RolePromoter = "promoter" // a member of the memberlist ring; the leader promotes and rescues
	RoleHTTP     = "http"     // the HTTP API
	RoleNATS     = "nats"     // an embedded NATS server, routed to the others
	RoleOutbox   = "outbox"   // on the ring's leader, kuebus-outbox's relay (docs/outbox.md)
)

// Roles lists every role, in the order a node starts them.
var Roles = []string{RoleNATS, RoleCore, RolePromoter, RoleHTTP, RoleOutbox}

// Memberlist presets: memberlist's own default configurations.
const (
	PresetLocal = "local" // DefaultLocalConfig: loopback, 200ms probe timeout, suspicion multiplier 3
	PresetLAN   = "lan"   // DefaultLANConfig: 500ms probe timeout, suspicion multiplier 4
	PresetWAN   = "wan"   // DefaultWANConfig: 5s probes, 3s probe timeout, multiplier 6
)

// Defaults.
const (
	NATSListenDefault       = "127.0.0.1:4222"
	NATSClusterNameDefault  = "kuebus"
	MemberlistBindDefault   = "127.0.0.1:7946"
	MemberlistPresetDefault = PresetLAN
	HTTPListenDefault       = "127.0.0.1:8080"
	HTTPSessionTTLDefault   = 12 * time.Hour
	RedisPrefixDefault      = "kuebus"
	ShutdownTimeoutDefault  = 10 * time.Second
	StallLimitDefault       = 1
	LogLevelDefault         = "info"
	LogFormatDefault        = "json"
)

// Config is one node's configuration. Each field's YAML path is its yaml
// tag under its parents'; its environment variable is KUEBUS_ and the path
// in upper case with _ for . (KUEBUS_REDIS_URL for redis.url), unless an
// env tag names another. Lists are comma-separated in variables.
type Config struct {
	// Name is the node's name: its name in the memberlist ring (the alive
	// member with the lowest name leads) and its NATS server's name. One
	// token of [A-Za-z0-9_-]. Required.
	Name string `yaml:"name" env:"KUEBUS_NODE_NAME"`
	// Roles are what the node runs: core, promoter, http, nats, outbox.
	// Required.
	Roles []string `yaml:"roles"`
	// Prefix is the subject prefix of the deployment ("acme" makes
	// acme.core.create). Default: none.
	Prefix string `yaml:"prefix"`
	// RedisPrefix starts every Redis key. Default "kuebus".
	RedisPrefix string `yaml:"redis_prefix"`
	// ShutdownTimeout bounds how long requests and jobs in flight may run
	// on after a stop signal. Default 10s.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// StallLimit is the core role's stall limit: how many times a job's
	// lease may run out and the job go back without using an attempt, for
	// jobs whose spec sets no stall_limit; each later stall is a failed
	// attempt. 1 … 1000000; absent or 0 means 1.
	StallLimit int        `yaml:"stall_limit"`
	NATS       NATS       `yaml:"nats"`
	Memberlist Memberlist `yaml:"memberlist"`
	Redis      Redis      `yaml:"redis"`
	HTTP       HTTP       `yaml:"http"`
	Log        Log        `yaml:"log"`
	// Retention is the core role's default retention of finished jobs, by
	// type: see Retention. Default: none (kept).
	Retention Retention `yaml:"retention"`
	// Types are job types' policies, which the core role stores at start:
	// see Types. Default: none.
	Types Types `yaml:"types"`
	// Cleaner tunes the promoter leader's cleaner, which applies Retention.
	Cleaner Cleaner `yaml:"cleaner"`
	// Events makes the events durable: see Events. Default: off.
	Events Events `yaml:"events"`
	// Outbox is the outbox role's relay: see Outbox. Default: none.
	Outbox Outbox `yaml:"outbox"`

	// envSet records the paths that environment variables set, and by
	// which, so that an error can name the variable.
	envSet map[string]string
}

// NATS says which NATS the node uses: its own embedded server (the nats
// role), or external servers.
type NATS struct {
	Embedded *EmbeddedNATS `yaml:"embedded,omitempty"`
	External *ExternalNATS `yaml:"external,omitempty"`
}

// EmbeddedNATS is the server a node with the nats role runs in-process.
type EmbeddedNATS struct {
	// Listen is the client address HOST:PORT. Default "127.0.0.1:4222".
	// An address other machines reach needs token or users (or insecure).
	Listen string `yaml:"listen"`
	// ClusterListen is the HOST:PORT other servers' routes connect to.
	// Default: none, a server of its own. An address other machines reach
	// needs route_user and route_password (or insecure).
	ClusterListen string `yaml:"cluster_listen"`
	// Routes are the other servers' cluster addresses,
	// nats-route://host:port. Default: none.
	Routes []string `yaml:"routes"`
	// ClusterName names the NATS cluster; all servers share it. Default
	// "kuebus".
	ClusterName string `yaml:"cluster_name"`
	// Token locks the server with one token: every client presenting it is
	// an admin. It excludes users. Default: none.
	Token string `yaml:"token"`
	// Users lock the server with named users, each with a role (admin,
	// core, promoter, worker, producer, viewer). Not settable by variable.
	// Default: none. The node's own parts log in through in-process users
	// of their roles, which need no secret.
	Users []NATSUser `yaml:"users"`
	// RouteUser and RoutePassword authenticate routes: asked of the servers
	// that connect, presented to the ones dialled; the same on every
	// server. Default: none.
	RouteUser     string `yaml:"route_user"`
	RoutePassword string `yaml:"route_password"`
	// TLS serves clients over TLS; ClusterTLS the routes. Default: none.
	TLS        *ServerTLS `yaml:"tls,omitempty"`
	ClusterTLS *ServerTLS `yaml:"cluster_tls,omitempty"`
	// Insecure allows listen and cluster_listen addresses that other
	// machines reach without authentication. Default false.
	Insecure bool `yaml:"insecure"`
}

// NATSUser is one user of the embedded server: a name with a password, or
// a name (for messages) with an nkey, the public user key (U...) whose seed
// the client holds. Its inbox prefix is [prefix.]_INBOX.<name>, or
// [prefix.]_INBOX.<nkey> for an nkey user.
type NATSUser struct {
	Name     string `yaml:"name"`
	Password string `yaml:"password"`
	Nkey     string `yaml:"nkey"`
	Role     string `yaml:"role"`
}

// ServerTLS is the server side of TLS: its certificate and key, and the
// CA that signed the other side's certificates; Verify asks every client
// for one (routes always do when ca is set). Files in PEM.
type ServerTLS struct {
	Cert   string `yaml:"cert"`
	Key    string `yaml:"key"`
	CA     string `yaml:"ca"`
	Verify bool   `yaml:"verify"`
}

// ExternalNATS is a NATS cluster run apart from kuebus.
type ExternalNATS struct {
	// URLs are the servers, nats:// or tls:// (more than one for a
	// cluster; the client learns the others from the servers too). Required.
	URLs []string `yaml:"urls"`
	// User and Password, or Token, or NkeySeedFile, or CredsFile (a JWT
	// and nkey .creds file): at most one way to authenticate.
	User         string `yaml:"user"`
	Password     string `yaml:"password"`
	Token        string `yaml:"token"`
	NkeySeedFile string `yaml:"nkey_seed_file"`
	CredsFile    string `yaml:"creds_file"`
	TLS          *TLS   `yaml:"tls,omitempty"`
}

// TLS is the client side of TLS to NATS: CA to trust the servers, and Cert
// with Key for mutual TLS. Files in PEM.
type TLS struct {
	CA   string `yaml:"ca"`
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
}

// Memberlist configures the node's membership of the promoter ring.
type Memberlist struct {
	// Bind is the IP:PORT memberlist listens on, UDP and TCP. Default
	// "127.0.0.1:7946". An address other machines reach needs secret_key
	// (or insecure).
	Bind string `yaml:"bind"`
	// Advertise is the IP:PORT the other members reach this node at.
	// Default: the bind address, or with 0.0.0.0 this machine's first
	// private IP.
	Advertise string `yaml:"advertise"`
	// Seeds are HOST:PORT memberlist addresses of other members.
	Seeds []string `yaml:"seeds"`
	// Preset is memberlist's base configuration: local, lan or wan.
	// Default "lan".
	Preset string `yaml:"preset"`
	// ProbeInterval, ProbeTimeout and SuspicionMult override the preset's
	// failure detection: a dead member is declared dead about a probe
	// interval plus SuspicionMult × ProbeInterval after it died. Default:
	// the preset's.
	ProbeInterval time.Duration `yaml:"probe_interval"`
	ProbeTimeout  time.Duration `yaml:"probe_timeout"`
	SuspicionMult int           `yaml:"suspicion_mult"`
	// SecretKey encrypts and authenticates the gossip: base64 of 16, 24 or
	// 32 random bytes (openssl rand -base64 32), the same on every member.
	// A node without it cannot join the ring, so cannot lead. Default: none.
	SecretKey string `yaml:"secret_key"`
	// Insecure allows a bind address other machines reach without
	// secret_key. Default false.
	Insecure bool `yaml:"insecure"`
}

// Key decodes SecretKey; nil when it is empty. Validate has checked it.
func (m Memberlist) Key() []byte {
	key, err := base64.StdEncoding.DecodeString(m.SecretKey)
	if err != nil {
		return nil
	}
	return key
}

// Redis is where the jobs live: exactly one of URL (one server), Sentinel
// (a master set watched by Sentinels) and Cluster.
type Redis struct {
	// URL is redis://[user:password@]host:port/db, rediss:// for TLS, or
	// unix:///path.
	URL      string        `yaml:"url"`
	Sentinel *Sentinel     `yaml:"sentinel,omitempty"`
	Cluster  *RedisCluster `yaml:"cluster,omitempty"`
	// WaitReplicas is how many replicas must have each change before core
	// answers: after every script that changes the queue core runs WAIT on
	// the master that ran it, and answers unavailable when fewer replicas
	// acknowledged within WaitTimeout (the change is made but may not
	// survive a failover; a producer retries with its unique_key). Default
	// 0: no WAIT, and a failover can lose the last acknowledged changes.
	// See docs/reliability.md.
	WaitReplicas int `yaml:"wait_replicas"`
	// WaitTimeout bounds each WAIT: 1ms … 2s, required with WaitReplicas.
	// Default: none.
	WaitTimeout time.Duration `yaml:"wait_timeout"`
}

// Sentinel names a master set and the Sentinels that watch it.
type Sentinel struct {
	Master   string   `yaml:"master"`
	Addrs    []string `yaml:"addrs"`    // HOST:PORT of each Sentinel
	Password string   `yaml:"password"` // the master's and replicas' password
	// SentinelPassword is the Sentinels' own password (their requirepass),
	// which may differ from the servers'; with SentinelUsername, the
	// password of that ACL user of the Sentinels. Default: none, the
	// Sentinels take connections without a password.
	SentinelPassword string `yaml:"sentinel_password"`
	// SentinelUsername is the Sentinels' ACL user; it needs
	// SentinelPassword. Default: none (the default user).
	SentinelUsername string `yaml:"sentinel_username"`
}

// RedisCluster lists some nodes of a Redis Cluster; the client finds the
// others.
type RedisCluster struct {
	Addrs    []string `yaml:"addrs"`
	Password string   `yaml:"password"`
}

// HTTP configures the http role: the HTTP API, dashboard and /metrics.
type HTTP struct {
	// Listen is the HOST:PORT of the HTTP API. Default "127.0.0.1:8080";
	// an address other machines reach needs token or basic (or
	// insecure_bind).
	Listen string `yaml:"listen"`
	// Token is the bearer token the API and dashboard require. Default:
	// none.
	Token string `yaml:"token"`
	// Basic is USER:PASSWORD of basic auth for the API and dashboard.
	// Default: none.
	Basic string `yaml:"basic"`
	// MetricsToken is the bearer token /metrics requires instead of the
	// API's credentials; MetricsOpen serves /metrics without any. Default:
	// the API's credentials.
	MetricsToken string `yaml:"metrics_token"`
	MetricsOpen  bool   `yaml:"metrics_open"`
	// InsecureBind allows a listen address other machines reach without
	// token or basic. Default false.
	InsecureBind bool `yaml:"insecure_bind"`
	// TLSCert and TLSKey are PEM files of the certificate (with its chain)
	// and its key; with both the API serves HTTPS only. Default: none.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
	// SessionKey signs the dashboard's session cookies: base64 of 32 or
	// more random bytes. Nodes that share it accept each other's cookies
	// (several http nodes behind one address). Default: random per
	// process, so a restart signs everyone out.
	SessionKey string `yaml:"session_key"`
	// SessionTTL is how long a dashboard login lasts. Default 12h.
	SessionTTL time.Duration `yaml:"session_ttl"`
	// BasePath mounts the API, the dashboard and /metrics under a path,
	// e.g. /admin/queues (the dashboard is then at /admin/queues/).
	// Default: none, at /.
	BasePath string `yaml:"base_path"`
	// Users sign in to the API and the dashboard (basic auth or the login
	// form) with a role each: admin, worker, producer or viewer, which
	// allows over HTTP what the NATS role allows over NATS. On a node
	// whose embedded NATS is locked, its password users (of those roles)
	// are HTTP users too, with their passwords and roles; these add more
	// (an nkey user's HTTP password, say), under other names. Variable:
	// NAME:ROLE:PASSWORD,... Default: none.
	Users []HTTPUser `yaml:"users"`
}

// HTTPUser is one user of the HTTP API.
type HTTPUser struct {
	Name     string `yaml:"name"`
	Password string `yaml:"password"`
	Role     string `yaml:"role"`
}

// HTTPRoles are the roles an HTTP user may have: core and promoter are
// the node's own parts, which call no route.
var HTTPRoles = []string{"admin", "worker", "producer", "viewer"}

// NATSLocked reports whether the node's embedded NATS takes only clients
// with credentials (nats.embedded.token or users).
func (c *Config) NATSLocked() bool {
	e := c.NATS.Embedded
	return c.Has(RoleNATS) && e != nil && (e.Token != "" || len(e.Users) > 0)
}

// HTTPUsers are the users who sign in to the node's HTTP API: the
// password users of its locked embedded NATS whose role is one of
// HTTPRoles, then http.users.
func (c *Config) HTTPUsers() []HTTPUser {
	var users []HTTPUser
	if c.NATSLocked() {
		for _, u := range c.NATS.Embedded.Users {
			if u.Password != "" && slices.Contains(HTTPRoles, u.Role) {
				users = append(users, HTTPUser{Name: u.Name, Password: u.Password, Role: u.Role})
			}
		}
	}
	return append(users, c.HTTP.Users...)
}

// HTTPToken is the bearer token of the node's HTTP API, an admin's:
// http.token, or else the token of its locked embedded NATS.
func (c *Config) HTTPToken() string {
	if c.HTTP.Token == "" && c.NATSLocked() {
		return c.NATS.Embedded.Token
	}
	return c.HTTP.Token
}

// Log configures the node's log.
type Log struct {
	// Level is debug, info, warn or error. Default "info".
	Level string `yaml:"level"`
	// Format is json or text. Default "json".
	Format string `yaml:"format"`
}

// Has reports whether the node runs role.
func (c *Config) Has(role string) bool { return slices.Contains(c.Roles, role) }

// NeedsConn reports whether the node needs a NATS connection: every role
// but nats does.
func (c *Config) NeedsConn() bool {
	return c.Has(RoleCore) || c.Has(RolePromoter) || c.Has(RoleHTTP)
}

// Unused lists the sections given, in the file or by variables, for
// roles the node does not run: Validate checks them, the node does not
// use them. A node logs them at start, so that a section meant for this
// node (an http.listen without the http role) is not ignored silently.
func (c *Config) Unused() []string {
	var out []string
	for _, s := range []struct {
		name, role string
		given      bool
	}{
		{"memberlist", RolePromoter, given(c.Memberlist)},
		{"cleaner", RolePromoter, given(c.Cleaner)},
		{"redis", RoleCore, given(c.Redis)},
		{"retention", RoleCore, given(c.Retention)},
		{"types", RoleCore, given(c.Types)},
		{"http", RoleHTTP, given(c.HTTP)},
		{"outbox", RoleOutbox, given(c.Outbox)},
	} {
		if s.given && !c.Has(s.role) {
			out = append(out, s.name+" (role "+s.role+")")
		}
	}
	return out
}

// given reports whether a section was set: is not its zero value.
func given(section any) bool { return !reflect.ValueOf(section).IsZero() }

// FillDefaults fills in the defaults of the sections the roles use, as
// Load does, for a config built in code (kuebus dev, the bench, tests).
func (c *Config) FillDefaults() { c.withDefaults() }

// withDefaults fills in the defaults of the sections the roles use, and
// of the sections given for other roles, which Validate checks too.
func (c *Config) withDefaults() {
	if c.RedisPrefix == "" {
		c.RedisPrefix = RedisPrefixDefault
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = ShutdownTimeoutDefault
	}
	if c.StallLimit == 0 {
		c.StallLimit = StallLimitDefault
	}
	if c.Log.Level == "" {
		c.Log.Level = LogLevelDefault
	}
	if c.Log.Format == "" {
		c.Log.Format = LogFormatDefault
	}
	if c.Has(RoleNATS) {
		if c.NATS.Embedded == nil {
			c.NATS.Embedded = &EmbeddedNATS{}
		}
		e := c.NATS.Embedded
		if e.Listen == "" {
			e.Listen = NATSListenDefault
		}
		if e.ClusterName == "" {
			e.ClusterName = NATSClusterNameDefault
		}
	}
	if c.Has(RolePromoter) || given(c.Memberlist) {
		if c.Memberlist.Bind == "" {
			c.Memberlist.Bind = MemberlistBindDefault
		}
		if c.Memberlist.Preset == "" {
			c.Memberlist.Preset = MemberlistPresetDefault
		}
	}
	if c.Has(RoleHTTP) || given(c.HTTP) {
		if c.HTTP.Listen == "" {
			c.HTTP.Listen = HTTPListenDefault
		}
		if c.HTTP.SessionTTL == 0 {
			c.HTTP.SessionTTL = HTTPSessionTTLDefault
		}
	}
	c.Events.withDefaults(c.embeddedServers())
}

// Redacted returns a copy with passwords and tokens replaced, to print.
func (c *Config) Redacted() *Config {
	r := *c
	hide := func(s *string) {
		if *s != "" {
			*s = "xxxxx"
		}
	}
	if e := c.NATS.Embedded; e != nil {
		x := *e
		hide(&x.Token)
		hide(&x.RoutePassword)
		x.Users = slices.Clone(e.Users)
		for i := range x.Users {
			hide(&x.Users[i].Password)
		}
		r.NATS.Embedded = &x
	}
	hide(&r.Memberlist.SecretKey)
	if e := c.NATS.External; e != nil {
		x := *e
		hide(&x.Password)
		hide(&x.Token)
		r.NATS.External = &x
	}
	r.Redis.URL = redactURL(c.Redis.URL)
	hide(&r.Outbox.DSN) // a DSN's password has no one syntax to mask
	hide(&r.HTTP.Token)
	hide(&r.HTTP.MetricsToken)
	hide(&r.HTTP.SessionKey)
	r.HTTP.Users = slices.Clone(c.HTTP.Users)
	for i := range r.HTTP.Users {
		hide(&r.HTTP.Users[i].Password)
	}
	if user, _, ok := strings.Cut(c.HTTP.Basic, ":"); ok {
		r.HTTP.Basic = user + ":xxxxx"
	}
	if s := c.Redis.Sentinel; s != nil {
		x := *s
		hide(&x.Password)
		hide(&x.SentinelPassword)
		r.Redis.Sentinel = &x
	}
	if cl := c.Redis.Cluster; cl != nil {
		x := *cl
		hide(&x.Password)
		r.Redis.Cluster = &x
	}
	return &r
}
