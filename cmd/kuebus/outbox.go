package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/kuebus/kuebus/node"
)

// outboxBinary is the outbox's command (outbox/cmd/kuebus-outbox): a
// binary of the outbox module, which links the SQL drivers that kuebus
// must not (docs/outbox.md).
const outboxBinary = node.OutboxBinary

// outboxExamples are the command's examples, one a line. They give the
// database in variables, which kuebus-outbox reads, so that they name no
// flag that kuebus's help of the command does not list.
const outboxExamples = "KUEBUS_OUTBOX_DRIVER=sqlite KUEBUS_OUTBOX_DSN=file:app.db kuebus outbox migrate\n" +
	"KUEBUS_OUTBOX_DRIVER=postgres KUEBUS_OUTBOX_DSN=postgres://app@127.0.0.1/shop kuebus outbox relay"

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
			"'kuebus outbox relay --help' lists relay's flags.\n\nExamples:\n  %s\n",
			e.cmd.summary, outboxBinary, strings.ReplaceAll(outboxExamples, "\n", "\n  "))
		if len(args) == 0 {
			return usagef("outbox: missing command: relay, migrate or stats")
		}
		return errHelp
	}
	path, err := node.FindOutboxBinary()
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
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
