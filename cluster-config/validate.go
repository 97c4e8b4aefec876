package clusterconfig

import (
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/internal/httprule"
)

// Validate checks the config as Load leaves it (with defaults) and
// returns every problem, each naming its field by YAML path, and by
// variable when one set it. It checks every section given, also those of
// roles the node does not run (Unused lists them): one base file can
// serve nodes with different roles, and a mistake in it is named on every
// node that reads it, not only on the one that would trip on it.
func (c *Config) Validate() error {
	v := &validator{c: c}
	v.node()
	v.nats()
	v.events()
	if c.Has(RolePromoter) || given(c.Memberlist) {
		v.memberlist()
	}
	v.cleaner()
	if c.Has(RoleCore) || given(c.Redis) {
		v.redis()
	}
	v.retention()
	v.types()
	if c.Has(RoleHTTP) || given(c.HTTP) {
		v.http()
	}
	if c.Has(RoleOutbox) || given(c.Outbox) {
		v.outbox()
	}
	return errors.Join(v.errs...)
}

type validator struct {
	c    *Config
	errs []error
}

// fail records a problem with the field at path.
func (v *validator) fail(path, format string, args ...any) {
	field := path
	// The variable that set the field, or the list or map it is part of
	// (nats.embedded.users[0].role comes from KUEBUS_NATS_EMBEDDED_USERS,
	// retention.email.complete.age from KUEBUS_RETENTION).
	for p := path; p != ""; {
		if env, ok := v.c.envSet[p]; ok {
			field += " ($" + env + ")"
			break
		}
		i := max(strings.LastIndex(p, "["), strings.LastIndex(p, "."))
		if i < 0 {
			break
		}
		p = p[:i]
	}
	v.errs = append(v.errs, fmt.Errorf("config: %s: %s", field, fmt.Sprintf(format, args...)))
}

func (v *validator) node() {
	c := v.c
	if c.Name == "" {
		v.fail("name", "required: the node's name in the ring, e.g. node-a")
	} else if err := bus.ValidToken(c.Name); err != nil {
		v.fail("name", "%q: %v", c.Name, err)
	}
	if len(c.Roles) == 0 {
		v.fail("roles", "required: one or more of %s", strings.Join(Roles, ", "))
	}
	for i, r := range c.Roles {
		switch {
		case !slices.Contains(Roles, r):
			v.fail("roles", "%q is not a role: use %s", r, strings.Join(Roles, ", "))
		case slices.Index(c.Roles, r) < i:
			v.fail("roles", "%q is listed twice", r)
		}
	}
	if _, err := bus.NewSubjects(c.Prefix); err != nil {
		v.fail("prefix", "%v", strings.TrimPrefix(err.Error(), "bus: "))
	}
	if strings.ContainsAny(c.RedisPrefix, "{} \t\r\n") {
		v.fail("redis_prefix", "%q must not contain braces or spaces", c.RedisPrefix)
	}
	if c.ShutdownTimeout <= 0 {
		v.fail("shutdown_timeout", "%v is not positive", c.ShutdownTimeout)
	}
	if c.StallLimit < 1 || c.StallLimit > core.MaxStallLimit {
		v.fail("stall_limit", "%d is outside 1..%d", c.StallLimit, core.MaxStallLimit)
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		v.fail("log.level", "%q is not debug, info, warn or error", c.Log.Level)
	}
	if c.Log.Format != "json" && c.Log.Format != "text" {
		v.fail("log.format", "%q is not json or text", c.Log.Format)
	}
}

