// Command kuebus-outbox runs the outbox's relay and migrations
// (docs/outbox.md): `kuebus-outbox relay --driver postgres --dsn DSN`
// moves the rows that applications committed into kuebus_outbox to core;
// `migrate` makes the tables; `stats` prints what waits. It links the SQL
// drivers (pgx, go-sql-driver/mysql, modernc.org/sqlite), which is why it
// is a binary of the outbox module and not a command of kuebus:
// `kuebus outbox ...` runs it, found next to kuebus or on PATH.
//
// Files:
//
//	main.go  the commands, their flags and the metrics server
//	doc.go   this overview
package main
