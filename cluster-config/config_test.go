package clusterconfig_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/conf"
	"github.com/stretchr/testify/require"

	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core"
)

// env is a fake environment for Load.
func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func TestTheShippedConfigsLoad(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.yaml")
	require.NoError(t, err)
	examples, err := filepath.Glob("examples/*.yaml")
	require.NoError(t, err)
	files = append(files, examples...)
	require.Len(t, files, 6)
	// The examples bind wider than loopback and take their gossip key (and
	// the HTTP API's token) from the environment, as their comments say.
	secrets := env(map[string]string{"KUEBUS_MEMBERLIST_SECRET_KEY": "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
		"KUEBUS_HTTP_TOKEN": "t0ken"})
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			c, err := clusterconfig.Load(f, secrets)
			require.NoError(t, err)
			require.NotEmpty(t, c.Name)
		})
	}
	t.Run("the examples without their gossip key are refused", func(t *testing.T) {
		t.Parallel()
		for _, f := range examples {
			_, err := clusterconfig.Load(f, nil)
			require.ErrorContains(t, err, `memberlist.bind: "0.0.0.0:7946" reaches other machines`, f)
		}
	})
	t.Run("the three local nodes are locked", func(t *testing.T) {
		t.Parallel()
		for _, name := range []string{"node-a", "node-b", "node-c"} {
			c, err := clusterconfig.Load(name+".yaml", nil)
			require.NoError(t, err)
			e := c.NATS.Embedded
			require.Len(t, e.Users, 4, name)
			require.Len(t, c.HTTPUsers(), 4, "%s: they sign in over HTTP too", name)
			require.NotEmpty(t, e.RoutePassword, name)
			require.Len(t, c.Memberlist.Key(), 32, name)
		}
	})

	t.Run("the three local nodes route to and seed each other", func(t *testing.T) {
		t.Parallel()
		names := []string{"node-a", "node-b", "node-c"}
		clusterAddrs := map[string]string{}
		ringAddrs := map[string]string{}
		nodes := map[string]*clusterconfig.Config{}
		for _, name := range names {
			c, err := clusterconfig.Load(name+".yaml", nil)
			require.NoError(t, err)
			require.Equal(t, name, c.Name)
			// Every role but outbox, which needs an application's database.
			require.ElementsMatch(t, slices.DeleteFunc(slices.Clone(clusterconfig.Roles),
				func(r string) bool { return r == clusterconfig.RoleOutbox }), c.Roles)
			require.Equal(t, clusterconfig.PresetLocal, c.Memberlist.Preset)
			require.Equal(t, "redis://127.0.0.1:6379/0", c.Redis.URL)
			clusterAddrs[name] = c.NATS.Embedded.ClusterListen
			ringAddrs[name] = c.Memberlist.Bind
			nodes[name] = c
		}
		for _, name := range names {
			var routes, seeds []string
			for _, other := range names {
				if other != name {
					routes = append(routes, "nats-route://"+clusterAddrs[other])
					seeds = append(seeds, ringAddrs[other])
				}
			}
			require.Equal(t, routes, nodes[name].NATS.Embedded.Routes, name)
			require.Equal(t, seeds, nodes[name].Memberlist.Seeds, name)
		}
	})
}

// Not parallel: it sets an environment variable the confs read.
func TestTheExampleNATSServerConfsParse(t *testing.T) {
	t.Setenv("KUEBUS_NATS_PASSWORD", "secret")
	for i := 1; i <= 3; i++ {
		m, err := conf.ParseFile(filepath.Join("examples", "nats-server-"+string(rune('0'+i))+".conf"))
		require.NoError(t, err)
		cluster, ok := m["cluster"].(map[string]any)
		require.True(t, ok, "no cluster block")
		require.Len(t, cluster["routes"], 2)
		routeTLS, ok := cluster["tls"].(map[string]any)
		require.True(t, ok, "routes without TLS")
		require.Equal(t, true, routeTLS["verify"], "routes that do not verify certificates")
		auth := m["authorization"].(map[string]any)
		require.Equal(t, "secret", auth["password"])
	}
}

func TestLoadNamesUnknownFields(t *testing.T) {
	t.Parallel()
	yaml := "name: a\nroles: [core]\nredis:\n  url: redis://r:6379\n  sentinal:\n    master: m\nnats:\n  external: {urls: [nats://n:4222]}\nfoo: 1\n"
	_, err := clusterconfig.Parse([]byte(yaml), "node.yaml", nil)
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, `node.yaml:5: unknown field "sentinal" in redis (known: url, sentinel, cluster, wait_replicas, wait_timeout)`)
	require.Contains(t, msg, `node.yaml:9: unknown field "foo" at the top level`)
}

