package outbox_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/kuebus/kuebus/node/nodetest"
)

// pg is the suite's PostgreSQL, started by TestMain.
var pg *pgServer

// TestMain starts a PostgreSQL of the suite's own and a Redis (nodetest),
// and fails every test when either cannot start: a suite that skips its
// database proves nothing.
func TestMain(m *testing.M) {
	var err error
	pg, err = startPostgres(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "outbox: cannot start PostgreSQL: %v\n", err)
		os.Exit(1)
	}
	code := nodetest.Main(m)
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	if err := pg.stop(); err != nil {
		fmt.Fprintf(os.Stderr, "outbox: stop PostgreSQL: %v\n", err)
		code = max(code, 1)
	}
	os.Exit(code)
}
