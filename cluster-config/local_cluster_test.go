package clusterconfig_test

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/promoter"
)

// scriptTimeout bounds the whole script test; each step has its own,
// shorter bound.
const scriptTimeout = 4 * time.Minute

// TestLocalClusterSurvivesItsLeadersSIGKILL drives local-cluster.sh as a
// person would: up, delayed jobs, kill -9 of the leader's process, a
// worker, down. Every job must end complete.
func TestLocalClusterSurvivesItsLeadersSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: builds kuebus, starts redis-server and three nodes")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is not installed: scripts/install-deps.sh installs it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	defer cancel()
	runDir := t.TempDir()
	base := freePortBase(t)
	script := func(ctx context.Context, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, "./local-cluster.sh", args...)
		cmd.Env = append(os.Environ(),
			"RUN_DIR="+runDir,
			"PORT_BASE="+strconv.Itoa(base),
			"REDIS_PORT="+strconv.Itoa(base+40),
			"REDIS_URL=", // the script starts its own
			"WAIT=90",
		)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.WaitDelay = 5 * time.Second // the nodes hold no pipe of ours; bound it anyway
		err := cmd.Run()
		require.NoError(t, err, "local-cluster.sh %s:\n%s", strings.Join(args, " "), out.String())
		return out.String()
	}
	// Cleanup by pid, whatever happened: down, then SIGKILL for anything
	// whose pid file is still there.
	t.Cleanup(func() {
		downCtx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(downCtx, "./local-cluster.sh", "down")
		cmd.Env = append(os.Environ(), "RUN_DIR="+runDir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("local-cluster.sh down: %v\n%s", err, out)
		}
		pids, _ := filepath.Glob(filepath.Join(runDir, "*.pid"))
		for _, f := range pids {
			data, _ := os.ReadFile(f)
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("%s was still running after down: killed", filepath.Base(f))
			}
		}
		if t.Failed() {
			for _, name := range []string{"node-a", "node-b", "node-c"} {
				log, _ := os.ReadFile(filepath.Join(runDir, name+".log"))
				t.Logf("%s.log:\n%s", name, tail(string(log), 40))
			}
		}
	})

	script(ctx, "up")
	status := parseStatus(t, script(ctx, "status"))
	require.Len(t, status, 3)
	checkHTTPLocked(t, runDir, status)

	// The client that creates and checks the jobs is on node-a's server,
	// which dies with the leader: it must go on through another server.
	// The nodes are locked: the test is the admin the script made.
	adminVars := readEnvFile(t, filepath.Join(runDir, "admin.env"))
	admin, err := bus.Auth{User: adminVars["KUEBUS_NATS_USER"], Password: adminVars["KUEBUS_NATS_PASSWORD"]}.Options(bus.Subjects{})
	require.NoError(t, err)
	_, err = bus.Connect(status["node-a"].natsURL, "local-cluster-test-anonymous")
	require.ErrorIs(t, err, nats.ErrAuthorization, "a locked node took an anonymous client")
	nc, err := bus.Connect(status["node-a"].natsURL, "local-cluster-test", admin...)
	require.NoError(t, err)
	defer nc.Close()
	client, err := core.NewClient(nc, nil)
	require.NoError(t, err)
	st, err := promoter.FetchStatus(ctx, nc, client.Subjects())
	require.NoError(t, err)
	leader := st.Leader
	require.Equal(t, "node-a", leader, "the lowest name leads")
	// queue.leader is watched from node-b's server, which stays up.
	watch, err := bus.Connect(status["node-b"].natsURL, "local-cluster-test-watch", admin...)
	require.NoError(t, err)
	defer watch.Close()
	watcher, err := core.NewClient(watch, nil)
	require.NoError(t, err)
	leaders := make(chan *core.Event, 10)
	sub, err := watcher.Subscribe(watcher.Subjects().Queue(bus.QueueLeader), func(ev *core.Event) { leaders <- ev })
	require.NoError(t, err)
	defer func() { _ = sub.Unsubscribe() }()

	// Jobs due 1 to 3 s from now: during the failover, when no one
	// promotes.
	const jobs = 200
	specs := make([]core.Spec, jobs)
	for i := range specs {
		specs[i] = core.Spec{Type: "report", Delay: time.Duration(1000+i*2000/jobs) * time.Millisecond, Data: []byte(`{"n":` + strconv.Itoa(i) + `}`)}
	}
	created, err := client.CreateBulk(ctx, specs)
	require.NoError(t, err)

	killed := time.Now()
	killNode(t, runDir, leader)
	select {
	case ev := <-leaders:
		t.Logf("failover after kill -9 of %s: %s leads %v later (queue.leader at %d)", leader, ev.Leader, time.UnixMilli(ev.At).Sub(killed), ev.At)
		require.Equal(t, "node-b", ev.Leader)
	case <-time.After(60 * time.Second):
		t.Fatal("no new leader within 60 s of the kill")
	case <-ctx.Done():
		t.Fatal("the test ran out of time")
	}

	// A worker on node-c's server.
	bin := filepath.Join(runDir, "kuebus")
	workerLog, err := os.Create(filepath.Join(runDir, "worker.log"))
	require.NoError(t, err)
	defer workerLog.Close()
	worker := exec.Command(bin, "worker", "report", "--nats-url", status["node-c"].natsURL, "--concurrency", "16")
	// The worker runs as the worker user, from its variables.
	worker.Env = os.Environ()
	for k, v := range readEnvFile(t, filepath.Join(runDir, "worker.env")) {
		worker.Env = append(worker.Env, k+"="+v)
	}
	worker.Stdout, worker.Stderr = workerLog, workerLog
	require.NoError(t, worker.Start())
	workerDone := make(chan error, 1)
	go func() { workerDone <- worker.Wait() }()
	defer func() {
		_ = worker.Process.Signal(syscall.SIGTERM)
		select {
		case <-workerDone:
		case <-time.After(20 * time.Second):
			_ = worker.Process.Kill()
			<-workerDone
		}
	}()

	require.Eventually(t, func() bool {
		n, err := client.Count(ctx, core.StateComplete, "report")
		return err == nil && n == jobs
	}, 60*time.Second, 100*time.Millisecond, "not every job was processed")
	for _, j := range created {
		got, err := client.Get(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, core.StateComplete, got.State, "job %d", j.ID)
		require.Equal(t, 1, got.Attempts, "job %d ran more than once", j.ID)
		require.GreaterOrEqual(t, got.StartedAt, j.PromoteAt, "job %d ran before it was due", j.ID)
	}
	require.NotEqual(t, status["node-a"].natsURL, nc.ConnectedUrl(), "the client did not move to another server")
	out := script(ctx, "status")
	require.Contains(t, out, leader+" stopped ")
}

