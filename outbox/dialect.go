package outbox

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kuebus/kuebus/core"
)

// Dialect is the SQL database an Outbox writes to. Each one gets the SQL
// it understands: its placeholders, its column types, and its way to keep
// two relays off the same rows (Relay).
type Dialect int

// The databases the outbox supports.
const (
	// Postgres is PostgreSQL (any driver; LISTEN/NOTIFY needs pgx's stdlib
	// driver, github.com/jackc/pgx/v5/stdlib, else the relay polls).
	Postgres Dialect = iota + 1
	// MySQL is MySQL 8.0+ or MariaDB 10.6+ (they have FOR UPDATE SKIP LOCKED).
	MySQL
	// SQLite is SQLite 3.35+, through any database/sql driver.
	SQLite
)

// String is the dialect's name as --driver takes it.
func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "postgres"
	case MySQL:
		return "mysql"
	case SQLite:
		return "sqlite"
	}
	return "dialect(" + strconv.Itoa(int(d)) + ")"
}

// ParseDialect reads a dialect's name: postgres (or postgresql, pgx),
// mysql (or mariadb), sqlite (or sqlite3). Anything else is invalid.
func ParseDialect(name string) (Dialect, error) {
	switch strings.ToLower(name) {
	case "postgres", "postgresql", "pgx":
		return Postgres, nil
	case "mysql", "mariadb":
		return MySQL, nil
	case "sqlite", "sqlite3":
		return SQLite, nil
	}
	return 0, core.Invalidf("dialect", "%q is not postgres, mysql or sqlite", name)
}

func (d Dialect) valid() bool { return d >= Postgres && d <= SQLite }

// The tables the outbox owns. Their names are fixed: one outbox per
// database schema (a PostgreSQL search_path, a MySQL database, an SQLite
// file).
const (
	tableRows = "kuebus_outbox"      // rows waiting for the relay
	tableDead = "kuebus_outbox_dead" // rows core refused, kept for a person
	// notifyChannel is the PostgreSQL channel the insert trigger notifies.
	notifyChannel = "kuebus_outbox"
)

// migrations are the statements Migrate runs, in order; each is safe to
// run again.
func (d Dialect) migrations() []string {
	switch d {
	case Postgres:
		return []string{
			// One migrator at a time: two CREATE ... IF NOT EXISTS racing
			// can both miss the table and one fail on the unique catalog row.
			`SELECT pg_advisory_xact_lock(7301547730154773)`,
			`CREATE TABLE IF NOT EXISTS ` + tableRows + ` (
	id bigserial PRIMARY KEY,
	job_type text NOT NULL,
	spec text NOT NULL,
	created_at bigint NOT NULL
)`,
			`CREATE TABLE IF NOT EXISTS ` + tableDead + ` (
	id bigint PRIMARY KEY,
	job_type text NOT NULL,
	spec text NOT NULL,
	created_at bigint NOT NULL,
	failed_at bigint NOT NULL,
	error text NOT NULL
)`,
			`CREATE OR REPLACE FUNCTION kuebus_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('` + notifyChannel + `', '');
	RETURN NULL;
END
$$`,
			// Once per statement, not per row: the relay reads every row
			// on one wake, and PostgreSQL folds equal notifications of one
			// transaction into one anyway.
			`DROP TRIGGER IF EXISTS kuebus_outbox_notify ON ` + tableRows,
			`CREATE TRIGGER kuebus_outbox_notify AFTER INSERT ON ` + tableRows +
				` FOR EACH STATEMENT EXECUTE FUNCTION kuebus_outbox_notify()`,
		}
	case MySQL:
		return []string{
			`CREATE TABLE IF NOT EXISTS ` + tableRows + ` (
	id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	job_type VARCHAR(128) NOT NULL,
	spec LONGTEXT NOT NULL,
	created_at BIGINT NOT NULL
) ENGINE=InnoDB`,
			`CREATE TABLE IF NOT EXISTS ` + tableDead + ` (
	id BIGINT NOT NULL PRIMARY KEY,
	job_type VARCHAR(128) NOT NULL,
	spec LONGTEXT NOT NULL,
	created_at BIGINT NOT NULL,
	failed_at BIGINT NOT NULL,
	error TEXT NOT NULL
) ENGINE=InnoDB`,
		}
	default:
		return []string{
			// AUTOINCREMENT: ids never come back after the rows holding
			// the highest ones are deleted, so rows stay in commit order.
			`CREATE TABLE IF NOT EXISTS ` + tableRows + ` (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	job_type TEXT NOT NULL,
	spec TEXT NOT NULL,
	created_at INTEGER NOT NULL
)`,
			`CREATE TABLE IF NOT EXISTS ` + tableDead + ` (
	id INTEGER PRIMARY KEY,
	job_type TEXT NOT NULL,
	spec TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	failed_at INTEGER NOT NULL,
	error TEXT NOT NULL
)`,
		}
	}
}

// arg is the n-th (from 1) placeholder of a statement.
func (d Dialect) arg(n int) string {
	if d == Postgres {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// args is the placeholders from..from+n-1, comma-separated.
func (d Dialect) args(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(d.arg(from + i))
	}
	return b.String()
}

func (d Dialect) insertRow() string {
	return fmt.Sprintf("INSERT INTO %s (job_type, spec, created_at) VALUES (%s)", tableRows, d.args(1, 3))
}

// selectBatch reads the oldest rows and, where the database can, locks
// them so that another relay skips them rather than waits.
func (d Dialect) selectBatch() string {
	q := fmt.Sprintf("SELECT id, job_type, spec, created_at FROM %s ORDER BY id LIMIT %s", tableRows, d.arg(1))
	if d != SQLite {
		// SQLite has no row locks: Relay takes the database's write lock
		// (BEGIN IMMEDIATE) before this select instead.
		q += " FOR UPDATE SKIP LOCKED"
	}
	return q
}

func (d Dialect) deleteRows(n int) string {
	return fmt.Sprintf("DELETE FROM %s WHERE id IN (%s)", tableRows, d.args(1, n))
}

func (d Dialect) insertDead() string {
	return fmt.Sprintf("INSERT INTO %s (id, job_type, spec, created_at, failed_at, error) VALUES (%s)", tableDead, d.args(1, 6))
}

func (d Dialect) stats() string {
	return fmt.Sprintf("SELECT COUNT(*), COALESCE(MIN(created_at), 0), (SELECT COUNT(*) FROM %s) FROM %s", tableDead, tableRows)
}
