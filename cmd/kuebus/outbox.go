package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// outboxBinary is the outbox's command (outbox/cmd/kuebus-outbox): a
// binary of the outbox module, which links the SQL drivers that kuebus
// must not (docs/outbox.md).
const outboxBinary = "kuebus-outbox"

// outboxStopGrace is how long `kuebus outbox` waits for its child after
// passing on SIGTERM, before it kills it.
const outboxStopGrace = 30 * time.Second

// runOutbox runs `kuebus-outbox ARGS...`, found next to this executable or
// on PATH, as git runs its plugins: its output is this command's, and a
// stop signal is passed on to it.
func runOutbox(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || (len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help")) {
		// kuebus's own help for the command, with or without the binary.
		fmt.Fprintf(e.stdout, "Usage:\n  kuebus outbox relay|migrate|stats [flags]\n\n"+
			"%s.\n\nRuns %s (found next to kuebus or on PATH) with the arguments given;\n"+
			"'kuebus outbox relay --help' lists relay's flags.\n", e.cmd.summary, outboxBinary)
		if len(args) == 0 {
			return usagef("outbox: missing command: relay, migrate or stats")
		}
		return errHelp
	}
	path, err := findOutboxBinary()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, e.stdout, e.stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = outboxStopGrace
	err = cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.Exited() {
		// The child said what went wrong; its exit code is ours.
		if ee.ExitCode() == exitUsage {
			return usagef("outbox: %s exited with code %d", outboxBinary, exitUsage)
		}
		return fmt.Errorf("outbox: %s exited with code %d", outboxBinary, ee.ExitCode())
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("outbox: run %s: %w", path, err)
	}
	return nil
}

// findOutboxBinary looks beside this executable first (a release puts
// both in one folder), then on PATH.
func findOutboxBinary() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), outboxBinary)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(outboxBinary); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("outbox: no %s next to kuebus or on PATH; build it from the kuebus repository with "+
		"`cd outbox && go build -o DIR/%s ./cmd/%s` (it is a module of its own, so that kuebus links no SQL driver)",
		outboxBinary, outboxBinary, outboxBinary)
}
