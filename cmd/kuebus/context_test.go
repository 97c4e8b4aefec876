package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// isolateContexts gives the test a contexts file of its own (under a new
// $XDG_CONFIG_HOME) and clears the variables that choose a deployment.
// Not for parallel tests: it sets variables of the whole process.
func isolateContexts(t *testing.T) (path string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv(envNATSURL, "")
	t.Setenv(envContext, "")
	return filepath.Join(dir, contextsFileName)
}

// TestAContextChoosesTheDeployment: `context set` and `context use` make
// a command with no --nats-url talk to the context's NATS under its
// prefix, and stats names the deployment it counted; --nats-url and
// $KUEBUS_NATS_URL put the current context aside, --context does not.
// Not parallel: it sets XDG_CONFIG_HOME.
func TestAContextChoosesTheDeployment(t *testing.T) {
	path := isolateContexts(t)
	subj, err := bus.NewSubjects("ctxtest")
	require.NoError(t, err)
	c := nodetest.NewCore(t, service.Config{Subjects: subj})
	url := c.NATS.ClientURL()

	r := kuebus(t, "context", "ls")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "CURRENT  NAME  NATS URL  PREFIX\n", r.stdout, "no file is no context")

	r = kuebus(t, "context", "set", "test", "--nats-url", url, "--prefix", "ctxtest")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "context test: "+url+", prefix ctxtest\n", r.stdout)
	r = kuebus(t, "context", "set", "other", "--nats-url", "nats://127.0.0.1:1")
	require.Equal(t, 0, r.code, r.stderr)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "it names servers and credential files")

	r = kuebus(t, "context", "use", "test")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "current context: test ("+url+", prefix ctxtest)\n", r.stdout)

	r = kuebus(t, "context", "ls")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^\*\s+test\s+`+url+`\s+ctxtest$`, r.stdout)
	require.Regexp(t, `(?m)^\s+other\s+nats://127.0.0.1:1\s*$`, r.stdout)

	r = kuebus(t, "stats")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stderr, "a chosen deployment needs no warning")
	require.True(t, strings.HasPrefix(r.stdout, "deployment  "+url+", prefix ctxtest (context test, the current one)\n"), r.stdout)

	r = kuebus(t, "job", "create", "email", "--quiet")
	require.Equal(t, 0, r.code, r.stderr)
	id := strings.TrimSuffix(r.stdout, "\n")
	require.Regexp(t, `^[1-9][0-9]*$`, id, "--quiet: the id alone, for a script")
	r = kuebus(t, "job", "get", id)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"type": "email"`)

	r = kuebus(t, "context", "show", "--context", "other")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "nats://127.0.0.1:1 (context other, from --context)\n", r.stdout)

	t.Setenv(envNATSURL, "nats://127.0.0.1:2")
	r = kuebus(t, "context", "show")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "nats://127.0.0.1:2 ($KUEBUS_NATS_URL)\n", r.stdout, "a URL given puts the current context aside, its prefix too")
	r = kuebus(t, "context", "show", "--context", "test", "--prefix", "")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, url+" (context test, from --context)\n", r.stdout, "a named context wins over the variable; a flag over the context")
	r = kuebus(t, "context", "show", "--nats-url", "nats://127.0.0.1:3")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "nats://127.0.0.1:3 (--nats-url)\n", r.stdout)
	t.Setenv(envNATSURL, "")

	t.Setenv(envContext, "other")
	r = kuebus(t, "context", "show")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "nats://127.0.0.1:1 (context other, from $KUEBUS_CONTEXT)\n", r.stdout)
	t.Setenv(envContext, "")

	r = kuebus(t, "job", "create", "--help")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "Connection flags:\n  now: "+url+", prefix ctxtest (context test, the current one)\n", "help names the deployment")

	r = kuebus(t, "context", "rm", "test")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "removed context test\n", r.stdout)
	r = kuebus(t, "context", "show")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, bus.URLDefault+" (the default: no --nats-url, $KUEBUS_NATS_URL or context chose one)\n", r.stdout,
		"removing the current context leaves none current")
}

// TestWithoutAChoiceTheDefaultURLIsNamed: with no --nats-url,
// $KUEBUS_NATS_URL or context, a command says on stderr which URL it uses
// before it dials: a queue on the default port may be someone else's.
// Not parallel: it sets XDG_CONFIG_HOME.
func TestWithoutAChoiceTheDefaultURLIsNamed(t *testing.T) {
	isolateContexts(t)
	// Nothing listens here, so that the test talks to nobody's queue.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	free := "nats://" + l.Addr().String()
	require.NoError(t, l.Close())

	connect := func(args ...string) string {
		t.Helper()
		var stderr bytes.Buffer
		e := &env{stdout: &bytes.Buffer{}, stderr: &stderr, cmd: commands().find("stats")}
		var cf connFlags
		fs := e.flags()
		cf.register(fs)
		_, err := e.parse(fs, args, 0, 0)
		require.NoError(t, err)
		d, err := cf.resolve()
		require.NoError(t, err)
		if d.urlFrom == "" {
			cf.url = free // the default's warning, without dialling it
		}
		_, err = cf.connect()
		require.ErrorContains(t, err, "cannot reach NATS at "+free)
		return stderr.String()
	}
	require.Equal(t, "kuebus: no deployment chosen (--nats-url, $KUEBUS_NATS_URL, --context or 'kuebus context use'): talking to "+free+"\n", connect())
	require.Empty(t, connect("--nats-url", free), "a URL chosen")
}

// TestBadContextsAreRefused: a bad name, URL or prefix gets a usage error
// naming it and stores nothing; an unknown context is named with the
// nearest one; a contexts file with an unknown key or a bad value is
// refused naming the file and the key. Not parallel: it sets
// XDG_CONFIG_HOME.
func TestBadContextsAreRefused(t *testing.T) {
	path := isolateContexts(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"context", "set", "bad name", "--nats-url", "nats://h:1"}, `context set: NAME "bad name" is not a context name`},
		{[]string{"context", "set", "-x", "--nats-url", "nats://h:1"}, `unknown flag --x`},
		{[]string{"context", "set", "prod"}, "context set: --nats-url: missing"},
		{[]string{"context", "set", "prod", "--nats-url", "http://h:1"}, `--nats-url: "http://h:1": the scheme must be`},
		{[]string{"context", "set", "prod", "--nats-url", "nats://h:1", "--prefix", "a b"}, "--prefix"},
		{[]string{"context", "set", "prod", "--nats-url", "nats://h:1", "--nats-token", "x"}, "unknown flag --nats-token"},
		{[]string{"context", "use", "prod"}, `context use: NAME: no context "prod" in ` + path},
		{[]string{"context", "use"}, "missing argument"},
		{[]string{"context", "rm", "prod"}, `context rm: NAME: no context "prod"`},
	} {
		r := kuebus(t, tc.args...)
		require.Equal(t, exitUsage, r.code, "%q: %s", tc.args, r.stderr)
		require.Contains(t, r.stderr, tc.want, tc.args)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
		require.NoFileExists(t, path, "%q stored nothing", tc.args)
	}

	r := kuebus(t, "context", "set", "prod", "--nats-url", "nats://127.0.0.1:1")
	require.Equal(t, 0, r.code, r.stderr)
	r = kuebus(t, "stats", "--context", "prd")
	require.Equal(t, exitUsage, r.code)
	require.Equal(t, `kuebus: --context: no context "prd" in `+path+`: did you mean "prod"? (see 'kuebus context ls')`+"\n", r.stderr)
	t.Setenv(envContext, "staging")
	r = kuebus(t, "stats")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, `kuebus: $KUEBUS_CONTEXT: no context "staging" in `+path)
	t.Setenv(envContext, "")

	for _, tc := range []struct{ file, want string }{
		{"contexts:\n  prod:\n    nats_url: nats://h:1\n    natsurl: x\n", "field natsurl not found"},
		{"contexts:\n  prod:\n    prefix: acme\n", "contexts.prod.nats_url: missing"},
		{"contexts:\n  prod:\n    nats_url: http://h:1\n", "contexts.prod.nats_url: "},
		{"contexts:\n  prod:\n    nats_url: nats://h:1\n    prefix: a*\n", "contexts.prod.prefix: "},
		{"current: staging\ncontexts:\n  prod:\n    nats_url: nats://h:1\n", `current: no context "staging"`},
	} {
		require.NoError(t, os.WriteFile(path, []byte(tc.file), 0o600))
		r := kuebus(t, "context", "ls")
		require.Equal(t, exitUsage, r.code, tc.file)
		require.Contains(t, r.stderr, "kuebus: contexts file "+path+": ", tc.file)
		require.Contains(t, r.stderr, tc.want, tc.file)
		r = kuebus(t, "stats")
		require.Equal(t, exitUsage, r.code, "a client command does not guess past a broken file")
	}
}

// TestACredentialFileComesFromTheFirstThatGivesIt: the flag, then the
// context --context names, then the variable, then the current context.
// Not parallel: it sets XDG_CONFIG_HOME and variables.
func TestACredentialFileComesFromTheFirstThatGivesIt(t *testing.T) {
	isolateContexts(t)
	dir := t.TempDir()
	r := kuebus(t, "context", "set", "prod", "--nats-url", "nats://127.0.0.1:1", "--nats-creds", filepath.Join(dir, "ctx.creds"))
	require.Equal(t, 0, r.code, r.stderr)
	r = kuebus(t, "context", "use", "prod")
	require.Equal(t, 0, r.code, r.stderr)
	creds := func(args ...string) string {
		t.Helper()
		e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, cmd: commands().find("stats")}
		var cf connFlags
		fs := e.flags()
		cf.register(fs)
		_, err := e.parse(fs, args, 0, 0)
		require.NoError(t, err)
		_, err = cf.resolve()
		require.NoError(t, err)
		return cf.auth.CredsFile
	}
	require.Equal(t, filepath.Join(dir, "ctx.creds"), creds(), "the current context's")
	t.Setenv(envNATSCreds, "/var.creds")
	require.Equal(t, "/var.creds", creds(), "a variable wins over the current context")
	require.Equal(t, filepath.Join(dir, "ctx.creds"), creds("--context", "prod"), "a context named by --context wins over the variable")
	require.Equal(t, "/flag.creds", creds("--context", "prod", "--nats-creds", "/flag.creds"), "the flag wins over all")
}