func TestLoadReportsBadValuesByLine(t *testing.T) {
	t.Parallel()
	_, err := clusterconfig.Parse([]byte("name: a\nshutdown_timeout: soon\n"), "node.yaml", nil)
	require.ErrorContains(t, err, "node.yaml:2: cannot unmarshal")
	_, err = clusterconfig.Parse([]byte("name: [a\n"), "node.yaml", nil)
	require.ErrorContains(t, err, "node.yaml:")
}

func TestEnvironmentOverridesTheFile(t *testing.T) {
	t.Parallel()
	c, err := clusterconfig.Load("node-a.yaml", env(map[string]string{
		"KUEBUS_NODE_NAME":                 "node-x",
		"KUEBUS_REDIS_URL":                 "redis://10.0.0.9:6380/2",
		"KUEBUS_MEMBERLIST_SEEDS":          " 127.0.0.1:1, ,127.0.0.1:2 ",
		"KUEBUS_MEMBERLIST_PROBE_INTERVAL": "2s",
		"KUEBUS_MEMBERLIST_SUSPICION_MULT": "5",
		"KUEBUS_STALL_LIMIT":               "3",
		"KUEBUS_REDIS_WAIT_REPLICAS":       "1",
		"KUEBUS_REDIS_WAIT_TIMEOUT":        "100ms",
		"KUEBUS_HTTP_LISTEN":               "",  // empty: ignored
		"KUEBUS_NATS_URL":                  "x", // the CLI's, not a node field
	}))
	require.NoError(t, err)
	require.Equal(t, "node-x", c.Name)
	require.Equal(t, "redis://10.0.0.9:6380/2", c.Redis.URL)
	require.Equal(t, []string{"127.0.0.1:1", "127.0.0.1:2"}, c.Memberlist.Seeds)
	require.Equal(t, 2*time.Second, c.Memberlist.ProbeInterval)
	require.Equal(t, 5, c.Memberlist.SuspicionMult)
	require.Equal(t, 3, c.StallLimit)
	require.Equal(t, 1, c.Redis.WaitReplicas)
	require.Equal(t, 100*time.Millisecond, c.Redis.WaitTimeout)
	require.Equal(t, "127.0.0.1:8080", c.HTTP.Listen)
	require.Equal(t, "127.0.0.1:4222", c.NATS.Embedded.Listen, "untouched")
}

func TestEnvironmentAloneIsAConfig(t *testing.T) {
	t.Parallel()
	c, err := clusterconfig.Load("", env(map[string]string{
		"KUEBUS_NODE_NAME":                        "worker-box-1",
		"KUEBUS_ROLES":                            "core,promoter",
		"KUEBUS_NATS_EXTERNAL_URLS":               "nats://n1:4222,nats://n2:4222",
		"KUEBUS_NATS_EXTERNAL_TLS_CA":             "/ca.pem",
		"KUEBUS_REDIS_SENTINEL_MASTER":            "mymaster",
		"KUEBUS_REDIS_SENTINEL_ADDRS":             "s1:26379,s2:26379",
		"KUEBUS_REDIS_SENTINEL_PASSWORD":          "pw",
		"KUEBUS_REDIS_SENTINEL_SENTINEL_USERNAME": "kuebus",
		"KUEBUS_REDIS_SENTINEL_SENTINEL_PASSWORD": "spw",
		"KUEBUS_MEMBERLIST_ADVERTISE":             "10.1.2.3:7946",
		"KUEBUS_SHUTDOWN_TIMEOUT":                 "30s",
		"KUEBUS_LOG_LEVEL":                        "debug",
		"KUEBUS_NATS_EXTERNAL_CREDS_FILE":         "",
		"KUEBUS_MEMBERLIST_PROBE_INTERVAL":        "",
	}))
	require.NoError(t, err)
	require.Equal(t, []string{"core", "promoter"}, c.Roles)
	require.Equal(t, []string{"nats://n1:4222", "nats://n2:4222"}, c.NATS.External.URLs)
	require.Equal(t, "/ca.pem", c.NATS.External.TLS.CA)
	require.Equal(t, &clusterconfig.Sentinel{
		Master: "mymaster", Addrs: []string{"s1:26379", "s2:26379"}, Password: "pw",
		SentinelUsername: "kuebus", SentinelPassword: "spw",
	}, c.Redis.Sentinel)
	require.Equal(t, clusterconfig.MemberlistBindDefault, c.Memberlist.Bind)
	require.Equal(t, clusterconfig.PresetLAN, c.Memberlist.Preset)
	require.Equal(t, 30*time.Second, c.ShutdownTimeout)
	require.Equal(t, "kuebus", c.RedisPrefix)
	require.Equal(t, clusterconfig.StallLimitDefault, c.StallLimit)
	require.Nil(t, c.NATS.Embedded)

	r := c.Redacted()
	require.Equal(t, "xxxxx", r.Redis.Sentinel.Password)
	require.Equal(t, "xxxxx", r.Redis.Sentinel.SentinelPassword)
	require.Equal(t, "kuebus", r.Redis.Sentinel.SentinelUsername, "a user name is no secret")
	require.Equal(t, "pw", c.Redis.Sentinel.Password, "Redacted changed the original")
	require.Equal(t, "spw", c.Redis.Sentinel.SentinelPassword, "Redacted changed the original")
}

