package outbox_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/kuebus/kuebus/node/nodetest"
)

// pg and maria are the suite's PostgreSQL and MariaDB, started by
// TestMain.
var (
	pg    *pgServer
	maria *mariaServer
)

// TestMain starts a PostgreSQL and a MariaDB of the suite's own and a Redis
// (nodetest), and fails every test when one cannot start: a suite that
// skips its database proves nothing.
func TestMain(m *testing.M) {
	var err error
	pg, err = startPostgres(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "outbox: cannot start PostgreSQL: %v\n", err)
		os.Exit(1)
	}
	maria, err = startMariaDB(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "outbox: cannot start MariaDB: %v\n", err)
		_ = pg.stop()
		os.Exit(1)
	}
	code := nodetest.Main(m)
	if err := maria.stop(); err != nil {
		fmt.Fprintf(os.Stderr, "outbox: stop MariaDB: %v\n", err)
		code = max(code, 1)
	}
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	if err := pg.stop(); err != nil {
		fmt.Fprintf(os.Stderr, "outbox: stop PostgreSQL: %v\n", err)
		code = max(code, 1)
	}
	os.Exit(code)
}
