package outbox_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/kuebus/kuebus/outbox"
)

// testDB is one empty database of a dialect, for one test.
type testDB struct {
	dialect outbox.Dialect
	driver  string // database/sql driver name
	dsn     string
	db      *sql.DB
}

// forEachDB runs fn as a subtest on a fresh database of each dialect:
// PostgreSQL, MariaDB (for MySQL) and SQLite.
func forEachDB(t *testing.T, fn func(t *testing.T, d *testDB)) {
	t.Run("on PostgreSQL", func(t *testing.T) { fn(t, newPostgresDB(t)) })
	t.Run("on MariaDB", func(t *testing.T) { fn(t, newMariaDB(t)) })
	t.Run("on SQLite", func(t *testing.T) { fn(t, newSQLiteDB(t)) })
}

// newPostgresDB creates a database of its own on the suite's PostgreSQL,
// dropped when the test ends.
func newPostgresDB(t testing.TB) *testDB {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "t" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", pg.dsn("postgres"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	_, err = admin.ExecContext(context.Background(), "CREATE DATABASE "+name)
	require.NoError(t, err)
	d := &testDB{dialect: outbox.Postgres, driver: "pgx", dsn: pg.dsn(name)}
	d.db = d.open(t)
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)")
	})
	return d
}

// newMariaDB creates a database of its own on the suite's MariaDB,
// dropped when the test ends.
func newMariaDB(t testing.TB) *testDB {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "t" + hex.EncodeToString(b)
	admin, err := sql.Open("mysql", maria.dsn(""))
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	_, err = admin.ExecContext(context.Background(), "CREATE DATABASE "+name)
	require.NoError(t, err)
	d := &testDB{dialect: outbox.MySQL, driver: "mysql", dsn: maria.dsn(name)}
	d.db = d.open(t)
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE "+name)
	})
	return d
}

// newSQLiteDB is an SQLite file in the test's folder, in WAL mode with a
// busy timeout, as an application sharing it with a relay would open it.
func newSQLiteDB(t testing.TB) *testDB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.db")
	d := &testDB{dialect: outbox.SQLite, driver: "sqlite",
		dsn: "file:" + path + "?_pragma=busy_timeout(20000)&_pragma=journal_mode(WAL)"}
	d.db = d.open(t)
	return d
}

// open opens another *sql.DB on the database, closed when the test ends.
func (d *testDB) open(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open(d.driver, d.dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// outbox opens and migrates the database's outbox.
func (d *testDB) outbox(t testing.TB) *outbox.Outbox {
	t.Helper()
	ob, err := outbox.Open(d.db, d.dialect)
	require.NoError(t, err)
	require.NoError(t, ob.Migrate(context.Background()))
	return ob
}

// rows counts the rows of a table.
func (d *testDB) rows(t testing.TB, table string) int {
	t.Helper()
	var n int
	require.NoError(t, d.db.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM "+table).Scan(&n))
	return n
}
