package redisproc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain checks that no goroutine (such as a process's Wait goroutine)
// outlives the tests.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		orphanHelper()
		return
	}
	goleak.VerifyTestMain(m)
}

const helperEnv = "REDISPROC_TEST_ORPHAN_HELPER"

// orphanHelper runs in a child test binary: it starts a redis-server, prints
// its address and waits to be killed, leaving the server behind. The data dir
// is the parent test's, for it to clean up.
func orphanHelper() {
	s, err := Start(context.Background(), Options{Dir: os.Getenv(helperEnv)})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(s.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin) // until killed
	os.Exit(1)
}

// start starts a server for one test and stops it at its end.
func start(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(t.Context(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Stop()) })
	return s
}

// do sends one inline command on a new connection and returns the reply:
// the first line without its CRLF, or the content of a bulk string.
func do(addr, command string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(conn, command+"\r\n"); err != nil {
		return "", err
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if !strings.HasPrefix(line, "$") || line == "$-1" {
		return line, nil
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil {
		return "", fmt.Errorf("bad bulk header %q", line)
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(r, buf); err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

func requireReply(t *testing.T, addr, command, want string) {
	t.Helper()
	got, err := do(addr, command)
	require.NoError(t, err, "%s on %s", command, addr)
	require.Equal(t, want, got, "%s on %s", command, addr)
}

func requireRefused(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		conn.Close()
		t.Fatalf("%s still accepts connections", addr)
	}
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
}

func TestStartPingStop(t *testing.T) {
	t.Parallel()
	s, err := Start(t.Context(), Options{})
	require.NoError(t, err)

	require.NotZero(t, s.Port())
	require.Equal(t, "127.0.0.1:"+strconv.Itoa(s.Port()), s.Addr())
	require.Equal(t, "redis://"+s.Addr(), s.URL())
	require.Positive(t, s.Pid())
	requireReply(t, s.Addr(), "PING", "+PONG")
	dir := s.opts.Dir
	require.DirExists(t, dir)

	require.NoError(t, s.Stop())
	requireRefused(t, s.Addr())
	require.NoDirExists(t, dir, "Stop removes the temporary data dir")
	require.NoError(t, s.Stop(), "Stop is idempotent")
}

func TestStopConcurrent(t *testing.T) {
	t.Parallel()
	s, err := Start(t.Context(), Options{})
	require.NoError(t, err)

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = s.Stop() })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	requireRefused(t, s.Addr())
}

func TestAppendOnlyDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data", "redis") // does not exist yet
	s := start(t, Options{Dir: dir, AppendOnly: true})
	requireReply(t, s.Addr(), "SET a b", "+OK")

	// Redis writes the AOF before it replies, so the command is in the
	// file now (Redis 7: appendonlydir/*.incr.aof; older: appendonly.aof).
	var found []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(filepath.Base(path), "appendonly") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte("SET\r\n$1\r\na\r\n$1\r\nb\r\n")) {
			found = append(found, path)
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, found, "no appendonly file under %s holds SET a b", dir)

	require.NoError(t, s.Stop())
	require.DirExists(t, dir, "Stop keeps a given Dir")
}

func TestAppendOnlyOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := start(t, Options{Dir: dir})
	requireReply(t, s.Addr(), "SET a b", "+OK")
	require.NoError(t, s.Stop())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "no AOF and no RDB snapshot expected")
}

func TestKillRestartSamePort(t *testing.T) {
	t.Parallel()
	s := start(t, Options{AppendOnly: true})
	port, pid := s.Port(), s.Pid()
	requireReply(t, s.Addr(), "SET a b", "+OK")

	require.NoError(t, s.Kill())
	requireRefused(t, s.Addr())
	require.NoError(t, s.Kill(), "killing a dead server does nothing")

	require.NoError(t, s.Restart(t.Context()))
	require.Equal(t, port, s.Port())
	require.NotEqual(t, pid, s.Pid())
	requireReply(t, s.Addr(), "PING", "+PONG")
	requireReply(t, s.Addr(), "GET a", "b") // from the AOF in the kept temp dir
}

func TestRestartRunning(t *testing.T) {
	t.Parallel()
	s := start(t, Options{AppendOnly: true})
	pid := s.Pid()
	requireReply(t, s.Addr(), "SET a b", "+OK")

	require.NoError(t, s.Restart(t.Context()))
	require.NotEqual(t, pid, s.Pid())
	requireReply(t, s.Addr(), "GET a", "b")
}

func TestRestartAfterStop(t *testing.T) {
	t.Parallel()
	s, err := Start(t.Context(), Options{})
	require.NoError(t, err)
	require.NoError(t, s.Stop())
	err = s.Restart(t.Context())
	require.ErrorContains(t, err, "redisproc: restart redis-server on "+s.Addr())
	require.ErrorContains(t, err, "stopped")
}

func TestNotInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Start(t.Context(), Options{})
	require.ErrorIs(t, err, ErrNotInstalled)
	require.ErrorContains(t, err, "apt-get install -y redis-server")
}

func TestBinaryMissing(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "no", "redis-server")
	_, err := Start(t.Context(), Options{Binary: bin})
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrNotInstalled, "an explicit binary is not looked up in PATH")
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorContains(t, err, bin)
}

