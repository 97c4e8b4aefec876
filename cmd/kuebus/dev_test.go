package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
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

func TestDev(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts NATS and redis-server")
	}
	t.Parallel()
	dataDir := t.TempDir()
	dev := startDev(t, "--data-dir", dataDir, "--nats-listen", "127.0.0.1:0", "--prefix", "acme", "--stall-limit", "3")
	require.Equal(t, dataDir, dev.info.DataDir)
	require.Contains(t, dev.stderr.String(), "kuebus dev ready")
	require.Contains(t, dev.stderr.String(), "nats_url="+dev.info.NATSURL)
	require.Equal(t, 1, strings.Count(dev.stderr.String(), "kuebus dev ready"))

	// cli runs a command against this dev, as a user with the env var would.
	cli := func(args ...string) result {
		t.Helper()
		return kuebus(t, append(args, "--nats-url", dev.info.NATSURL, "--prefix", "acme")...)
	}
	createJob := func(args ...string) core.Job {
		t.Helper()
		r := cli(append([]string{"job", "create"}, args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		var job core.Job
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &job), r.stdout)
		return job
	}
	// A client of our own, to watch events and to do what the CLI does not.
	nc := bustest.Connect(t, dev.info.NATSURL)
	client, err := core.NewClient(nc, &core.ClientOptions{Prefix: "acme"})
	require.NoError(t, err)

	t.Run("job create stores every option and prints the job", func(t *testing.T) {
		job := createJob("email", "--data", `{"to":"a@b"}`, "--priority", "high", "--attempts", "3",
			"--backoff", "exponential:500ms", "--ttl", "30s", "--unique-key", "order-1", "--remove-on-complete")
		require.Positive(t, job.ID)
		require.Equal(t, "email", job.Type)
		require.JSONEq(t, `{"to":"a@b"}`, string(job.Data))
		require.Equal(t, core.PriorityHigh, job.Priority)
		require.Equal(t, core.StateInactive, job.State)
		require.Equal(t, 3, job.MaxAttempts)
		require.Equal(t, core.ExponentialBackoff(500*time.Millisecond), job.Backoff, "exponential:500ms first waits 500ms, as Go's helper")
		require.EqualValues(t, 30_000, job.TTL)
		require.Equal(t, "order-1", job.UniqueKey)
		require.True(t, job.RemoveOnComplete.AtOnce)
		require.Equal(t, 3, job.StallLimit, "the node's --stall-limit")
		require.Zero(t, createJob("email", "--stall-limit", "0").StallLimit, "the job's own --stall-limit")
		kept := createJob("email", "--remove-on-complete=age=90m,count=1000", "--remove-on-fail")
		require.Equal(t, core.Retention{Age: 90 * time.Minute, Count: 1000}, kept.RemoveOnComplete)
		require.Equal(t, core.RemoveAtOnce, kept.RemoveOnFail)

		again := createJob("email", "--unique-key", "order-1", "--priority", "-3")
		require.Equal(t, job.ID, again.ID, "a second create with the same unique key returns the first job")

		r := cli("job", "get", strconv.FormatInt(job.ID, 10))
		require.Equal(t, 0, r.code, r.stderr)
		var got core.Job
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
		require.Equal(t, job, got)
	})

	t.Run("job ls, stats, log, priority, state and retry show and change jobs", func(t *testing.T) {
		job := createJob("report", "--data", `[1,2]`, "--priority", "7")
		id := strconv.FormatInt(job.ID, 10)

		r := cli("job", "ls", "--type", "report")
		require.Equal(t, 0, r.code, r.stderr)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		require.Len(t, lines, 2, r.stdout)
		require.Equal(t, []string{"ID", "TYPE", "STATE", "PRIORITY", "ATTEMPTS", "CREATED"}, strings.Fields(lines[0]))
		require.Equal(t, []string{id, "report", "inactive", "7", "0/1"}, strings.Fields(lines[1])[:5])

		r = cli("job", "ls", "--state", "delayed", "--type", "report")
		require.Equal(t, 0, r.code, r.stderr)
		require.NotContains(t, r.stdout, "report")

		r = cli("stats")
		require.Equal(t, 0, r.code, r.stderr)
		require.Regexp(t, `(?m)^inactive\s+[1-9]`, r.stdout)
		require.Regexp(t, `(?m)^work time\s+0s$`, r.stdout)
		require.Regexp(t, `(?m)^TYPE\s+DELAYED\s+INACTIVE\s+ACTIVE\s+COMPLETE\s+FAILED\s+CANCELLED\s+WAITING$`, r.stdout)
		require.Regexp(t, `(?m)^report\s+0\s+1\s+0\s+0\s+0\s+0\s+0$`, r.stdout)

		r = cli("job", "log", id)
		require.Equal(t, result{code: 0}, r)
		require.NoError(t, client.AddLog(t.Context(), job.ID, "first line"))
		require.NoError(t, client.AddLog(t.Context(), job.ID, "second line"))
		r = cli("job", "log", id)
		require.Equal(t, result{code: 0, stdout: "first line\nsecond line\n"}, r)
		r = cli("job", "log", id, "--time")
		require.Equal(t, 0, r.code, r.stderr)
		require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z first line\n\S+ second line\n$`, r.stdout)

		r = cli("job", "priority", id, "-12")
		require.Equal(t, result{code: 0, stdout: "job " + id + " has priority -12\n"}, r)
		r = cli("job", "state", id, "failed")
		require.Equal(t, result{code: 0, stdout: "job " + id + " is failed\n"}, r)
		r = cli("job", "retry", id)
		require.Equal(t, 0, r.code, r.stderr)
		got, err := client.Get(t.Context(), job.ID)
		require.NoError(t, err)
		require.Equal(t, core.StateInactive, got.State)
		require.Equal(t, core.Priority(-12), got.Priority)
	})

	t.Run("the promote loop promotes a delayed job", func(t *testing.T) {
		promoted := make(chan int64, 16)
		sub, err := client.Subscribe(client.Subjects().JobEventsOf(bus.EventPromotion, "later"), func(ev *core.Event) { promoted <- ev.ID })
		require.NoError(t, err)
		defer func() { _ = sub.Unsubscribe() }()
		require.NoError(t, nc.Flush())

		job := createJob("later", "--delay", "200")
		require.Equal(t, core.StateDelayed, job.State)
		select {
		case id := <-promoted:
			require.Equal(t, job.ID, id)
		case <-time.After(waitTimeout):
			t.Fatal("the delayed job was not promoted")
		}
	})

	t.Run("events prints each event with its subject until stopped", func(t *testing.T) {
		events := start(t, context.Background(), "events", "job.enqueue.>", "--nats-url", dev.info.NATSURL, "--prefix", "acme")
		events.stderr.waitFor(t, "listening on acme.job.enqueue.>")
		job := createJob("ping")
		events.stdout.waitFor(t, fmt.Sprintf("acme.job.enqueue.%d.ping {", job.ID))
		line, _, _ := strings.Cut(events.stdout.String(), "\n")
		_, body, _ := strings.Cut(line, " ")
		var ev core.Event
		require.NoError(t, json.Unmarshal([]byte(body), &ev), line)
		require.Equal(t, core.Event{Event: "enqueue", ID: job.ID, Type: "ping", At: ev.At, Job: ev.Job, New: true}, ev)
		require.Equal(t, 0, events.stop(t))
	})

	t.Run("bad input gets one clear line and the right exit code", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			code int
			want string
		}{
			{[]string{"job", "create", "a.b", "--data", "{}"}, 1, "type"},
			{[]string{"job", "create", "email", "--data", "{broken"}, 2, "--data"},
			{[]string{"job", "get", "abc"}, 2, `ID "abc" is not a job id`},
			{[]string{"job", "get", "999999"}, 1, "job 999999 not found"},
			{[]string{"job", "rm", "999999"}, 1, "job 999999 not found"},
			{[]string{"job", "ls", "--to", "5000"}, 1, "to: 0..5000 is 5001 jobs"},
		} {
			r := cli(tc.args...)
			require.Equal(t, tc.code, r.code, "%q: %s", tc.args, r.stderr)
			require.Contains(t, r.stderr, tc.want, tc.args)
			require.True(t, strings.HasPrefix(r.stderr, "kuebus: "), r.stderr)
			require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
			require.Empty(t, r.stdout)
		}
	})

	t.Run("job rm removes a job", func(t *testing.T) {
		job := createJob("cleanup")
		id := strconv.FormatInt(job.ID, 10)
		r := cli("job", "rm", id)
		require.Equal(t, result{code: 0, stdout: "removed job " + id + "\n"}, r)
		r = cli("job", "get", id)
		require.Equal(t, 1, r.code)
		require.Equal(t, "kuebus: job "+id+" not found\n", r.stderr)
	})

	// A job that stays, to find again after a restart.
	kept := createJob("kept", "--data", `{"n":1}`)

	// Stop it as a signal does: clean exit, and the redis-server child gone.
	redisAddr := hostOf(t, dev.info.RedisURL)
	require.Equal(t, 0, dev.stop(t), dev.stderr.String())
	require.Contains(t, dev.stderr.String(), "kuebus dev stopped")
	_, err = net.DialTimeout("tcp", redisAddr, time.Second)
	require.Error(t, err, "redis-server still answers on %s after kuebus dev stopped", redisAddr)
	_, err = net.DialTimeout("tcp", hostOf(t, dev.info.NATSURL), time.Second)
	require.Error(t, err, "NATS still answers after kuebus dev stopped")
	entries, err := os.ReadDir(filepath.Join(dataDir, "redis"))
	require.NoError(t, err)
	require.NotEmpty(t, entries, "no AOF in the data dir")

	// The same data dir after a restart: the job is still there.
	dev = startDev(t, "--data-dir", dataDir, "--nats-listen", "127.0.0.1:0", "--prefix", "acme")
	r := cli("job", "get", strconv.FormatInt(kept.ID, 10))
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"n": 1`)
	require.Equal(t, 0, dev.stop(t), dev.stderr.String())
}