// readEnvFile reads the NAME=VALUE lines the script wrote.
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	vars := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		k, v, ok := strings.Cut(line, "=")
		require.True(t, ok, "%s: %q is not NAME=VALUE", path, line)
		vars[k] = v
	}
	return vars
}

// nodeStatus is one line of `local-cluster.sh status`.
type nodeStatus struct{ pid, natsURL, httpURL string }

func parseStatus(t *testing.T, out string) map[string]nodeStatus {
	t.Helper()
	m := map[string]nodeStatus{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 4 && strings.HasPrefix(f[0], "node-") {
			m[f[0]] = nodeStatus{pid: f[1], natsURL: f[2], httpURL: f[3]}
		}
	}
	return m
}

// checkHTTPLocked: the locked cluster answers anonymous HTTP with 401 on
// every node, but for the login page; its NATS users sign in over HTTP
// with their roles. (httpapi's tests try every route of the router.)
func checkHTTPLocked(t *testing.T, runDir string, status map[string]nodeStatus) {
	t.Helper()
	user := func(role string) string {
		vars := readEnvFile(t, filepath.Join(runDir, role+".env"))
		return vars["KUEBUS_NATS_USER"] + ":" + vars["KUEBUS_NATS_PASSWORD"]
	}
	do := func(method, url, auth, body string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
		require.NoError(t, err)
		if u, p, ok := strings.Cut(auth, ":"); ok {
			req.SetBasicAuth(u, p)
		}
		res, err := http.DefaultTransport.RoundTrip(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		return res.StatusCode
	}
	const bulk = `{"action":"remove","state":"inactive"}`
	for name, st := range status {
		for _, r := range [][2]string{{"GET", ""}, {"GET", "stats"}, {"GET", "events"}, {"GET", "metrics"}, {"GET", "job/1"},
			{"POST", "job"}, {"POST", "jobs/bulk"}, {"DELETE", "job/1"}, {"POST", "pop?type=report"}, {"GET", "no-such-route"}} {
			require.Equal(t, http.StatusUnauthorized, do(r[0], st.httpURL+r[1], "", bulk), "%s: anonymous %s /%s", name, r[0], r[1])
		}
		require.Equal(t, http.StatusOK, do("GET", st.httpURL+"login", "", ""), "%s: the login page", name)
		require.Equal(t, http.StatusOK, do("GET", st.httpURL+"stats", user("viewer"), ""), "%s: a viewer looks", name)
		require.Equal(t, http.StatusForbidden, do("POST", st.httpURL+"jobs/bulk", user("viewer"), bulk), "%s: but does not remove", name)
		require.Equal(t, http.StatusOK, do("GET", st.httpURL+"stats", user("admin"), ""), name)
	}
}

// killNode sends SIGKILL to the node's process, by its pid file.
func killNode(t *testing.T, runDir, name string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(runDir, name+".pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
}

// freePortBase finds a base whose 41 ports (the script's NATS, route,
// memberlist and HTTP ports, and Redis at +40) are free on loopback, TCP
// and UDP, a moment ago. The bases lie below 32768, where Linux's default
// range of ephemeral ports begins: an outgoing connection of another test
// could otherwise take one of them between the check and the script.
func freePortBase(t *testing.T) int {
	t.Helper()
	for range 50 {
		base := 10000 + rand.IntN(227)*100 // up to 32640, +40 < 32768
		if portsFree(base, []int{0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32, 40}) {
			return base
		}
	}
	t.Fatal("no free range of ports found")
	return 0
}

func portsFree(base int, offsets []int) bool {
	for _, off := range offsets {
		addr := "127.0.0.1:" + strconv.Itoa(base+off)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return false
		}
		_ = ln.Close()
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return false
		}
		_ = pc.Close()
	}
	return true
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestLocalClusterUpOnATakenPort: up names a port that is taken and
// leaves nothing running. A TCP port taken is seen before anything
// starts; a UDP port taken (memberlist's, which the script cannot probe)
// makes that node exit after Redis and the other nodes started, and up
// then stops them all, by pid.
func TestLocalClusterUpOnATakenPort(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts redis-server and three nodes")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is not installed: scripts/install-deps.sh installs it")
	}
	bin := filepath.Join(t.TempDir(), "kuebus")
	build := exec.Command("go", "build", "-o", bin, "../cmd/kuebus")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build:\n%s", out)

	up := func(t *testing.T, base int) (string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "./local-cluster.sh", "up")
		cmd.Env = append(os.Environ(), "RUN_DIR="+t.TempDir(), "PORT_BASE="+strconv.Itoa(base),
			"REDIS_PORT="+strconv.Itoa(base+40), "REDIS_URL=", "KUEBUS_BIN="+bin, "WAIT=60")
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	t.Run("a TCP port taken is named and nothing starts", func(t *testing.T) {
		base := freePortBase(t)
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+31))
		require.NoError(t, err)
		defer ln.Close()
		out, err := up(t, base)
		require.Error(t, err, out)
		require.Contains(t, out, "local-cluster: port "+strconv.Itoa(base+31)+" (HTTP of node-b) is taken: nothing started")
		require.NotContains(t, out, "stopped what it started")
	})

	t.Run("a node that cannot bind makes up stop everything it started", func(t *testing.T) {
		base := freePortBase(t)
		pc, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(base+22))
		require.NoError(t, err)
		defer pc.Close()
		out, err := up(t, base)
		require.Error(t, err, out)
		require.Contains(t, out, "local-cluster: node-c exited: port "+strconv.Itoa(base+22)+" (memberlist of node-c) is taken")
		_, stopped, ok := strings.Cut(out, "local-cluster: up failed; stopped what it started: ")
		require.True(t, ok, out)
		stopped = strings.TrimSpace(strings.SplitN(stopped, "\n", 2)[0])
		for _, name := range []string{"node-c", "node-b", "node-a", "redis"} {
			require.Contains(t, stopped, name+" (pid ")
		}
		for _, f := range strings.Split(stopped, "(pid ")[1:] {
			pid, err := strconv.Atoi(strings.TrimRight(strings.Fields(f)[0], ",)"))
			require.NoError(t, err, stopped)
			require.False(t, running(pid), "pid %d still runs after up failed: %s", pid, stopped)
		}
	})
}

// running reports whether the process runs: it exists and is no zombie.
func running(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	// pid (comm) state ...: the state is the field after the last ')'.
	i := bytes.LastIndexByte(data, ')')
	return i < 0 || len(data) < i+3 || data[i+2] != 'Z'
}
