package redisproc

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// doAuthed sends AUTH password (as RESP, so any byte goes) and then an
// inline command on one connection, and returns both replies' first lines.
func doAuthed(t *testing.T, addr, password, command string) (auth, reply string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	_, err = fmt.Fprintf(conn, "*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n%s\r\n", len(password), password, command)
	require.NoError(t, err)
	r := bufio.NewReader(conn)
	auth, err = r.ReadString('\n')
	require.NoError(t, err)
	reply, err = r.ReadString('\n')
	require.NoError(t, err)
	return strings.TrimSpace(auth), strings.TrimSpace(reply)
}

func TestPassword(t *testing.T) {
	t.Parallel()
	const password = `p w"\x'#` // what a config file line would choke on
	s := start(t, Options{Password: password})

	requireReply(t, s.Addr(), "PING", "-NOAUTH Authentication required.")
	auth, reply := doAuthed(t, s.Addr(), password, "PING")
	require.Equal(t, "+OK", auth)
	require.Equal(t, "+PONG", reply)
	auth, _ = doAuthed(t, s.Addr(), "wrong", "PING")
	require.Contains(t, auth, "WRONGPASS")
	require.Equal(t, "redis://:p%20w%22%5Cx%27%23@"+s.Addr(), s.URL())

	// The password is on no command line: not in the one we start
	// redis-server with (redis-server rewrites what ps shows later, but
	// not before it has started), nor in what ps shows.
	require.NotContains(t, strings.Join(s.proc.cmd.Args, " "), "p w")
	require.Equal(t, "-", s.proc.cmd.Args[1], "the config comes on stdin")
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(s.Pid()) + "/cmdline")
	if err == nil { // Linux; elsewhere there is no such file to look at
		require.NotContains(t, string(cmdline), "p w")
	}

	require.NoError(t, s.Kill())
	require.NoError(t, s.Restart(t.Context()))
	requireReply(t, s.Addr(), "PING", "-NOAUTH Authentication required.")
	auth, reply = doAuthed(t, s.Addr(), password, "PING")
	require.Equal(t, "+OK", auth, "a restart keeps the password")
	require.Equal(t, "+PONG", reply)
}

func TestLoadOrCreatePassword(t *testing.T) {
	t.Parallel()

	t.Run("creates a random password once, mode 0600, and reuses it", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "data", "redis", "password")
		pw, err := LoadOrCreatePassword(path)
		require.NoError(t, err)
		require.Len(t, pw, 2*passwordBytes)
		info, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
		dir, err := os.Stat(filepath.Dir(path))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), dir.Mode().Perm())

		again, err := LoadOrCreatePassword(path)
		require.NoError(t, err)
		require.Equal(t, pw, again)
		other, err := LoadOrCreatePassword(filepath.Join(t.TempDir(), "password"))
		require.NoError(t, err)
		require.NotEqual(t, pw, other)
	})

	t.Run("a file others can read is made 0600", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "password")
		require.NoError(t, os.WriteFile(path, []byte("mine\n"), 0o644))
		require.NoError(t, os.Chmod(path, 0o644)) // whatever the umask
		pw, err := LoadOrCreatePassword(path)
		require.NoError(t, err)
		require.Equal(t, "mine", pw)
		info, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	})

	t.Run("an empty file is an error", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "password")
		require.NoError(t, os.WriteFile(path, []byte(" \n"), 0o600))
		_, err := LoadOrCreatePassword(path)
		require.EqualError(t, err, "redisproc: password file "+path+" is empty: write the Redis password in it, or remove it to get a new one")
	})
}

// TestConfigFileAndPassword: with a config file, which must be
// redis-server's first argument, the password still comes on stdin ("-"
// last), and the command line still overrides the file.
func TestConfigFileAndPassword(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	conf := filepath.Join(dir, "redis.conf")
	require.NoError(t, os.WriteFile(conf, []byte("maxmemory 1mb\nappendonly yes\n"), 0o600))
	s := start(t, Options{Dir: dir, ConfigFile: conf, Password: "pw"})
	require.Equal(t, conf, s.proc.cmd.Args[1])
	require.Equal(t, "-", s.proc.cmd.Args[len(s.proc.cmd.Args)-1])
	requireReply(t, s.Addr(), "PING", "-NOAUTH Authentication required.")
	info, err := Command(t.Context(), s.Addr(), "pw", "INFO", "memory")
	require.NoError(t, err)
	require.Contains(t, info, "maxmemory:1048576", "the file was read")
	info, err = Command(t.Context(), s.Addr(), "pw", "INFO", "persistence")
	require.NoError(t, err)
	require.Contains(t, info, "aof_enabled:0", "the command line (--appendonly no) overrides the file")
}