func TestDevWithRedisURL(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs Redis")
	}
	t.Parallel()
	rdb := nodetest.NewRedis(t)
	prefix := nodetest.Prefix(t, rdb)
	dataDir := t.TempDir()
	dev := startDev(t, "--redis-url", nodetest.RedisURL(t), "--redis-prefix", prefix, "--nats-listen", "127.0.0.1:0", "--data-dir", dataDir)
	require.Equal(t, nodetest.RedisURL(t), dev.info.RedisURL)

	r := kuebus(t, "job", "create", "email", "--nats-url", dev.info.NATSURL)
	require.Equal(t, 0, r.code, r.stderr)
	keys, err := rdb.Keys(t.Context(), prefix+":*").Result()
	require.NoError(t, err)
	require.NotEmpty(t, keys, "no key under --redis-prefix %s", prefix)
	r = kuebus(t, "events", "--since", "1m", "--nats-url", dev.info.NATSURL)
	require.Equal(t, 1, r.code, "events are not durable without --events-durable")
	require.Contains(t, r.stderr, "turn events.durable on")

	require.Equal(t, 0, dev.stop(t), dev.stderr.String())
	require.NoError(t, rdb.Ping(t.Context()).Err(), "kuebus dev stopped a Redis it did not start")
	_, err = os.Stat(filepath.Join(dataDir, "redis"))
	require.ErrorIs(t, err, os.ErrNotExist, "no redis-server child, so no data for one")
}

