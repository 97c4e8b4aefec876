package outbox_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// binDir holds the kuebus-outbox the tests build, once per run; TestMain
// removes it.
var (
	binDir   string
	binOnce  sync.Once
	binPath  string
	binError error
)

// relayBinary builds kuebus-outbox (once) and returns its path.
func relayBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binError = os.MkdirTemp("", "kuebus-outbox-bin-")
		if binError != nil {
			return
		}
		binPath = filepath.Join(binDir, "kuebus-outbox")
		out, err := exec.Command("go", "build", "-race", "-o", binPath, "./cmd/kuebus-outbox").CombinedOutput()
		if err != nil {
			binError = err
			t.Logf("go build: %s", out)
		}
	})
	require.NoError(t, binError, "build kuebus-outbox")
	return binPath
}

// kuebusOutbox runs the binary to its end and returns its exit code,
// stdout and stderr.
func kuebusOutbox(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	return kuebusOutboxEnv(t, nil, args...)
}

// kuebusOutboxEnv is kuebusOutbox with variables set (NAME=VALUE).
func kuebusOutboxEnv(t testing.TB, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(relayBinary(t), args...)
	cmd.Env = append(append(os.Environ(), "KUEBUS_OUTBOX_DSN=", "KUEBUS_OUTBOX_DRIVER="), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return code, stdout.String(), stderr.String()
}

func TestTheCLIRefusesBadFlagsNamingThem(t *testing.T) {
	d := newSQLiteDB(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"an unknown driver", []string{"migrate", "--driver", "oracle", "--dsn", d.dsn}, `--driver: "oracle" is not postgres, mysql or sqlite`},
		{"no driver", []string{"migrate", "--dsn", d.dsn}, "--driver: missing"},
		{"no dsn", []string{"relay", "--driver", "sqlite"}, "--dsn: missing"},
		{"a batch size over core's limit", []string{"relay", "--driver", "sqlite", "--dsn", d.dsn, "--batch-size", "1001"}, "--batch-size: 1001 is outside 1..1000"},
		{"a poll interval of zero", []string{"relay", "--driver", "sqlite", "--dsn", d.dsn, "--poll-interval", "0s"}, "--poll-interval: 0s is not positive"},
		{"metrics beyond loopback", []string{"relay", "--driver", "sqlite", "--dsn", d.dsn, "--metrics-addr", "0.0.0.0:9100"}, "--metrics-addr: 0.0.0.0:9100 is beyond loopback"},
		{"an unknown command", []string{"relai"}, `unknown command "relai"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := kuebusOutbox(t, tc.args...)
			require.Equal(t, 2, code, stderr)
			require.Contains(t, stderr, tc.want)
		})
	}
	require.Zero(t, d.rows(t, "sqlite_master"), "nothing was made in the database")
}

func TestTheCLIMigratesAndCountsTheRows(t *testing.T) {
	d := newSQLiteDB(t)
	code, _, stderr := kuebusOutboxEnv(t, []string{"KUEBUS_OUTBOX_DRIVER=sqlite", "KUEBUS_OUTBOX_DSN=" + d.dsn}, "migrate")
	require.Equal(t, 0, code, stderr)
	ob := d.outbox(t) // Migrate again: nothing to do
	enqueue(t, d.db, ob, true, spec("a", 1), spec("a", 2))
	code, stdout, stderr := kuebusOutbox(t, "stats", "--driver", "sqlite", "--dsn", d.dsn)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, `"waiting":2`)
}

// startRelay starts `kuebus-outbox relay` on the database and NATS; the
// test stops it (kill -9 or SIGTERM) and waits for it.
func startRelay(t testing.TB, d *testDB, natsURL string, extra ...string) *exec.Cmd {
	t.Helper()
	args := append([]string{"relay", "--driver", d.dialect.String(), "--nats-url", natsURL, "--batch-size", "50", "--poll-interval", "20ms"}, extra...)
	cmd := exec.Command(relayBinary(t), args...)
	cmd.Env = append(os.Environ(), "KUEBUS_OUTBOX_DSN="+d.dsn)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("relay's stderr:\n%s", stderr.String())
		}
	})
	return cmd
}

// stopRelay stops a relay with SIGTERM and requires a clean exit.
func stopRelay(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), "the relay exits 0 on SIGTERM")
}

func TestTheRelayServesItsMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a relay binary")
	}
	d := newSQLiteDB(t)
	c := nodetest.NewCore(t, service.Config{})
	ob := d.outbox(t)
	port, err := freePort()
	require.NoError(t, err)
	relay := startRelay(t, d, c.NATS.ClientURL(), "--metrics-addr", fmt.Sprintf("127.0.0.1:%d", port))
	enqueue(t, d.db, ob, true, spec("metered", 1), spec("metered", 2))
	var body string
	require.Eventually(t, func() bool {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
		if err != nil {
			return false // not listening yet
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return strings.Contains(body, "kuebus_outbox_relayed_total 2\n")
	}, 60*time.Second, 10*time.Millisecond)
	require.Contains(t, body, "kuebus_outbox_rows_waiting 0\n")
	require.Contains(t, body, "kuebus_outbox_oldest_age_seconds 0.000\n")
	require.Contains(t, body, "kuebus_outbox_rows_dead 0\n")
	require.Contains(t, body, "kuebus_outbox_dead_total 0\n")
	stopRelay(t, relay)
}