func TestEnvironmentErrorsNameTheVariable(t *testing.T) {
	t.Parallel()
	_, err := clusterconfig.Load("node-a.yaml", env(map[string]string{
		"KUEBUS_MEMBERLIST_SUSPICION_MULT": "three",
		"KUEBUS_SHUTDOWN_TIMEOUT":          "10",
	}))
	require.ErrorContains(t, err, `$KUEBUS_MEMBERLIST_SUSPICION_MULT (memberlist.suspicion_mult): "three" is not a whole number`)
	require.ErrorContains(t, err, `$KUEBUS_SHUTDOWN_TIMEOUT (shutdown_timeout): "10" is not a duration`)

	_, err = clusterconfig.Load("node-a.yaml", env(map[string]string{"KUEBUS_MEMBERLIST_BIND": "localhost:7946"}))
	require.ErrorContains(t, err, `memberlist.bind ($KUEBUS_MEMBERLIST_BIND): "localhost:7946": the host must be an IP address`)

	_, err = clusterconfig.Load("", env(map[string]string{
		"KUEBUS_NODE_NAME": "n", "KUEBUS_ROLES": "core", "KUEBUS_NATS_EXTERNAL_URLS": "nats://n:4222",
		"KUEBUS_REDIS_SENTINEL_MASTER": "m", "KUEBUS_REDIS_SENTINEL_ADDRS": "s:26379",
		"KUEBUS_REDIS_SENTINEL_SENTINEL_USERNAME": "u",
	}))
	require.ErrorContains(t, err, `redis.sentinel.sentinel_username ($KUEBUS_REDIS_SENTINEL_SENTINEL_USERNAME): needs redis.sentinel.sentinel_password`)
}