func (v *validator) nats() {
	c := v.c
	if c.Has(RoleNATS) {
		if c.NATS.External != nil {
			v.fail("nats.external", "a node with the nats role uses its embedded server: drop nats.external or the role")
		}
		e := c.NATS.Embedded
		if host, ok := v.hostPort("nats.embedded.listen", e.Listen, true); ok && !bus.LoopbackHost(host) && !e.Insecure && e.Token == "" && len(e.Users) == 0 {
			v.fail("nats.embedded.listen", "%q reaches other machines, and the server would take any client: lock it with nats.embedded.users or nats.embedded.token, or set nats.embedded.insecure: true", e.Listen)
		}
		if e.ClusterListen != "" {
			routeAuth := e.RouteUser != "" || (e.ClusterTLS != nil && e.ClusterTLS.CA != "")
			if host, ok := v.hostPort("nats.embedded.cluster_listen", e.ClusterListen, true); ok && !bus.LoopbackHost(host) && !e.Insecure && !routeAuth {
				v.fail("nats.embedded.cluster_listen", "%q reaches other machines, and any server could route to it: set nats.embedded.route_user and route_password (or cluster_tls with a ca), or nats.embedded.insecure: true", e.ClusterListen)
			}
		} else if len(e.Routes) > 0 {
			v.fail("nats.embedded.routes", "routes need nats.embedded.cluster_listen, the address the other servers' routes reach")
		}
		for _, r := range e.Routes {
			if u, err := url.Parse(r); err != nil || (u.Scheme != "nats-route" && u.Scheme != "nats") || u.Port() == "" {
				v.fail("nats.embedded.routes", "%q is not a URL like nats-route://10.0.0.2:6222", r)
			}
		}
		if strings.ContainsAny(e.ClusterName, " \t\r\n") {
			v.fail("nats.embedded.cluster_name", "%q must not contain spaces", e.ClusterName)
		}
		v.natsAuth(e)
		return
	}
	if c.NATS.Embedded != nil {
		v.fail("nats.embedded", "the node has no nats role: add it to roles, or drop nats.embedded")
	}
	x := c.NATS.External
	if x == nil || len(x.URLs) == 0 {
		if c.NeedsConn() {
			v.fail("nats.external.urls", "required: the NATS servers to connect to (or give the node the nats role to embed one)")
		}
		return
	}
	for _, s := range x.URLs {
		if err := bus.CheckURL(s); err != nil {
			v.fail("nats.external.urls", "%v", err)
		}
	}
	var ways []string
	for _, w := range []struct {
		set  bool
		name string
	}{{x.User != "", "user"}, {x.Token != "", "token"}, {x.NkeySeedFile != "", "nkey_seed_file"}, {x.CredsFile != "", "creds_file"}} {
		if w.set {
			ways = append(ways, w.name)
		}
	}
	if len(ways) > 1 {
		v.fail("nats.external", "%s: use one way to authenticate", strings.Join(ways, " and "))
	}
	if x.Password != "" && x.User == "" {
		v.fail("nats.external.password", "needs nats.external.user")
	}
	if t := x.TLS; t != nil && (t.Cert == "") != (t.Key == "") {
		v.fail("nats.external.tls", "cert and key go together (mutual TLS); for server verification alone give only ca")
	}
}

// natsAuth checks the embedded server's users, token, route credentials
// and TLS files.
func (v *validator) natsAuth(e *EmbeddedNATS) {
	if e.Token != "" && len(e.Users) > 0 {
		v.fail("nats.embedded.token", "excludes nats.embedded.users: give the token's holders an admin user instead")
	}
	seen := map[string]int{}
	for i, u := range e.Users {
		path := fmt.Sprintf("nats.embedded.users[%d]", i)
		if err := bus.ValidToken(u.Name); err != nil {
			v.fail(path+".name", "%q: %v", u.Name, err)
		} else if strings.HasPrefix(u.Name, bus.LocalUserPrefix) {
			v.fail(path+".name", "%q: names starting with %s are the node's own in-process users", u.Name, bus.LocalUserPrefix)
		}
		if j, twice := seen[u.Name]; twice {
			v.fail(path+".name", "%q is also users[%d]", u.Name, j)
		}
		seen[u.Name] = i
		if _, err := bus.ParseRole(u.Role); err != nil {
			v.fail(path+".role", "%v", err)
		}
		switch {
		case u.Password != "" && u.Nkey != "":
			v.fail(path, "give password or nkey, not both")
		case u.Password == "" && u.Nkey == "":
			v.fail(path, "needs a password or an nkey (the public user key, U...)")
		case u.Nkey != "" && !nkeys.IsValidPublicUserKey(u.Nkey):
			v.fail(path+".nkey", "%q is not a public user key (U...): nk -gen user -pubout makes one", u.Nkey)
		}
	}
	if (e.RouteUser == "") != (e.RoutePassword == "") {
		v.fail("nats.embedded.route_user", "route_user and route_password go together")
	}
	v.serverTLS("nats.embedded.tls", e.TLS)
	v.serverTLS("nats.embedded.cluster_tls", e.ClusterTLS)
	if e.ClusterTLS != nil && e.ClusterListen == "" {
		v.fail("nats.embedded.cluster_tls", "needs nats.embedded.cluster_listen")
	}
}

