package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

func TestDevLockedWithAToken(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts NATS, core and the promoter on a real Redis")
	}
	t.Parallel()
	rdb := nodetest.NewRedis(t)
	prefix := nodetest.Prefix(t, rdb)
	dev := startDev(t, "--nats-token", "s3cret", "--nats-listen", "127.0.0.1:0",
		"--redis-url", nodetest.RedisURL(t), "--redis-prefix", prefix, "--data-dir", t.TempDir())

	r := kuebus(t, "stats", "--nats-url", dev.info.NATSURL)
	require.Equal(t, exitFailure, r.code, r.stderr)
	require.Contains(t, r.stderr, "NATS at "+dev.info.NATSURL+" refused the connection")
	require.Contains(t, r.stderr, "--nats-token")

	// Every part of dev authenticates with the token: core answers, and the
	// promoter promotes a delayed job.
	r = kuebus(t, "job", "create", "email", "--delay", "50ms", "--nats-url", dev.info.NATSURL, "--nats-token", "s3cret")
	require.Equal(t, 0, r.code, r.stderr)
	var job core.Job
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &job))
	client := connectClient(t, dev.info.NATSURL, bus.Auth{Token: "s3cret"}, "")
	require.Eventually(t, func() bool {
		got, err := client.Get(t.Context(), job.ID)
		return err == nil && got.State == core.StateInactive
	}, waitTimeout, 10*time.Millisecond, "the promoter did not promote the delayed job")
	require.Equal(t, 0, dev.stop(t), dev.stderr.String())
}

func TestDevRefusesAWideListenWithoutAToken(t *testing.T) {
	t.Parallel()
	r := kuebus(t, "dev", "--nats-listen", "0.0.0.0:0", "--data-dir", t.TempDir())
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Equal(t, `kuebus: --nats-listen: "0.0.0.0:0" reaches other machines, and NATS would take any client: give --nats-token (or $KUEBUS_NATS_TOKEN), or --nats-insecure`+"\n", r.stderr)
}

func TestDevRefusesAnEmptyToken(t *testing.T) {
	t.Parallel()
	for _, token := range []string{"--nats-token=", "--nats-token=  "} {
		r := kuebus(t, "dev", token, "--nats-listen", "127.0.0.1:0", "--http-listen", "", "--data-dir", t.TempDir())
		require.Equal(t, exitUsage, r.code, r.stderr)
		require.Equal(t, "kuebus: --nats-token: empty; leave the flag out to run without a token (loopback only)\n", r.stderr)
	}
}

func TestCredentialFlagsAreChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"two ways to authenticate", []string{"--nats-token", "t", "--nats-user", "u"}, "--nats-token and --nats-user: give one way to authenticate"},
		{"a password without a user", []string{"--nats-password", "p"}, "--nats-password needs --nats-user"},
		{"a missing nkey file", []string{"--nats-nkey", "/nonexistent/user.nk"}, "--nats-nkey: stat /nonexistent/user.nk"},
		{"a certificate without its key", []string{"--nats-tls-cert", "/nonexistent/c.pem"}, "--nats-tls-cert and --nats-tls-key go together"},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			t.Parallel()
			r := kuebus(t, append([]string{"stats", "--nats-url", "nats://127.0.0.1:1"}, tc.args...)...)
			require.Equal(t, exitUsage, r.code, r.stderr)
			require.Contains(t, r.stderr, tc.want)
		})
	}
}

func TestNodeLockedWithUsers(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts NATS, memberlist and core on a real Redis")
	}
	t.Parallel()
	rdb := nodetest.NewRedis(t)
	n := startNode(t, fmt.Sprintf(`name: locked
roles: [nats, core, promoter]
prefix: acme
redis_prefix: %s
redis: {url: %q}
nats:
  embedded:
    listen: 127.0.0.1:0
    users:
      - {name: ops, role: admin, password: ops-pw}
      - {name: w1, role: worker, password: w1-pw}
      - {name: p1, role: producer, password: p1-pw}
memberlist:
  bind: 127.0.0.1:0
  preset: local
  secret_key: MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=
log: {format: text}
`, nodetest.Prefix(t, rdb), nodetest.RedisURL(t)))
	url := n.info.NATSURL
	as := func(user, password string, args ...string) result {
		t.Helper()
		return kuebus(t, append(args, "--nats-url", url, "--prefix", "acme", "--nats-user", user, "--nats-password", password)...)
	}

	r := kuebus(t, "stats", "--nats-url", url, "--prefix", "acme")
	require.Equal(t, exitFailure, r.code, r.stderr)
	require.Contains(t, r.stderr, "refused the connection")

	// A producer creates; core's reply reaches its own inbox.
	r = as("p1", "p1-pw", "job", "create", "email", "--delay", "50ms")
	require.Equal(t, 0, r.code, r.stderr)
	var job core.Job
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &job))
	id := strconv.FormatInt(job.ID, 10)

	// A worker may not remove it, nor move it by hand; nothing changes.
	for _, args := range [][]string{{"job", "rm", id}, {"job", "state", id, "failed"}} {
		r = as("w1", "w1-pw", args...) // refused at once, not at the 5 s timeout
		require.Equal(t, exitFailure, r.code, r.stderr)
		require.Contains(t, r.stderr, "this NATS user's role may not publish to acme.core.", args)
	}
	admin := connectClient(t, url, bus.Auth{User: "ops", Password: "ops-pw"}, "acme")
	// The promoter, in the ring with the key and logged in as its role,
	// promotes the job; it was neither removed nor failed.
	require.Eventually(t, func() bool {
		got, err := admin.Get(t.Context(), job.ID)
		return err == nil && got.State == core.StateInactive
	}, waitTimeout, 10*time.Millisecond, "the delayed job was not promoted")
	require.Equal(t, 0, n.stop(t), n.stderr.String())
}