func TestValidateNamesTheField(t *testing.T) {
	t.Parallel()
	const noRedis = "name: n\nroles: [core, promoter]\nnats: {external: {urls: [nats://n:4222]}}\n"
	const base = noRedis + "redis: {url: redis://r:6379}\n"
	const httpNode = "name: a\nroles: [http]\nnats: {external: {urls: [nats://n:4222]}}\n"
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"a missing name", "roles: [nats]", "config: name: required"},
		{"a name with a dot", "name: a.b\nroles: [nats]", `config: name: "a.b": character '.'`},
		{"no roles", "name: a", "config: roles: required: one or more of nats, core, promoter, http"},
		{"an unknown role", "name: a\nroles: [nats, worker]", `config: roles: "worker" is not a role`},
		{"a role twice", "name: a\nroles: [nats, nats]", `config: roles: "nats" is listed twice`},
		{"a bad prefix", base + "prefix: a*b", `config: prefix: subject prefix "a*b"`},
		{"a redis prefix with a brace", base + "redis_prefix: a{b}", `config: redis_prefix: "a{b}" must not contain braces`},
		{"a bad log level", base + "log: {level: loud}", `config: log.level: "loud" is not debug`},
		{"a negative stall limit", base + "stall_limit: -1", "config: stall_limit: -1 is outside 1..1000000"},
		{"a cleaner limit over the most", base + "cleaner: {limit: 100001}", "config: cleaner.limit: 100001 is outside 1..100000"},
		{"a negative cleaner interval", base + "cleaner: {interval: -1s}", "config: cleaner.interval: -1s is negative"},
		{"no NATS at all", "name: a\nroles: [core]\nredis: {url: redis://r:6379}", "config: nats.external.urls: required"},
		{"external NATS with the nats role", "name: a\nroles: [nats]\nnats: {external: {urls: [nats://n:4222]}}", "config: nats.external: a node with the nats role uses its embedded server"},
		{"embedded NATS without the role", "name: a\nroles: [core]\nnats: {embedded: {listen: ':4222'}, external: {urls: [nats://n:4222]}}\nredis: {url: redis://r:6379}", "config: nats.embedded: the node has no nats role"},
		{"routes without a cluster listen", "name: a\nroles: [nats]\nnats: {embedded: {routes: [nats-route://b:6222]}}", "config: nats.embedded.routes: routes need nats.embedded.cluster_listen"},
		{"a route that is not a URL", "name: a\nroles: [nats]\nnats: {embedded: {cluster_listen: ':6222', routes: ['b:6222']}}", `config: nats.embedded.routes: "b:6222" is not a URL`},
		{"a bad listen address", "name: a\nroles: [nats]\nnats: {embedded: {listen: '4222'}}", `config: nats.embedded.listen: "4222" is not HOST:PORT`},
		{"an external URL with a bad scheme", "name: a\nroles: [core]\nnats: {external: {urls: ['http://n:4222']}}\nredis: {url: redis://r:6379}", `config: nats.external.urls: "http://n:4222": the scheme must be nats://, tls://, ws:// or wss://, not http://`},
		{"an external URL without a scheme", "name: a\nroles: [core]\nnats: {external: {urls: ['n:4222']}}\nredis: {url: redis://r:6379}", `config: nats.external.urls: "n:4222" is not a URL like nats://HOST:PORT`},
		{"an external URL's password is not repeated", "name: a\nroles: [core]\nnats: {external: {urls: ['http://u:secret@n:4222']}}\nredis: {url: redis://r:6379}", `"http://u:xxxxx@n:4222"`},
		{"a redis URL that does not parse does not show its password", noRedis + "redis: {url: 'redis://u:secret@r:port'}", `config: redis.url: parse "redis://u:xxxxx@r:port": invalid port`},
		{"two ways to authenticate", "name: a\nroles: [core]\nnats: {external: {urls: [nats://n:4222], token: t, creds_file: /c}}\nredis: {url: redis://r:6379}", "config: nats.external: token and creds_file: use one way"},
		{"a password without user", "name: a\nroles: [core]\nnats: {external: {urls: [nats://n:4222], password: p}}\nredis: {url: redis://r:6379}", "config: nats.external.password: needs nats.external.user"},
		{"a TLS cert without key", "name: a\nroles: [core]\nnats: {external: {urls: [nats://n:4222], tls: {cert: /c}}}\nredis: {url: redis://r:6379}", "config: nats.external.tls: cert and key go together"},
		{"a memberlist bind host name", base + "memberlist: {bind: 'localhost:7946'}", `config: memberlist.bind: "localhost:7946": the host must be an IP address`},
		{"a seed without port", base + "memberlist: {seeds: [node-b]}", `config: memberlist.seeds: "node-b" is not HOST:PORT`},
		{"an unknown preset", base + "memberlist: {preset: fast}", `config: memberlist.preset: "fast" is not local, lan or wan`},
		{"a probe timeout longer than the interval", base + "memberlist: {probe_interval: 1s, probe_timeout: 2s}", "config: memberlist.probe_timeout: 2s must be shorter than probe_interval 1s"},
		{"no redis for core", "name: a\nroles: [core]\nnats: {external: {urls: [nats://n:4222]}}", "config: redis: required for the core role"},
		{"two kinds of redis", noRedis + "redis: {url: redis://r:6379, cluster: {addrs: ['r:6379']}}", "config: redis: url and cluster: give exactly one"},
		{"a redis URL with another scheme", noRedis + "redis: {url: 'http://r:6379'}", `config: redis.url: "http://r:6379": scheme must be`},
		{"a redis URL's password is not repeated", noRedis + "redis: {url: 'http://u:secret@r:6379'}", `"http://u:xxxxx@r:6379"`},
		{"a sentinel without master", noRedis + "redis: {sentinel: {addrs: ['s:26379']}}", "config: redis.sentinel.master: required"},
		{"a sentinel without addresses", noRedis + "redis: {sentinel: {master: m}}", "config: redis.sentinel.addrs: required"},
		{"a Sentinel user without a Sentinel password", noRedis + "redis: {sentinel: {master: m, addrs: ['s:26379'], password: p, sentinel_username: u}}",
			"config: redis.sentinel.sentinel_username: needs redis.sentinel.sentinel_password"},
		{"a cluster address without port", noRedis + "redis: {cluster: {addrs: [r1]}}", `config: redis.cluster.addrs: "r1" is not HOST:PORT`},
		{"a negative wait_replicas", noRedis + "redis: {url: redis://r:6379, wait_replicas: -1, wait_timeout: 100ms}", "config: redis.wait_replicas: -1 is negative"},
		{"wait_replicas without wait_timeout", noRedis + "redis: {url: redis://r:6379, wait_replicas: 1}", "config: redis.wait_timeout: required with redis.wait_replicas 1"},
		{"wait_timeout without wait_replicas", noRedis + "redis: {url: redis://r:6379, wait_timeout: 100ms}", "config: redis.wait_timeout: 100ms is set but redis.wait_replicas is 0"},
		{"a negative wait_timeout", noRedis + "redis: {url: redis://r:6379, wait_replicas: 1, wait_timeout: -1ms}", "config: redis.wait_timeout: -1ms is negative"},
		{"a wait_timeout under a millisecond", noRedis + "redis: {url: redis://r:6379, wait_replicas: 1, wait_timeout: 500us}", "config: redis.wait_timeout: 500µs is under 1ms"},
		{"a wait_timeout over the read timeout", noRedis + "redis: {url: redis://r:6379, wait_replicas: 1, wait_timeout: 5s}", "config: redis.wait_timeout: 5s is over 2s"},
		{"a NATS listen wider than loopback without auth", "name: a\nroles: [nats]\nnats: {embedded: {listen: '0.0.0.0:4222'}}",
			`config: nats.embedded.listen: "0.0.0.0:4222" reaches other machines, and the server would take any client: lock it with nats.embedded.users or nats.embedded.token, or set nats.embedded.insecure: true`},
		{"a NATS listen on every interface without auth", "name: a\nroles: [nats]\nnats: {embedded: {listen: ':4222'}}", `nats.embedded.listen: ":4222" reaches other machines`},
		{"a cluster listen wider than loopback without route auth", "name: a\nroles: [nats]\nnats: {embedded: {token: t, cluster_listen: '10.0.0.1:6222'}}",
			`config: nats.embedded.cluster_listen: "10.0.0.1:6222" reaches other machines, and any server could route to it: set nats.embedded.route_user and route_password`},
		{"a memberlist bind wider than loopback without key", base + "memberlist: {bind: '0.0.0.0:7946'}",
			`config: memberlist.bind: "0.0.0.0:7946" reaches other machines, and anyone could join the ring and lead it: set memberlist.secret_key`},
		{"a secret key that is not base64", base + "memberlist: {secret_key: 'not base64!'}", `config: memberlist.secret_key: not base64`},
		{"a secret key of the wrong size", base + "memberlist: {secret_key: c2hvcnQ=}", `config: memberlist.secret_key: 5 bytes: it must be base64 of 16, 24 or 32 bytes`},
		{"a user with an unknown role", "name: a\nroles: [nats]\nnats: {embedded: {users: [{name: u, password: p, role: boss}]}}",
			`config: nats.embedded.users[0].role: "boss" is not a role: use admin, core, promoter, worker, producer, viewer`},
		{"a user without password or nkey", "name: a\nroles: [nats]\nnats: {embedded: {users: [{name: u, role: viewer}]}}", `config: nats.embedded.users[0]: needs a password or an nkey`},
		{"a user with a bad nkey", "name: a\nroles: [nats]\nnats: {embedded: {users: [{name: u, nkey: SUXYZ, role: viewer}]}}", `config: nats.embedded.users[0].nkey: "SUXYZ" is not a public user key`},
		{"a user twice", "name: a\nroles: [nats]\nnats: {embedded: {users: [{name: u, password: p, role: viewer}, {name: u, password: q, role: admin}]}}", `config: nats.embedded.users[1].name: "u" is also users[0]`},
		{"a token beside users", "name: a\nroles: [nats]\nnats: {embedded: {token: t, users: [{name: u, password: p, role: viewer}]}}", `config: nats.embedded.token: excludes nats.embedded.users`},
		{"a route user without password", "name: a\nroles: [nats]\nnats: {embedded: {cluster_listen: '127.0.0.1:6222', route_user: r}}", `config: nats.embedded.route_user: route_user and route_password go together`},
		{"a missing certificate file", "name: a\nroles: [nats]\nnats: {embedded: {tls: {cert: /nonexistent/cert.pem, key: /nonexistent/key.pem}}}", `config: nats.embedded.tls.cert: stat /nonexistent/cert.pem: no such file or directory`},
		{"client verification without a CA", "name: a\nroles: [nats]\nnats: {embedded: {tls: {cert: /c, key: /k, verify: true}}}", `config: nats.embedded.tls.verify: needs ca`},
		{"an unknown field of a user", "name: a\nroles: [nats]\nnats: {embedded: {users: [{name: u, pass: p}]}}", `unknown field "pass" in nats.embedded.users[] (known: name, password, nkey, role)`},
		{"a bad http listen", "name: a\nroles: [http]\nnats: {external: {urls: [nats://n:4222]}}\nhttp: {listen: nowhere}", `config: http.listen: "nowhere" is not HOST:PORT`},
		{"an http TLS cert without its key", httpNode + "http: {tls_cert: config.go}", "config: http.tls_cert: and http.tls_key go together: give both files or neither"},
		{"a missing http TLS file", httpNode + "http: {tls_cert: config.go, tls_key: /nonexistent/key.pem}", "config: http.tls_key: stat /nonexistent/key.pem: no such file or directory"},
		{"a short session key", httpNode + "http: {session_key: c2hvcnQ=}", "config: http.session_key: must be base64 of 32 or more random bytes"},
		{"a negative session TTL", httpNode + "http: {session_ttl: -1h}", "config: http.session_ttl: -1h0m0s: must be at least 1s"},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := clusterconfig.Parse([]byte(tc.yaml), "node.yaml", nil)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestSectionsOfRolesTheNodeDoesNotRunAreChecked(t *testing.T) {
	t.Parallel()
	const coreNode = "name: a\nroles: [core]\nnats: {external: {urls: [nats://n:4222]}}\nredis: {url: redis://r:6379}\n"
	const httpNode = "name: a\nroles: [http]\nnats: {external: {urls: [nats://n:4222]}}\n"
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"an http listen on every interface without auth, without the http role", coreNode + "http: {listen: '0.0.0.0:8080'}",
			`config: http.listen: "0.0.0.0:8080" reaches other machines and there is no auth`},
		{"a bad http listen without the http role", coreNode + "http: {listen: nowhere}", `config: http.listen: "nowhere" is not HOST:PORT`},
		{"a short session key without the http role", coreNode + "http: {session_key: c2hvcnQ=}", "config: http.session_key: must be base64"},
		{"a wide memberlist bind without key, without the promoter role", coreNode + "memberlist: {bind: '0.0.0.0:7946'}",
			`config: memberlist.bind: "0.0.0.0:7946" reaches other machines`},
		{"an unknown preset without the promoter role", coreNode + "memberlist: {preset: fast}", `config: memberlist.preset: "fast" is not local, lan or wan`},
		{"a cleaner limit over the most without the promoter role", coreNode + "cleaner: {limit: 100001}", "config: cleaner.limit: 100001 is outside 1..100000"},
		{"a redis URL with another scheme without the core role", httpNode + "redis: {url: 'http://r:6379'}", `config: redis.url: "http://r:6379": scheme must be`},
		{"two kinds of redis without the core role", httpNode + "redis: {url: redis://r:6379, cluster: {addrs: ['r:6379']}}", "config: redis: url and cluster: give exactly one"},
		{"a retention limit without the core role", httpNode + "retention: {email: {complete: {count: -1}}}", "config: retention.email.complete.count"},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := clusterconfig.Parse([]byte(tc.yaml), "node.yaml", nil)
			require.ErrorContains(t, err, tc.want)
		})
	}

	t.Run("a base file with every section serves a node of one role, which lists the others as unused", func(t *testing.T) {
		t.Parallel()
		base := "name: a\nnats: {external: {urls: [nats://n:4222]}}\nredis: {url: redis://r:6379}\n" +
			"memberlist: {bind: '127.0.0.1:7946', preset: local}\nhttp: {listen: '127.0.0.1:8080'}\nretention: {email: {complete: {count: 10}}}\n"
		c, err := clusterconfig.Parse([]byte(base), "node.yaml", env(map[string]string{"KUEBUS_ROLES": "http"}))
		require.NoError(t, err)
		require.Equal(t, []string{"memberlist (role promoter)", "redis (role core)", "retention (role core)"}, c.Unused())
		c, err = clusterconfig.Parse([]byte(base), "node.yaml", env(map[string]string{"KUEBUS_ROLES": "core,promoter,http"}))
		require.NoError(t, err)
		require.Empty(t, c.Unused())
	})

	t.Run("a node without a section of a role it does not run needs none", func(t *testing.T) {
		t.Parallel()
		c, err := clusterconfig.Parse([]byte(httpNode), "node.yaml", nil)
		require.NoError(t, err)
		require.Empty(t, c.Unused())
	})
}

