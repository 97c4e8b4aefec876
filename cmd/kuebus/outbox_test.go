package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOutboxSaysHowToBuildKuebusOutboxWhenItIsMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := kuebus(t, "outbox", "relay", "--driver", "sqlite")
	require.Equal(t, exitFailure, r.code)
	require.Contains(t, r.stderr, "no kuebus-outbox next to kuebus or on PATH")
	require.Contains(t, r.stderr, "go build -o DIR/kuebus-outbox ./cmd/kuebus-outbox")
}

func TestOutboxRunsKuebusOutboxFromPathWithItsArgumentsAndExitCode(t *testing.T) {
	dir := t.TempDir()
	// A stand-in for the plugin: it prints its arguments and exits with
	// the code its first argument names.
	script := "#!/bin/sh\necho \"args: $*\"\necho oops >&2\nexit \"$2\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kuebus-outbox"), []byte(script), 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))

	r := kuebus(t, "outbox", "relay", "0", "--driver", "sqlite")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, "args: relay 0 --driver sqlite\n", r.stdout)

	r = kuebus(t, "outbox", "migrate", "2")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "oops\n")
	require.Contains(t, r.stderr, "kuebus-outbox exited with code 2")

	r = kuebus(t, "outbox", "stats", "3")
	require.Equal(t, exitFailure, r.code)
}

func TestOutboxHelpShowsExamplesWithoutTheBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := kuebus(t, "outbox", "--help")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "\nExamples:\n  KUEBUS_OUTBOX_DRIVER=sqlite KUEBUS_OUTBOX_DSN=file:app.db kuebus outbox migrate\n")
	r = kuebus(t, "outbox")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "outbox: missing command: relay, migrate or stats")
}
