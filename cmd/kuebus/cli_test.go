package main

import (
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
)

func TestUsage(t *testing.T) {
	t.Parallel()
	t.Run("help and version print to stdout and exit 0", func(t *testing.T) {
		t.Parallel()
		for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
			r := kuebus(t, args...)
			require.Equal(t, 0, r.code, args)
			require.Contains(t, r.stdout, "job create TYPE", args)
			require.Contains(t, r.stdout, "KUEBUS_NATS_URL", args)
			require.Empty(t, r.stderr, args)
		}
		for _, args := range [][]string{{"help", "job", "create"}, {"job", "create", "--help"}, {"job", "create", "email", "-h"}} {
			r := kuebus(t, args...)
			require.Equal(t, 0, r.code, args)
			require.Contains(t, r.stdout, "kuebus job create [flags] TYPE", args)
			require.Contains(t, r.stdout, "--unique-key KEY", args)
			require.Contains(t, r.stdout, "--nats-url URL", args)
		}
		r := kuebus(t, "help", "job")
		require.Equal(t, 0, r.code)
		require.Contains(t, r.stdout, "job retry ID")
		require.NotContains(t, r.stdout, "stats")

		r = kuebus(t, "version")
		require.Equal(t, 0, r.code)
		require.True(t, strings.HasPrefix(r.stdout, "kuebus "), r.stdout)
	})

	t.Run("a missing command prints the usage to stderr and exits 2", func(t *testing.T) {
		t.Parallel()
		for _, args := range [][]string{nil, {"job"}} {
			r := kuebus(t, args...)
			require.Equal(t, 2, r.code, args)
			require.Contains(t, r.stderr, "Usage:", args)
			require.Empty(t, r.stdout, args)
		}
	})

	t.Run("every command's help has an example, its own flags first, and names each flag's value in one word", func(t *testing.T) {
		t.Parallel()
		// A backquoted phrase in a flag's usage is taken for the name of
		// its value: "--events-durable kuebus events --since".
		flagLine := regexp.MustCompile(`^  (-{1,2}[a-z0-9-]+)( .*)?$`)
		exampleFlag := regexp.MustCompile(`(?:^| )--([a-z0-9-]+)`)
		var leaves []*command
		var walk func(c *command)
		walk = func(c *command) {
			if c.sub == nil {
				leaves = append(leaves, c)
			}
			for _, s := range c.sub {
				walk(s)
			}
		}
		walk(commands())
		require.NotEmpty(t, leaves)
		for _, c := range leaves {
			p := strings.Fields(c.path())
			// Every command, new ones too, shows the user one way to call it.
			require.NotEmpty(t, c.example, "%v: no example in its entry of commands()", p)
			if c.run == nil {
				continue // help
			}
			r := kuebus(t, append(p, "--help")...)
			require.Equal(t, 0, r.code, "%v: %s", p, r.stderr)
			flags := map[string]bool{}
			section := ""
			for _, line := range strings.Split(r.stdout, "\n") {
				if strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " ") {
					section = line
				}
				if m := flagLine.FindStringSubmatch(line); m != nil {
					require.NotContains(t, strings.TrimSpace(m[2]), " ", "%v: %q", p, line)
					flags[strings.TrimLeft(m[1], "-")] = true
					if slices.Contains([]string{"nats-url", "prefix", "timeout", "nats-token", "context"}, strings.TrimLeft(m[1], "-")) && c.name != "bench" && !c.serves && c.parent.name != "context" {
						require.Equal(t, "Connection flags:", section, "%v: %s is a connection flag, shown after the command's own", p, m[1])
					}
				}
			}
			require.Contains(t, r.stdout, "\nExamples:\n", p)
			for line := range strings.SplitSeq(c.example, "\n") {
				require.Contains(t, line+" ", "kuebus "+c.path()+" ", "%v: example %q is not of the command", p, line)
				for _, m := range exampleFlag.FindAllStringSubmatch(line, -1) {
					require.True(t, flags[m[1]], "%v: example %q gives --%s, which the command has not", p, line, m[1])
				}
			}
		}

		r := kuebus(t, "job", "state", "--help")
		require.Equal(t, 0, r.code)
		own, conn := strings.Index(r.stdout, "\nFlags:"), strings.Index(r.stdout, "\nConnection flags:")
		require.Equal(t, -1, own, "job state has no flags of its own: %s", r.stdout)
		require.Positive(t, conn)
		r = kuebus(t, "job", "create", "--help")
		require.Equal(t, 0, r.code)
		own, conn = strings.Index(r.stdout, "\nFlags:\n  --attempts N"), strings.Index(r.stdout, "\nConnection flags:\n")
		require.Positive(t, own, r.stdout)
		require.Greater(t, conn, own, r.stdout)
		require.Less(t, strings.Index(r.stdout, "--unique-key KEY"), conn)
		require.Greater(t, strings.Index(r.stdout, "--nats-url URL"), conn)
		require.Contains(t, r.stdout, "\nExamples:\n  kuebus job create email --data")
		r = kuebus(t, "dev", "--help")
		require.Equal(t, 0, r.code)
		require.NotContains(t, r.stdout, "Connection flags:", "dev's --nats-token locks its own server")
		require.Contains(t, r.stdout, "\nLog flags:\n  --log-format FORMAT")
	})

	t.Run("a bad command line gets one line naming what is wrong and exits 2", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"frobnicate"}, `unknown command "frobnicate" (see`},
			{[]string{"job", "crate"}, `unknown command "job crate": did you mean "kuebus job create"?`},
			{[]string{"stat"}, `unknown command "stat": did you mean "kuebus stats"?`},
			{[]string{"help", "job", "lss"}, `help: unknown command "job lss": did you mean "kuebus job ls"?`},
			{[]string{"job", "frob"}, `unknown command "job frob"`},
			{[]string{"help", "frob"}, `unknown command "frob"`},
			{[]string{"--nats-url", "x", "stats"}, "expected a command before the flag --nats-url"},
			{[]string{"job", "--nats-url", "x", "ls"}, "job: expected a command before the flag --nats-url"},
			{[]string{"job", "create"}, "missing argument"},
			{[]string{"job", "create", "email", "--data", "{broken"}, "--data: not valid JSON"},
			{[]string{"job", "create", "email", "--priority", "urgent"}, `--priority: "urgent" is neither a priority name`},
			{[]string{"job", "create", "email", "--delay", "soon"}, "--delay"},
			{[]string{"job", "create", "email", "--delay", "-5s"}, "--delay: -5s is negative"},
			{[]string{"job", "create", "email", "--ttl", "0"}, "--ttl"},
			{[]string{"job", "create", "email", "--attempts", "0"}, "--attempts"},
			{[]string{"job", "create", "email", "--backoff", "linear:1s"}, "--backoff"},
			{[]string{"job", "create", "email", "--backoff", "fixed:x"}, "--backoff"},
			{[]string{"job", "create", "email", "sms"}, `unexpected argument "sms"`},
			{[]string{"job", "get", "abc"}, `job get: ID "abc" is not a job id (a positive integer)`},
			{[]string{"job", "get", "0"}, `ID "0" is not a job id`},
			{[]string{"job", "get", "-3"}, `ID "-3" is not a job id`},
			{[]string{"job", "get", "1", "2"}, `unexpected argument "2"`},
			{[]string{"job", "get", "1", "--bogus"}, "job get: unknown flag --bogus (see 'kuebus job get --help')"},
			{[]string{"job", "create", "x", "--prioriy", "high"}, "unknown flag --prioriy: did you mean --priority?"},
			{[]string{"stats", "--nats-ulr", "nats://h:1"}, "unknown flag --nats-ulr: did you mean --nats-url?"},
			{[]string{"job", "rm"}, "no job given: give an ID, or --all"},
			{[]string{"job", "state", "1", "sleeping"}, `STATE "sleeping" is not a state`},
			{[]string{"job", "priority", "1", "urgent"}, "PRIORITY"},
			{[]string{"job", "ls", "--state", "sleeping"}, "--state"},
			{[]string{"job", "ls", "--order", "up"}, "--order"},
			{[]string{"job", "ls", "--from", "5", "--to", "2"}, "--to"},
			{[]string{"events", "job..x"}, "SUBJECT"},
			{[]string{"events", "a", "b"}, "unexpected argument"},
			{[]string{"stats", "--prefix", "a b"}, "--prefix"},
			{[]string{"stats", "--timeout", "0s"}, "--timeout"},
			{[]string{"dev", "--nats-listen", "nohost"}, "--nats-listen"},
			{[]string{"dev", "--http-listen", "127.0.0.1:99999"}, "--http-listen"},
			{[]string{"dev", "--redis-url", "http://x"}, "--redis-url"},
			{[]string{"dev", "--log-level", "loud"}, "--log-level"},
			{[]string{"dev", "--log-format", "xml"}, `--log-format: "xml" is not text or json`},
			{[]string{"dev", "--http-base-path", "admin"}, `--http-base-path: "admin" must start with /`},
			{[]string{"worker", "email", "--log-format", "yaml"}, `--log-format: "yaml" is not text or json`},
			{[]string{"worker", "email", "--log-level", "chatty"}, "--log-level"},
			{[]string{"worker", "email", "--fail-rate", "1.5"}, "--fail-rate: 1.5 is outside 0..1"},
			{[]string{"worker", "email", "--fail-rate", "-0.1"}, "--fail-rate: -0.1 is outside 0..1"},
			{[]string{"dev", "--prefix", "a.*"}, "--prefix"},
			{[]string{"dev", "--stall-limit", "0"}, "--stall-limit: 0 is outside 1..1000000"},
			{[]string{"job", "create", "x", "--remove-on-fail=count=0"}, `count: "0" is not a whole number above 0`},
			{[]string{"job", "create", "x", "--remove-on-complete=1h"}, `"1h" is not true, false or age=DURATION,count=N`},
			{[]string{"dev", "--retention", "email.complete.count=-1"}, "--retention: config: retention.email.complete.count: -1 is negative"},
			{[]string{"dev", "--retention", "email.done.age=1h"}, `--retention: item 1 "email.done.age=1h": "done" is not complete, failed or cancelled`},
			{[]string{"job", "create", "x", "--stall-limit", "-1"}, `--stall-limit: "-1" is not a whole number`},
			{[]string{"dev", "extra"}, `unexpected argument "extra"`},
		} {
			r := kuebus(t, tc.args...)
			require.Equal(t, 2, r.code, "%q: %s", tc.args, r.stderr)
			require.Contains(t, r.stderr, tc.want, tc.args)
			require.True(t, strings.HasPrefix(r.stderr, "kuebus: "), r.stderr)
			require.NotContains(t, r.stderr, "kuebus: kuebus:", "the prefix once")
			require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
			require.Empty(t, r.stdout, tc.args)
		}
	})
}