func TestWiderListenersWithAuthOrInsecureLoad(t *testing.T) {
	t.Parallel()
	for _, yaml := range []string{
		"name: a\nroles: [nats]\nnats: {embedded: {listen: '0.0.0.0:4222', token: t}}",
		"name: a\nroles: [nats]\nnats: {embedded: {listen: '0.0.0.0:4222', users: [{name: u, password: p, role: admin}]}}",
		"name: a\nroles: [nats]\nnats: {embedded: {listen: '0.0.0.0:4222', insecure: true, cluster_listen: '0.0.0.0:6222'}}",
		"name: a\nroles: [nats]\nnats: {embedded: {token: t, cluster_listen: '0.0.0.0:6222', route_user: r, route_password: p}}",
		"name: a\nroles: [promoter]\nnats: {external: {urls: [nats://n:4222]}}\nmemberlist: {bind: '0.0.0.0:7946', secret_key: MDEyMzQ1Njc4OWFiY2RlZg==}",
		"name: a\nroles: [promoter]\nnats: {external: {urls: [nats://n:4222]}}\nmemberlist: {bind: '0.0.0.0:7946', insecure: true}",
	} {
		_, err := clusterconfig.Parse([]byte(yaml), "node.yaml", nil)
		require.NoError(t, err, yaml)
	}
}