// connectClient connects to NATS with auth, as a program using the Go
// client would.
func connectClient(t *testing.T, url string, auth bus.Auth, prefix string) *core.Client {
	t.Helper()
	subj, err := bus.NewSubjects(prefix)
	require.NoError(t, err)
	opts, err := auth.Options(subj)
	require.NoError(t, err)
	nc, err := bus.Connect(url, t.Name(), opts...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	client, err := core.NewClient(nc, &core.ClientOptions{Prefix: prefix})
	require.NoError(t, err)
	return client
}

func TestNodeServesNATSOverTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts NATS and core on a real Redis")
	}
	t.Parallel()
	rdb := nodetest.NewRedis(t)
	pki := bustest.NewPKI(t)
	n := startNode(t, fmt.Sprintf(`name: tls
roles: [nats, core]
redis_prefix: %s
redis: {url: %q}
nats:
  embedded:
    listen: 127.0.0.1:0
    token: s3cret
    tls: {cert: %q, key: %q}
log: {format: text}
`, nodetest.Prefix(t, rdb), nodetest.RedisURL(t), pki.Cert, pki.Key))
	require.True(t, strings.HasPrefix(n.info.NATSURL, "tls://"), n.info.NATSURL)

	// Core, beside the server, reaches it in-process without TLS; a
	// client trusting the CA reaches core over TLS.
	r := kuebus(t, "job", "create", "email", "--nats-url", n.info.NATSURL, "--nats-token", "s3cret", "--nats-tls-ca", pki.CA)
	require.Equal(t, 0, r.code, r.stderr)
	r = kuebus(t, "stats", "--nats-url", n.info.NATSURL, "--nats-token", "s3cret")
	require.Equal(t, exitFailure, r.code, r.stderr)
	require.Contains(t, r.stderr, "certificate signed by unknown authority")
	require.Equal(t, 0, n.stop(t), n.stderr.String())
}

// Not parallel: it sets KUEBUS_NATS_TOKEN for the whole process, as a
// shell that exports it does for dev and the CLI alike.
func TestDevAndTheCLIShareTheTokenVariable(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts NATS and core on a real Redis")
	}
	rdb := nodetest.NewRedis(t)
	t.Setenv(envNATSToken, "from-env")
	dev := startDev(t, "--nats-listen", "127.0.0.1:0", "--redis-url", nodetest.RedisURL(t),
		"--redis-prefix", nodetest.Prefix(t, rdb), "--data-dir", t.TempDir())
	r := kuebus(t, "stats", "--nats-url", dev.info.NATSURL)
	require.Equal(t, 0, r.code, r.stderr)
	r = kuebus(t, "stats", "--nats-url", dev.info.NATSURL, "--nats-token", "wrong")
	require.Equal(t, exitFailure, r.code, r.stderr)
	require.Contains(t, r.stderr, "refused the connection")
	require.Equal(t, 0, dev.stop(t), dev.stderr.String())
}

// Not parallel: it sets the variables for the whole process.
func TestHelpNeverShowsASecretFromTheEnvironment(t *testing.T) {
	t.Setenv(envNATSToken, "token-from-env")
	t.Setenv(envNATSPassword, "password-from-env")
	// Help names the deployment a command talks to: its URL's password
	// masked.
	t.Setenv(envNATSURL, "nats://u:url-password-from-env@127.0.0.1:4222")
	for _, cmd := range []string{"dev", "stats", "worker", "bench", "cluster", "events"} {
		r := kuebus(t, cmd, "--help")
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "--nats-token", cmd)
		require.NotContains(t, r.stdout, "token-from-env", cmd)
		require.NotContains(t, r.stdout, "password-from-env", cmd)
	}
	r := kuebus(t, "stats", "--help")
	require.Contains(t, r.stdout, "now: nats://u:xxxxx@127.0.0.1:4222 ($KUEBUS_NATS_URL)")
	r = kuebus(t, "help")
	require.Contains(t, r.stdout, "Deployment now: nats://u:xxxxx@127.0.0.1:4222 ($KUEBUS_NATS_URL)")
	require.NotContains(t, r.stdout, "url-password-from-env")
}
