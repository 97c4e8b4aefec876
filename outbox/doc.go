// Package outbox enqueues kuebus jobs inside the application's own SQL
// transaction (DESIGN §10.3): a job exists if and only if the transaction
// that asked for it commits.
//
// Enqueue writes the job's spec as a row of the table kuebus_outbox in the
// caller's *sql.Tx. A Relay reads the committed rows, oldest first, creates
// their jobs with core's create_bulk and deletes the rows, each row's job
// exactly once (docs/outbox.md gives the argument and its limits). On
// PostgreSQL the relay wakes on NOTIFY from an insert trigger; on MySQL
// and SQLite it polls.
//
// The package is a Go module of its own, so that the kuebus module, and
// every binary built from it, links no SQL driver. It imports pgx's stdlib
// driver (for LISTEN) and no other driver: the application opens its
// *sql.DB with the driver it already uses.
//
// Files:
//
//	dialect.go  Dialect, and the SQL each database gets
//	outbox.go   Open, Migrate, Enqueue, EnqueueBulk, Stats
//	relay.go    Relay: batches of rows to create_bulk, dead rows
//	listen.go   the relay's LISTEN on PostgreSQL
//	doc.go      this overview
package outbox
