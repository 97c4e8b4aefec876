package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/promoter"
)

// nodeProcess is a `kuebus node` that has said it is ready.
type nodeProcess struct {
	*background
	info nodeInfo
}

// startNode runs `kuebus node --config FILE` with yaml as the file and
// waits until it is ready.
func startNode(t *testing.T, yaml string) *nodeProcess {
	t.Helper()
	path := filepath.Join(t.TempDir(), "node.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o600))
	ready := make(chan nodeInfo, 1)
	ctx := withNodeReadyHook(context.Background(), func(i nodeInfo) { ready <- i })
	b := start(t, ctx, "node", "--config", path)
	select {
	case info := <-ready:
		return &nodeProcess{background: b, info: info}
	case code := <-b.done:
		b.done <- code // for stop
		t.Fatalf("kuebus node exited with %d before it was ready; stderr:\n%s", code, b.stderr.String())
	case <-time.After(waitTimeout):
		t.Fatalf("kuebus node not ready after %s; stderr:\n%s", waitTimeout, b.stderr.String())
	}
	return nil
}

func TestNode(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts NATS, memberlist and core on a real Redis")
	}
	t.Parallel()
	rdb := nodetest.NewRedis(t)
	redisPrefix := nodetest.Prefix(t, rdb)
	common := fmt.Sprintf("prefix: acme\nredis_prefix: %s\nredis: {url: %q}\nlog: {level: debug, format: text}\n",
		redisPrefix, nodetest.RedisURL(t))

	// node-a embeds NATS and serves HTTP; node-b connects to node-a's NATS
	// as an external server and joins node-a's ring.
	a := startNode(t, common+`name: node-a
roles: [nats, core, promoter, http]
nats: {embedded: {listen: '127.0.0.1:0'}}
memberlist: {bind: '127.0.0.1:0', preset: local}
http: {listen: '127.0.0.1:0'}
`)
	require.NotEmpty(t, a.info.RingAddr)
	require.True(t, strings.HasPrefix(a.info.HTTPURL, "http://127.0.0.1:"), a.info.HTTPURL)
	b := startNode(t, common+fmt.Sprintf(`name: node-b
roles: [core, promoter]
nats: {external: {urls: [%q]}}
memberlist: {bind: '127.0.0.1:0', preset: local, seeds: [%q]}
`, a.info.NATSURL, a.info.RingAddr))
	require.Contains(t, b.stderr.String(), "kuebus node ready")
	require.Empty(t, b.info.HTTPURL)

	cli := func(args ...string) result {
		t.Helper()
		return kuebus(t, append(args, "--nats-url", a.info.NATSURL, "--prefix", "acme")...)
	}

	t.Run("kuebus cluster shows the leader and both members", func(t *testing.T) {
		var st promoter.Status
		require.Eventually(t, func() bool {
			r := cli("cluster", "--json")
			if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
				return false
			}
			return len(st.Members) == 2 && st.Members[1].State == promoter.MemberAlive
		}, waitTimeout, 20*time.Millisecond, "the ring did not form")
		require.Equal(t, "node-a", st.Leader)
		require.Equal(t, []string{"node-a", "node-b"}, []string{st.Members[0].Name, st.Members[1].Name})
		require.Equal(t, a.info.RingAddr, st.Members[0].Addr)

		r := cli("cluster")
		require.Equal(t, 0, r.code, r.stderr)
		require.Regexp(t, `(?m)^leader\s+node-a$`, r.stdout)
		require.Regexp(t, `(?m)^self\s+node-[ab]$`, r.stdout)
		require.Regexp(t, `(?m)^NAME\s+ADDR\s+STATE$`, r.stdout)
		require.Regexp(t, `(?m)^node-b\s+127\.0\.0\.1:\d+\s+alive$`, r.stdout)
	})

	t.Run("the leader promotes a delayed job created through the CLI", func(t *testing.T) {
		r := cli("job", "create", "later", "--delay", "100ms")
		require.Equal(t, 0, r.code, r.stderr)
		var job core.Job
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &job))
		client, err := core.NewClient(bustest.Connect(t, a.info.NATSURL), &core.ClientOptions{Prefix: "acme"})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			got, err := client.Get(context.Background(), job.ID)
			return err == nil && got.State == core.StateInactive
		}, waitTimeout, 20*time.Millisecond, "the delayed job was not promoted")
	})

	t.Run("the http role serves the API", func(t *testing.T) {
		resp, err := http.Get(a.info.HTTPURL)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Less(t, resp.StatusCode, 500)
	})

	// node-b stops first: it uses node-a's NATS.
	require.Equal(t, 0, b.stop(t), b.stderr.String())
	require.Contains(t, b.stderr.String(), "kuebus node stopped")
	require.Equal(t, 0, a.stop(t), a.stderr.String())
	require.Contains(t, a.stderr.String(), "kuebus node stopped")

	// Memberlist's Shutdown does not wait for a probe in flight, which ends
	// at its deadline, up to a probe interval later; the leak check after
	// the tests would report it. This is the only test here with a ring.
	require.Eventually(t, func() bool {
		buf := make([]byte, 8<<20)
		return !strings.Contains(string(buf[:runtime.Stack(buf, true)]), "github.com/hashicorp/memberlist.")
	}, waitTimeout, 20*time.Millisecond, "memberlist goroutines remain after the nodes stopped")
}

func TestNodeConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, yaml string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(yaml), 0o600))
		return path
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"an unknown field, by line and section", []string{"--config", write("typo.yaml", "name: a\nroles: [nats]\nnats:\n  embeded: {}\n")},
			`typo.yaml:4: unknown field "embeded" in nats (known: embedded, external)`},
		{"a missing file", []string{"--config", filepath.Join(dir, "missing.yaml")}, "missing.yaml: no such file"},
		{"an HTTP API open to other machines", []string{"--config", write("open.yaml", "name: a\nroles: [nats, http]\nhttp: {listen: '0.0.0.0:8080'}\n")},
			`http.listen: "0.0.0.0:8080" reaches other machines and there is no auth: set http.token or http.basic`},
		{"a NATS listener open to other machines", []string{"--config", write("nats.yaml", "name: a\nroles: [nats]\nnats: {embedded: {listen: '0.0.0.0:4222'}}\n")},
			`nats.embedded.listen: "0.0.0.0:4222" reaches other machines, and the server would take any client: lock it with nats.embedded.users or nats.embedded.token, or set nats.embedded.insecure: true`},
		{"a ring open to other machines", []string{"--config", write("ring.yaml", "name: a\nroles: [nats, promoter]\nmemberlist: {bind: '0.0.0.0:7946'}\n")},
			`memberlist.bind: "0.0.0.0:7946" reaches other machines, and anyone could join the ring and lead it: set memberlist.secret_key`},
		{"a bad gossip key", []string{"--config", write("key.yaml", "name: a\nroles: [nats, promoter]\nmemberlist: {secret_key: c2hvcnQ=}\n")},
			"memberlist.secret_key: 5 bytes: it must be base64 of 16, 24 or 32 bytes"},
		{"an unknown NATS role", []string{"--config", write("role.yaml", "name: a\nroles: [nats]\nnats: {embedded: {users: [{name: u, password: p, role: boss}]}}\n")},
			`nats.embedded.users[0].role: "boss" is not a role: use admin, core, promoter, worker, producer, viewer`},
		{"a missing TLS certificate, by field", []string{"--config", write("tls.yaml", "name: a\nroles: [nats]\nnats: {embedded: {tls: {cert: /nonexistent/cert.pem, key: /nonexistent/key.pem}}}\n")},
			"nats.embedded.tls.cert: stat /nonexistent/cert.pem: no such file or directory"},
		{"a missing creds file, by field", []string{"--config", write("creds.yaml", "name: a\nroles: [promoter]\nnats: {external: {urls: ['nats://127.0.0.1:1'], creds_file: /nonexistent.creds}}\n")},
			"nats.external.creds_file: stat /nonexistent.creds"},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			t.Parallel()
			r := kuebus(t, append([]string{"node"}, tc.args...)...)
			require.Equal(t, exitUsage, r.code, r.stderr)
			require.Contains(t, r.stderr, tc.want)
			require.True(t, strings.HasPrefix(r.stderr, "kuebus: node: "), r.stderr)
			require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
		})
	}

	t.Run("--check prints the config with defaults and without secrets", func(t *testing.T) {
		t.Parallel()
		path := write("ok.yaml", "name: a\nroles: [core, promoter]\nnats: {external: {urls: ['nats://127.0.0.1:1'], user: u, password: hunter2}}\nredis: {url: 'redis://:s3cret@127.0.0.1:6379/0'}\n")
		r := kuebus(t, "node", "--config", path, "--check")
		require.Equal(t, 0, r.code, r.stderr)
		require.NotContains(t, r.stdout, "hunter2")
		require.NotContains(t, r.stdout, "s3cret")
		require.Contains(t, r.stdout, "bind: 127.0.0.1:7946")
		require.Contains(t, r.stdout, "preset: lan")
	})
}

func TestClusterWithoutAPromoter(t *testing.T) {
	t.Parallel()
	ns := bustest.NewServer(t)
	r := kuebus(t, "cluster", "--nats-url", ns.ClientURL())
	require.Equal(t, exitFailure, r.code)
	require.Contains(t, r.stderr, "no promoter node answers at "+ns.ClientURL())
}

func TestANodeSaysWhichSectionsItDoesNotUse(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts an embedded NATS")
	}
	t.Parallel()
	n := startNode(t, `name: lone
roles: [nats]
nats: {embedded: {listen: '127.0.0.1:0'}}
http: {listen: '127.0.0.1:0'}
log: {format: text}
`)
	require.Empty(t, n.info.HTTPURL, "no http role, no HTTP")
	require.Contains(t, n.stderr.String(), `level=WARN msg="config sections of roles this node does not run: checked, not used" node=lone sections="http (role http)"`)
	require.Equal(t, 0, n.stop(t), n.stderr.String())

	path := filepath.Join(t.TempDir(), "wide.yaml")
	require.NoError(t, os.WriteFile(path, []byte("name: wide\nroles: [nats]\nnats: {embedded: {listen: '127.0.0.1:0'}}\nhttp: {listen: '0.0.0.0:8080'}\n"), 0o600))
	r := kuebus(t, "node", "--config", path)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, `config: http.listen: "0.0.0.0:8080" reaches other machines and there is no auth`)
}