func TestDefaultListenersAreLoopback(t *testing.T) {
	t.Parallel()
	c, err := clusterconfig.Parse([]byte("name: a\nroles: [nats, promoter, http]"), "node.yaml", nil)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:4222", c.NATS.Embedded.Listen)
	require.Equal(t, "127.0.0.1:7946", c.Memberlist.Bind)
	require.Equal(t, "127.0.0.1:8080", c.HTTP.Listen)
}

func TestUsersFromTheEnvironment(t *testing.T) {
	t.Parallel()
	c, err := clusterconfig.Load("node-a.yaml", env(map[string]string{
		"KUEBUS_NATS_EMBEDDED_USERS": "ops:admin:pw:with:colons, w1:worker:s3cret",
	}))
	require.NoError(t, err)
	require.Equal(t, []clusterconfig.NATSUser{
		{Name: "ops", Role: "admin", Password: "pw:with:colons"},
		{Name: "w1", Role: "worker", Password: "s3cret"},
	}, c.NATS.Embedded.Users)

	_, err = clusterconfig.Load("node-a.yaml", env(map[string]string{"KUEBUS_NATS_EMBEDDED_USERS": "ops:admin"}))
	require.ErrorContains(t, err, "$KUEBUS_NATS_EMBEDDED_USERS (nats.embedded.users): user 1 is not NAME:ROLE:PASSWORD")
	_, err = clusterconfig.Load("node-a.yaml", env(map[string]string{"KUEBUS_NATS_EMBEDDED_USERS": "ops:boss:pw"}))
	require.ErrorContains(t, err, `nats.embedded.users[0].role ($KUEBUS_NATS_EMBEDDED_USERS)`)
}

