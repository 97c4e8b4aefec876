package outbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// userProgram is an application in a module of its own that imports kuebus
// and its outbox module as a user's would: it enqueues in a rolled-back
// and in a committed transaction, drains the outbox and prints how many
// jobs of its type core holds.
const userProgram = `package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/outbox"
)

func main() {
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(dsn, natsURL string) error {
	ctx := context.Background()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ob, err := outbox.Open(db, outbox.Postgres)
	if err != nil {
		return err
	}
	if err := ob.Migrate(ctx); err != nil {
		return err
	}
	for _, commit := range []bool{false, true} {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for i := range 3 {
			if err := ob.Enqueue(ctx, tx, core.Spec{Type: "welcome", Data: json.RawMessage(fmt.Sprint(i))}); err != nil {
				return err
			}
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			return err
		}
	}
	nc, err := bus.Connect(natsURL, "user")
	if err != nil {
		return err
	}
	defer nc.Close()
	q, err := core.NewClient(nc, nil)
	if err != nil {
		return err
	}
	if err := ob.Relay(q, nil).Drain(ctx); err != nil {
		return err
	}
	n, err := q.Count(ctx, "", "welcome")
	if err != nil {
		return err
	}
	fmt.Printf("jobs: %d\n", n)
	return nil
}
`

func TestAUsersOwnModuleEnqueuesInItsTransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a program of its own")
	}
	here, err := os.Getwd()
	require.NoError(t, err)
	repo := filepath.Dir(here)
	dir := t.TempDir()
	gomod := "module example.com/shop\n\ngo 1.26.0\n\n" +
		"require (\n\tgithub.com/kuebus/kuebus v0.0.0\n\tgithub.com/kuebus/kuebus/outbox v0.0.0\n)\n\n" +
		"replace github.com/kuebus/kuebus => " + repo + "\n\n" +
		"replace github.com/kuebus/kuebus/outbox => " + here + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(userProgram), 0o644))
	// The outbox module's sums cover what the program needs.
	sums, err := os.ReadFile(filepath.Join(here, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644))
	bin := filepath.Join(dir, "shop")
	build := exec.Command("go", "mod", "tidy")
	build.Dir = dir
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go mod tidy: %s", out)
	build = exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	out, err = build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	c := nodetest.NewCore(t, service.Config{})
	d := newPostgresDB(t)
	out, err = exec.CommandContext(context.Background(), bin, d.dsn, c.NATS.ClientURL()).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "jobs: 3", strings.TrimSpace(string(out)), "the rolled-back transaction's three make none")
	require.Zero(t, d.rows(t, "kuebus_outbox"))
}