func TestBadExtraArgs(t *testing.T) {
	t.Parallel()
	_, err := Start(t.Context(), Options{ExtraArgs: []string{"--no-such-option"}})
	require.Error(t, err)
	require.ErrorContains(t, err, "exited during startup")
	require.ErrorContains(t, err, "exit status 1")
	require.ErrorContains(t, err, "Bad directive", "the error carries redis-server's output")
	require.ErrorContains(t, err, "no-such-option")
}

func TestPortInUse(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port

	s, err := Start(t.Context(), Options{Port: port})
	if err == nil {
		s.Stop()
	}
	require.ErrorContains(t, err, fmt.Sprintf("redisproc: start redis-server on 127.0.0.1:%d: exited during startup", port))
	require.ErrorContains(t, err, "in use")
}

// A picked port that is taken before redis-server binds it is retried on
// another one. Not parallel: it replaces pickPort while no other test runs.
func TestPickedPortTakenRetries(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port

	var picks int
	t.Cleanup(func() { pickPort = freePort })
	pickPort = func() (int, error) {
		picks++
		if picks == 1 {
			return busy, nil
		}
		return freePort()
	}
	s := start(t, Options{})
	require.Equal(t, 2, picks)
	require.NotEqual(t, busy, s.Port())
	requireReply(t, s.Addr(), "PING", "+PONG")

	picks = 0
	pickPort = func() (int, error) { picks++; return busy, nil }
	_, err = Start(t.Context(), Options{})
	require.ErrorContains(t, err, "in use")
	require.Equal(t, portAttempts, picks)
}

// A port held by another redis-server answers PONG, but the server must not
// take it for its own child.
func TestPortHeldByOtherRedis(t *testing.T) {
	t.Parallel()
	other := start(t, Options{})
	s, err := Start(t.Context(), Options{Port: other.Port()})
	if err == nil {
		s.Stop()
	}
	require.ErrorContains(t, err, "exited during startup")
	requireReply(t, other.Addr(), "PING", "+PONG")
}

func TestStartTimeout(t *testing.T) {
	t.Parallel()
	// A "redis-server" that never listens.
	bin := filepath.Join(t.TempDir(), "redis-server")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho never listening\nexec sleep 600\n"), 0o755))

	_, err := Start(t.Context(), Options{Binary: bin, Port: 1, StartTimeout: 200 * time.Millisecond})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "redisproc: start redis-server on 127.0.0.1:1: no PONG within 200ms")
	require.ErrorContains(t, err, "never listening")
}

func TestStartCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := Start(ctx, Options{})
	require.ErrorIs(t, err, context.Canceled)
}

// A redis-server that does not react to SIGTERM is killed after the grace
// period. SIGSTOP stands in for a hung server.
func TestStopEscalatesToKill(t *testing.T) {
	t.Parallel()
	s, err := Start(t.Context(), Options{})
	require.NoError(t, err)
	s.stopGrace = 100 * time.Millisecond
	require.NoError(t, syscall.Kill(s.Pid(), syscall.SIGSTOP))

	err = s.Stop()
	require.ErrorContains(t, err, "sent SIGKILL")
	requireRefused(t, s.Addr())
	require.NoError(t, s.Stop())
}

func TestLogger(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := Start(t.Context(), Options{Logger: log})
	require.NoError(t, err)
	pid := s.Pid()
	require.NoError(t, s.Stop())

	out := buf.String()
	require.Contains(t, out, "redis-server started")
	require.Contains(t, out, "redis-server stopped")
	require.Equal(t, 2, strings.Count(out, "pid="+strconv.Itoa(pid)), out)
	require.Equal(t, 2, strings.Count(out, "addr="+s.Addr()), out)
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	b := newTailBuffer(3)
	require.Empty(t, b.String())

	fmt.Fprint(b, "one\r\ntwo\nthr")
	require.Equal(t, "one\ntwo\nthr", b.String())
	fmt.Fprint(b, "ee\nfour\nfive\nsi")
	require.Equal(t, "three\nfour\nfive\nsi", b.String())
	fmt.Fprint(b, "x\n")
	require.Equal(t, "four\nfive\nsix", b.String())

	b = newTailBuffer(2)
	fmt.Fprint(b, strings.Repeat("x", 2*maxLineLen)+"\n")
	require.Len(t, b.String(), maxLineLen)
}

// A parent that is killed does not leave its redis-server behind (Linux:
// Pdeathsig).
func TestParentKilledTakesRedisDown(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux only")
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+t.TempDir())
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	addr := strings.TrimSpace(line)
	requireReply(t, addr, "PING", "+PONG")

	require.NoError(t, cmd.Process.Kill())
	require.Error(t, cmd.Wait())

	// The kernel kills redis-server when the helper dies; wait for its port
	// to close.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for backoff := 5 * time.Millisecond; ; backoff = min(2*backoff, 100*time.Millisecond) {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		switch {
		case errors.Is(err, syscall.ECONNRESET):
			// redis-server is dying: its listener is going, not gone yet.
		case err != nil:
			require.ErrorIs(t, err, syscall.ECONNREFUSED)
			return
		default:
			conn.Close()
		}
		select {
		case <-ctx.Done():
			t.Fatalf("redis-server on %s outlived its killed parent", addr)
		case <-time.After(backoff):
		}
	}
}