func TestRedactedHidesTheNATSAndRingSecrets(t *testing.T) {
	t.Parallel()
	c, err := clusterconfig.Load("node-a.yaml", nil)
	require.NoError(t, err)
	r := c.Redacted()
	require.Equal(t, "xxxxx", r.NATS.Embedded.RoutePassword)
	require.Equal(t, "xxxxx", r.Memberlist.SecretKey)
	for _, u := range r.NATS.Embedded.Users {
		require.Equal(t, "xxxxx", u.Password)
	}
	require.Equal(t, "demo-admin-password", c.NATS.Embedded.Users[0].Password, "Redacted changed the original")
}

// TestRetentionFromTheFileAndTheVariable: both forms give the same
// defaults, in core's terms; each bad entry is named by its path (and
// variable).
func TestRetentionFromTheFileAndTheVariable(t *testing.T) {
	t.Parallel()
	const base = "name: n\nroles: [core]\nnats: {external: {urls: [nats://n:4222]}}\nredis: {url: redis://r:6379}\n"
	want := map[string]core.TypeRetention{
		"*":     {Complete: core.Retention{Age: 24 * time.Hour}, Cancelled: core.Retention{Age: time.Hour}},
		"email": {Complete: core.Retention{Count: 1000}, Failed: core.Retention{Age: 7 * 24 * time.Hour, Count: 100}},
		"sms":   {Cancelled: core.Retention{Count: 10}},
	}
	c, err := clusterconfig.Parse([]byte(base+`retention:
  "*":
    complete: {age: 24h}
    cancelled: {age: 1h}
  sms:
    cancelled: {count: 10}
  email:
    complete: {count: 1000}
    failed: {age: 168h, count: 100}
`), "n.yaml", nil)
	require.NoError(t, err)
	require.Equal(t, want, c.Retention.Core())
	c, err = clusterconfig.Parse([]byte(base), "n.yaml", env(map[string]string{
		"KUEBUS_RETENTION": "*.complete.age=24h, email.complete.count=1000,email.failed.age=168h,email.failed.count=100,*.cancelled.age=1h,sms.cancelled.count=10",
	}))
	require.NoError(t, err)
	require.Equal(t, want, c.Retention.Core())
	c, err = clusterconfig.Parse([]byte(base), "n.yaml", nil)
	require.NoError(t, err)
	require.Nil(t, c.Retention.Core(), "none: every finished job is kept")

	for _, tc := range []struct{ yaml, env, want string }{
		{yaml: "retention: {email: {complete: {age: -1s}}}", want: "config: retention.email.complete.age: -1s is negative"},
		{yaml: "retention: {email: {failed: {count: -3}}}", want: "config: retention.email.failed.count: -3 is negative"},
		{yaml: "retention: {email: {failed: {count: 0}}}", want: "config: retention.email.failed: age and count are both 0"},
		{yaml: "retention: {email: {}}", want: "config: retention.email: none of complete, failed and cancelled is set"},
		{yaml: "retention: {email: {cancelled: {age: 1500us}}}", want: "config: retention.email.cancelled.age: 1.5ms is not a whole number of milliseconds"},
		{yaml: "retention: {a.b: {failed: {count: 1}}}", want: `config: retention.a.b: "a.b" is not a job type`},
		{yaml: "retention: {email: {complete: {size: 1}}}", want: "size"},
		{yaml: "retention: {email: {done: {count: 1}}}", want: "done"},
		{env: "email.complete.count=-1", want: "config: retention.email.complete.count ($KUEBUS_RETENTION): -1 is negative"},
		{env: "email.done.count=1", want: `$KUEBUS_RETENTION (retention): item 1 "email.done.count=1": "done" is not complete, failed or cancelled`},
		{env: "email.complete.age=7d", want: `"7d" is not a duration like 24h`},
		{env: "email=1", want: "is not TYPE.STATE.KEY=VALUE"},
	} {
		var lookup func(string) (string, bool)
		if tc.env != "" {
			lookup = env(map[string]string{"KUEBUS_RETENTION": tc.env})
		}
		_, err := clusterconfig.Parse([]byte(base+tc.yaml), "n.yaml", lookup)
		require.ErrorContains(t, err, tc.want, tc.yaml+tc.env)
	}
}