// serverTLS checks that a server's TLS files are given and readable.
func (v *validator) serverTLS(path string, t *ServerTLS) {
	if t == nil {
		return
	}
	if t.Cert == "" || t.Key == "" {
		v.fail(path, "cert and key are required")
	}
	if t.Verify && t.CA == "" {
		v.fail(path+".verify", "needs ca, the CA that signed the clients' certificates")
	}
	for _, f := range []struct{ name, file string }{{"cert", t.Cert}, {"key", t.Key}, {"ca", t.CA}} {
		if f.file == "" {
			continue
		}
		if _, err := os.Stat(f.file); err != nil {
			v.fail(path+"."+f.name, "%v", err)
		}
	}
}

func (v *validator) memberlist() {
	m := v.c.Memberlist
	if host, ok := v.ipPort("memberlist.bind", m.Bind); ok && !bus.LoopbackHost(host) && !m.Insecure && m.SecretKey == "" {
		v.fail("memberlist.bind", "%q reaches other machines, and anyone could join the ring and lead it: set memberlist.secret_key (base64 of 16, 24 or 32 random bytes: openssl rand -base64 32), or memberlist.insecure: true", m.Bind)
	}
	if m.SecretKey != "" {
		if key, err := base64.StdEncoding.DecodeString(m.SecretKey); err != nil {
			v.fail("memberlist.secret_key", "not base64: %v", err)
		} else if n := len(key); n != 16 && n != 24 && n != 32 {
			v.fail("memberlist.secret_key", "%d bytes: it must be base64 of 16, 24 or 32 bytes (openssl rand -base64 32)", n)
		}
	}
	if m.Advertise != "" {
		v.ipPort("memberlist.advertise", m.Advertise)
	}
	for _, s := range m.Seeds {
		v.hostPort("memberlist.seeds", s, false)
	}
	if !slices.Contains([]string{PresetLocal, PresetLAN, PresetWAN}, m.Preset) {
		v.fail("memberlist.preset", "%q is not local, lan or wan", m.Preset)
	}
	if m.ProbeInterval < 0 {
		v.fail("memberlist.probe_interval", "%v is negative", m.ProbeInterval)
	}
	if m.ProbeTimeout < 0 {
		v.fail("memberlist.probe_timeout", "%v is negative", m.ProbeTimeout)
	}
	if m.ProbeInterval > 0 && m.ProbeTimeout >= m.ProbeInterval {
		v.fail("memberlist.probe_timeout", "%v must be shorter than probe_interval %v", m.ProbeTimeout, m.ProbeInterval)
	}
	if m.SuspicionMult < 0 {
		v.fail("memberlist.suspicion_mult", "%d is negative", m.SuspicionMult)
	}
}

func (v *validator) redis() {
	r := v.c.Redis
	var set []string
	if r.URL != "" {
		set = append(set, "url")
	}
	if r.Sentinel != nil {
		set = append(set, "sentinel")
	}
	if r.Cluster != nil {
		set = append(set, "cluster")
	}
	switch len(set) {
	case 0:
		v.fail("redis", "required for the core role: one of redis.url, redis.sentinel, redis.cluster")
		return
	case 1:
	default:
		v.fail("redis", "%s: give exactly one", strings.Join(set, " and "))
		return
	}
	switch {
	case r.URL != "":
		u, err := url.Parse(r.URL)
		switch {
		case err != nil:
			v.fail("redis.url", "%v", redactURL(err.Error())) // url.Parse's error quotes the URL
		case !slices.Contains([]string{"redis", "rediss", "unix"}, u.Scheme):
			v.fail("redis.url", "%q: scheme must be redis://, rediss:// or unix://", redactURL(r.URL))
		case u.Scheme != "unix" && u.Host == "":
			v.fail("redis.url", "%q has no host", redactURL(r.URL))
		}
	case r.Sentinel != nil:
		if r.Sentinel.Master == "" {
			v.fail("redis.sentinel.master", "required: the master set's name, e.g. mymaster")
		}
		if len(r.Sentinel.Addrs) == 0 {
			v.fail("redis.sentinel.addrs", "required: HOST:PORT of one or more Sentinels")
		}
		for _, a := range r.Sentinel.Addrs {
			v.hostPort("redis.sentinel.addrs", a, false)
		}
		if r.Sentinel.SentinelUsername != "" && r.Sentinel.SentinelPassword == "" {
			v.fail("redis.sentinel.sentinel_username", "needs redis.sentinel.sentinel_password (the Sentinels' own password, not the servers')")
		}
	case r.Cluster != nil:
		if len(r.Cluster.Addrs) == 0 {
			v.fail("redis.cluster.addrs", "required: HOST:PORT of one or more cluster nodes")
		}
		for _, a := range r.Cluster.Addrs {
			v.hostPort("redis.cluster.addrs", a, false)
		}
	}
	v.redisWait()
}