// Not parallel: it changes PATH for the whole process.
func TestDevWithoutRedisServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var stdout, stderr strings.Builder
	code := run(t.Context(), []string{"dev", "--nats-listen", "127.0.0.1:0", "--data-dir", t.TempDir()}, &stdout, &stderr)
	require.Equal(t, 1, code)
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	require.Contains(t, lines[len(lines)-1], "apt-get install -y redis-server")
	require.True(t, strings.HasPrefix(lines[len(lines)-1], "kuebus: "))
}

func hostOf(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	return u.Host
}

func TestDevRedisHasAPassword(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts NATS and redis-server")
	}
	t.Parallel()
	dataDir := t.TempDir()
	// A data folder from before passwords: it has no password file.
	require.NoError(t, os.MkdirAll(filepath.Join(dataDir, "redis"), 0o755))
	dev := startDev(t, "--data-dir", dataDir, "--nats-listen", "127.0.0.1:0")

	file := filepath.Join(dataDir, "redis", "password")
	info, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	password := strings.TrimSpace(string(data))
	require.Len(t, password, 64)

	u, err := url.Parse(dev.info.RedisURL)
	require.NoError(t, err)
	got, _ := u.User.Password()
	require.Equal(t, password, got, "core uses the file's password")
	require.NotContains(t, dev.stderr.String(), password, "the log never shows it")
	require.Contains(t, dev.stderr.String(), "redis=redis://:xxxxx@"+u.Host)

	// A client without the password is refused.
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	_, err = conn.Write([]byte("PING\r\n"))
	require.NoError(t, err)
	line, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "-NOAUTH Authentication required.\r\n", line)
	require.Equal(t, 0, dev.stop(t), dev.stderr.String())

	// The next start keeps the password.
	dev = startDev(t, "--data-dir", dataDir, "--nats-listen", "127.0.0.1:0")
	u, err = url.Parse(dev.info.RedisURL)
	require.NoError(t, err)
	got, _ = u.User.Password()
	require.Equal(t, password, got)
	require.Equal(t, 0, dev.stop(t), dev.stderr.String())
}