func TestTheREADMEListsEveryVariable(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	for _, v := range clusterconfig.EnvVars() {
		require.Contains(t, string(readme), "`"+v.Name+"`", "README.md does not document %s (%s)", v.Name, v.Path)
		require.Contains(t, string(readme), "`"+v.Path+"`", "README.md does not document %s", v.Path)
	}
	require.True(t, strings.Contains(string(readme), "KUEBUS_NODE_NAME"))
}

// TestTypesFromTheFileAndTheVariable: both forms give the same policies,
// in core's terms; each bad field is named by its path, as core names it.
func TestTypesFromTheFileAndTheVariable(t *testing.T) {
	t.Parallel()
	const base = "name: n\nroles: [core]\nnats: {external: {urls: [nats://n:4222]}}\nredis: {url: redis://r:6379}\n"
	two := 2
	want := []core.TypePolicy{
		{Type: "api", Rate: &core.Rate{Limit: 100, Per: time.Second}, Aging: &core.Aging{Per: 500 * time.Millisecond}},
		{Type: "email", Concurrency: 5, GroupConcurrency: 1, GroupRate: &core.Rate{Limit: 10, Per: time.Minute},
			Defaults: &core.TypeDefaults{Priority: core.PriorityHigh, MaxAttempts: 3, TTL: 2 * time.Minute, StallLimit: &two}},
	}
	c, err := clusterconfig.Parse([]byte(base+`types:
  email:
    concurrency: 5
    group_concurrency: 1
    group_rate: {limit: 10, per: 1m}
    defaults: {priority: high, max_attempts: 3, ttl: 2m, stall_limit: 2}
  api:
    rate: {limit: 100, per: 1s}
    aging: 500ms
`), "n.yaml", nil)
	require.NoError(t, err)
	require.Equal(t, want, c.Types.Policies())
	c, err = clusterconfig.Parse([]byte(base), "n.yaml", env(map[string]string{
		"KUEBUS_TYPES": "{email: {concurrency: 5, group_concurrency: 1, group_rate: {limit: 10, per: 1m}, " +
			"defaults: {priority: high, max_attempts: 3, ttl: 2m, stall_limit: 2}}, api: {rate: {limit: 100, per: 1s}, aging: 500ms}}",
	}))
	require.NoError(t, err)
	require.Equal(t, want, c.Types.Policies())

	for _, tc := range []struct{ yaml, want string }{
		{"types: {email: {concurrency: -1}}", "config: types.email.concurrency: -1 is outside"},
		{"types: {email: {rate: {limit: 5}}}", "config: types.email.rate.per: 0 ms is outside"},
		{"types: {email: {rate: {limit: 5, per: 1500us}}}", "config: types.email.rate.per: 1.5ms is not a whole number of milliseconds"},
		{"types: {email: {aging: -1s}}", "config: types.email.aging.per: -1000 ms is outside"},
		{"types: {email: {defaults: {priority: soon}}}", "config: types.email.defaults.priority:"},
		{"types: {email: {defaults: {ttl: -1s}}}", "config: types.email.defaults.ttl:"},
		{"types: {a.b: {concurrency: 1}}", "config: types.a.b: \"a.b\" is not a job type"},
		{"types: {email: {burst: 1}}", "burst"},
	} {
		_, err := clusterconfig.Parse([]byte(base+tc.yaml), "n.yaml", nil)
		require.ErrorContains(t, err, tc.want, tc.yaml)
	}
}