// Bounds of redis.wait_timeout, as redisstore.Config.WaitTimeout's: WAIT
// counts whole milliseconds (less would be 0, which waits forever), and
// its reply must come within the connection's 3 s read timeout.
const (
	redisWaitTimeoutMin = time.Millisecond
	redisWaitTimeoutMax = 2 * time.Second
)

// redisWait checks redis.wait_replicas and redis.wait_timeout (the same
// rules redisstore.New applies, named by their YAML paths here).
func (v *validator) redisWait() {
	n, d := v.c.Redis.WaitReplicas, v.c.Redis.WaitTimeout
	switch {
	case n < 0:
		v.fail("redis.wait_replicas", "%d is negative: 0 waits for no replica", n)
	case d < 0:
		v.fail("redis.wait_timeout", "%v is negative", d)
	case n == 0 && d > 0:
		v.fail("redis.wait_timeout", "%v is set but redis.wait_replicas is 0: set both, or neither", d)
	case n > 0 && d == 0:
		v.fail("redis.wait_timeout", "required with redis.wait_replicas %d (e.g. 100ms): WAIT without a timeout can block forever", n)
	case n > 0 && d < redisWaitTimeoutMin:
		v.fail("redis.wait_timeout", "%v is under %v: WAIT counts whole milliseconds", d, redisWaitTimeoutMin)
	case d > redisWaitTimeoutMax:
		v.fail("redis.wait_timeout", "%v is over %v: the reply must come within the connection's read timeout", d, redisWaitTimeoutMax)
	}
}

func (v *validator) http() {
	c := v.c
	h := c.HTTP
	v.hostPort("http.listen", h.Listen, true)
	v.httpUsers()
	// The bind rule counts the users and the token the node's locked NATS
	// gives the HTTP API too.
	eff := h
	eff.Users, eff.Token = c.HTTPUsers(), c.HTTPToken()
	eff.Check(func(field string) string { return "http." + field }, func(field, msg string) { v.fail("http."+field, "%s", msg) })
	if c.NATSLocked() && eff.Token == "" && eff.Basic == "" && len(eff.Users) == 0 {
		v.fail("http", "nats.embedded is locked, so the HTTP API must be too, but no user signs in over HTTP (nkey users have no password; core and promoter are no HTTP roles): give http.users, http.token or http.basic")
	}
}

// httpUsers checks http.users: names, passwords, roles, and that no name
// is taken by another user of the HTTP API.
func (v *validator) httpUsers() {
	c := v.c
	taken := map[string]string{}
	if c.NATSLocked() {
		for i, u := range c.NATS.Embedded.Users {
			taken[u.Name] = fmt.Sprintf("nats.embedded.users[%d], which signs in over HTTP with its own password and role", i)
		}
	}
	if user, _, ok := strings.Cut(c.HTTP.Basic, ":"); ok && user != "" {
		taken[user] = "the user of http.basic"
	}
	for i, u := range c.HTTP.Users {
		path := fmt.Sprintf("http.users[%d]", i)
		if err := bus.ValidToken(u.Name); err != nil {
			v.fail(path+".name", "%q: %v", u.Name, err)
		} else if other, ok := taken[u.Name]; ok {
			v.fail(path+".name", "%q is also %s", u.Name, other)
		}
		taken[u.Name] = fmt.Sprintf("http.users[%d]", i)
		if u.Password == "" {
			v.fail(path+".password", "required: what user %q signs in with", u.Name)
		}
		if !slices.Contains(HTTPRoles, u.Role) {
			v.fail(path+".role", "%q is not an HTTP role: use %s", u.Role, strings.Join(HTTPRoles, ", "))
		}
	}
}

