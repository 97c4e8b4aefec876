package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	clusterconfig "github.com/kuebus/kuebus/cluster-config"
)

// OutboxBinary is the outbox's relay command (outbox/cmd/kuebus-outbox), a
// binary of the outbox module: it links the SQL drivers that kuebus must
// not, so a node runs it as a child process.
const OutboxBinary = "kuebus-outbox"

// Restart pauses of the outbox relay child: doubled after each exit, from
// the first to the most; a run longer than the most starts again from the
// first.
const (
	outboxRestartFirst = time.Second
	outboxRestartMost  = 30 * time.Second
)

// FindOutboxBinary finds kuebus-outbox: next to this executable first (a
// release puts both in one folder), then on PATH. The error says how to
// build it.
func FindOutboxBinary() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), OutboxBinary)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(OutboxBinary); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("no %s next to kuebus or on PATH; build it from the kuebus repository with "+
		"`cd outbox && go build -o DIR/%s ./cmd/%s` (it is a module of its own, so that kuebus links no SQL driver)",
		OutboxBinary, OutboxBinary, OutboxBinary)
}

// outboxTask is the outbox role's leader task: for as long as the node
// leads (ctx), it keeps one `kuebus-outbox relay` child running on the
// configured database and the node's NATS, restarting it when it exits,
// and stops it with SIGTERM (then, after shutdown_timeout, SIGKILL) when
// ctx ends. It returns nil then; a relay that fails is logged and
// restarted, never the end of the term: the promote loops go on.
func (n *Node) outboxTask(ctx context.Context) error {
	pause := outboxRestartFirst
	for ctx.Err() == nil {
		started := time.Now()
		err := n.runOutboxRelay(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(started) > outboxRestartMost {
			pause = outboxRestartFirst
		}
		n.log.Error("outbox relay exited; starting it again", "error", err, "in", pause)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		pause = min(2*pause, outboxRestartMost)
	}
	return nil
}

// runOutboxRelay runs the relay child once, until it exits or ctx ends.
func (n *Node) runOutboxRelay(ctx context.Context) error {
	o := n.cfg.Outbox
	bin := o.Binary
	if bin == "" {
		var err error
		if bin, err = FindOutboxBinary(); err != nil {
			return err
		}
	}
	args := []string{"relay", "--driver", o.Driver, "--nats-url", n.info.NATSURL}
	if n.cfg.Prefix != "" {
		args = append(args, "--prefix", n.cfg.Prefix)
	}
	cmd := exec.CommandContext(ctx, bin, append(args, o.Args...)...)
	cmd.Env = append(outboxEnv(os.Environ()), n.outboxSecrets()...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = n.cfg.ShutdownTimeout
	logs := &lineLogger{log: func(line string) { n.log.Info("outbox relay", "line", line) }}
	cmd.Stdout, cmd.Stderr = logs, logs
	n.log.Info("outbox relay starting", "binary", bin, "driver", o.Driver)
	err := cmd.Run()
	logs.flush()
	if err != nil {
		return fmt.Errorf("node: outbox relay %s: %w", bin, err)
	}
	return errors.New("node: outbox relay exited")
}

// outboxEnv is the node's environment without the variables that would
// give the child another DSN or other NATS credentials than the node's.
func outboxEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, "KUEBUS_NATS_") || strings.HasPrefix(kv, "KUEBUS_OUTBOX_DSN=")
	})
}

// outboxSecrets are the child's DSN and NATS credentials, as variables:
// a secret in a variable stays out of `ps`. On the embedded NATS the
// relay logs in with its token (Validate refuses a server locked with
// users only); on an external NATS, with the node's own credentials.
func (n *Node) outboxSecrets() []string {
	env := []string{"KUEBUS_OUTBOX_DSN=" + n.cfg.Outbox.DSN}
	add := func(name, value string) {
		if value != "" {
			env = append(env, name+"="+value)
		}
	}
	if e := n.cfg.NATS.Embedded; e != nil && n.cfg.Has(clusterconfig.RoleNATS) {
		add("KUEBUS_NATS_TOKEN", e.Token)
		return env
	}
	if x := n.cfg.NATS.External; x != nil {
		add("KUEBUS_NATS_TOKEN", x.Token)
		add("KUEBUS_NATS_USER", x.User)
		add("KUEBUS_NATS_PASSWORD", x.Password)
		add("KUEBUS_NATS_NKEY", x.NkeySeedFile)
		add("KUEBUS_NATS_CREDS", x.CredsFile)
		if x.TLS != nil {
			add("KUEBUS_NATS_TLS_CA", x.TLS.CA)
			add("KUEBUS_NATS_TLS_CERT", x.TLS.Cert)
			add("KUEBUS_NATS_TLS_KEY", x.TLS.Key)
		}
	}
	return env
}

// lineLogger logs what a child writes, a line at a time. exec.Cmd writes
// to it from one goroutine.
type lineLogger struct {
	log  func(string)
	part []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.part = append(l.part, p...)
	for {
		i := slices.Index(l.part, '\n')
		if i < 0 {
			break
		}
		l.log(string(l.part[:i]))
		l.part = l.part[i+1:]
	}
	if len(l.part) > 64<<10 {
		l.flush() // a line that long is cut, not held
	}
	return len(p), nil
}

func (l *lineLogger) flush() {
	if len(l.part) > 0 {
		l.log(string(l.part))
		l.part = nil
	}
}

var _ io.Writer = (*lineLogger)(nil)