func TestNothingRunning(t *testing.T) {
	t.Parallel()
	t.Run("without NATS a command says so and exits 1", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		url := "nats://" + l.Addr().String()
		require.NoError(t, l.Close()) // now nothing listens there
		for _, args := range [][]string{{"job", "get", "1"}, {"stats"}, {"events"}} {
			r := kuebus(t, append(args, "--nats-url", url)...)
			require.Equal(t, 1, r.code, args)
			require.Equal(t, "kuebus: cannot reach NATS at "+url+": is `kuebus dev` running?\n", r.stderr, args)
		}
	})

	t.Run("with NATS but no core a command says so and exits 1", func(t *testing.T) {
		t.Parallel()
		ns := bustest.NewServer(t)
		r := kuebus(t, "job", "create", "email", "--nats-url", ns.ClientURL())
		require.Equal(t, 1, r.code)
		require.Equal(t, "kuebus: no core service answers at "+ns.ClientURL()+": is `kuebus dev` running?\n", r.stderr)
	})

	t.Run("URLs are shown without their password", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, "nats://u:xxxxx@h:4222,nats://xxxxx@g:4222,nats://h2:1",
			redactURL("nats://u:secret@h:4222,nats://token@g:4222,nats://h2:1"))
	})
}

func TestOnlyNATSURLsAreTaken(t *testing.T) {
	t.Parallel()
	want := `kuebus: --nats-url: "http://127.0.0.1:4222": the scheme must be nats://, tls://, ws:// or wss://, not http://` + "\n"
	for _, args := range [][]string{{"stats"}, {"job", "get", "1"}, {"events"}, {"cluster"}, {"workers"}, {"worker", "email"},
		{"schedule", "ls"}, {"pause", "email"}} {
		r := kuebus(t, append(args, "--nats-url", "http://127.0.0.1:4222")...)
		require.Equal(t, exitUsage, r.code, args)
		require.Equal(t, want, r.stderr, args)
	}
	r := kuebus(t, "bench", "--nats-url", "http://127.0.0.1:4222", "--redis-url", "redis://127.0.0.1:1")
	require.Equal(t, exitUsage, r.code)
	require.Equal(t, want, r.stderr)
	r = kuebus(t, "stats", "--nats-url", "127.0.0.1:4222")
	require.Equal(t, exitUsage, r.code)
	require.Equal(t, `kuebus: --nats-url: "127.0.0.1:4222" is not a URL like nats://HOST:PORT`+"\n", r.stderr)
}

// Not parallel: it sets KUEBUS_NATS_URL for the whole process.
func TestANATSURLFromTheEnvironmentIsNamed(t *testing.T) {
	t.Setenv(envNATSURL, "https://w1:secret@127.0.0.1:4222")
	r := kuebus(t, "stats")
	require.Equal(t, exitUsage, r.code)
	require.Equal(t, `kuebus: --nats-url ($KUEBUS_NATS_URL): "https://w1:xxxxx@127.0.0.1:4222": the scheme must be nats://, tls://, ws:// or wss://, not https://`+"\n", r.stderr)
}