// Check applies the rules of an HTTP section, the one place they are
// written: Validate calls it for the http role, and `kuebus dev` for its
// --http-* flags, which fill an HTTP section. The bind rule and the form of
// a base path are the HTTP API's (internal/httprule, which httpapi.New
// applies too); Check names the fields they involve.
//
// name turns a field's YAML name ("basic") into the caller's word for it
// ("http.basic", "--http-basic"); fail gets each problem, with the field
// it is about, in order. A Listen of "" (dev serving no HTTP) skips the
// bind rule; Listen's own form is the caller's to check.
func (h HTTP) Check(name func(field string) string, fail func(field, msg string)) {
	if h.Basic != "" {
		if user, pass, ok := strings.Cut(h.Basic, ":"); !ok || user == "" || pass == "" {
			fail("basic", "expected USER:PASSWORD")
		}
	}
	if h.MetricsOpen && h.MetricsToken != "" {
		fail("metrics_open", "contradicts "+name("metrics_token")+": give one")
	}
	tlsFiles := true
	if (h.TLSCert == "") != (h.TLSKey == "") {
		fail("tls_cert", "and "+name("tls_key")+" go together: give both files or neither")
		tlsFiles = false
	}
	for _, f := range []struct{ field, file string }{{"tls_cert", h.TLSCert}, {"tls_key", h.TLSKey}} {
		if f.file == "" {
			continue
		}
		if _, err := os.Stat(f.file); err != nil {
			fail(f.field, err.Error())
			tlsFiles = false
		}
	}
	if tlsFiles && h.TLSCert != "" {
		// Loaded here so that files that are no PEM pair are refused
		// before NATS and Redis start, not after.
		if _, err := tls.LoadX509KeyPair(h.TLSCert, h.TLSKey); err != nil {
			fail("tls_cert", "is no PEM pair with "+name("tls_key")+": "+err.Error())
		}
	}
	if h.SessionKey != "" {
		if key, err := base64.StdEncoding.DecodeString(h.SessionKey); err != nil || len(key) < HTTPSessionKeyMinBytes {
			fail("session_key", fmt.Sprintf("must be base64 of %d or more random bytes (openssl rand -base64 32)", HTTPSessionKeyMinBytes))
		}
	}
	if h.SessionTTL < time.Second {
		fail("session_ttl", fmt.Sprintf("%v: must be at least 1s", h.SessionTTL))
	}
	if err := httprule.BasePath(h.BasePath); err != nil {
		fail("base_path", err.Error())
	}
	if h.Listen == "" {
		return
	}
	auth := h.Token != "" || h.Basic != "" || len(h.Users) > 0
	if err := httprule.Bind(h.Listen, auth, h.InsecureBind); errors.Is(err, httprule.ErrInsecureBind) {
		fail("listen", fmt.Sprintf("%q reaches other machines and there is no auth: set %s or %s, or allow it with %s",
			h.Listen, name("token"), name("basic"), name("insecure_bind")))
	}
}

// HTTPSessionKeyMinBytes is the shortest http.session_key, decoded.
const HTTPSessionKeyMinBytes = 32

// hostPort checks a HOST:PORT; an empty host means every interface, which
// only a listen address may use.
func (v *validator) hostPort(path, addr string, listen bool) (string, bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		v.fail(path, "%q is not HOST:PORT", addr)
		return "", false
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 || (n == 0 && !listen) {
		v.fail(path, "%q: port must be a number from 1 to 65535", addr)
		return "", false
	}
	if host == "" && !listen {
		v.fail(path, "%q has no host", addr)
		return "", false
	}
	return host, true
}

// ipPort checks an IP:PORT, which memberlist needs for the addresses it
// binds and advertises, and returns the IP.
func (v *validator) ipPort(path, addr string) (string, bool) {
	host, ok := v.hostPort(path, addr, true)
	if ok && net.ParseIP(host) == nil {
		v.fail(path, "%q: the host must be an IP address", addr)
		return "", false
	}
	return host, ok
}

// redactURL hides a password in a URL, also one that does not parse.
func redactURL(s string) string { return bus.RedactURL(s) }
