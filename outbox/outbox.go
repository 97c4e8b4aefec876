package outbox

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// UniqueKeyPrefix starts the unique key Enqueue gives a spec that has none
// of its own: the relay's retries of one row answer the job the first try
// made (docs/outbox.md, "Exactly once").
const UniqueKeyPrefix = "outbox-"

// Outbox writes job specs into the kuebus_outbox table of one database,
// inside the caller's transactions, and reads them back for its Relay.
// It is safe for concurrent use.
type Outbox struct {
	db      *sql.DB
	dialect Dialect
	now     func() time.Time
	maxData int
}

// Open returns the outbox of db, whose SQL is dialect's. It does not touch
// the database: Migrate makes the tables. db must not be nil.
func Open(db *sql.DB, dialect Dialect) (*Outbox, error) {
	if db == nil {
		panic("outbox: Open with a nil *sql.DB")
	}
	if !dialect.valid() {
		return nil, core.Invalidf("dialect", "%s is not Postgres, MySQL or SQLite", dialect)
	}
	return &Outbox{db: db, dialect: dialect, now: time.Now, maxData: core.MaxDataBytesDefault}, nil
}

// Dialect is the database the outbox was opened for.
func (o *Outbox) Dialect() Dialect { return o.dialect }

// Migrate makes the outbox's tables, kuebus_outbox and kuebus_outbox_dead,
// when they do not exist, and on PostgreSQL the trigger that notifies the
// relay of each insert. It is safe to run again and from several processes
// at once.
func (o *Outbox) Migrate(ctx context.Context) error {
	tx, err := o.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("outbox: migrate: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, stmt := range o.dialect.migrations() {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("outbox: migrate: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("outbox: migrate: commit: %w", err)
	}
	return nil
}

// Enqueue writes spec inside tx: once tx commits, the relay creates its job
// (once), and if tx rolls back there is none. The spec is checked as core's
// create checks it, with core's default data limit; a bad one returns an
// invalid error naming the field and writes nothing. A spec without a
// unique key gets one of its own (UniqueKeyPrefix and 32 random hex
// digits), so the job shows it.
func (o *Outbox) Enqueue(ctx context.Context, tx *sql.Tx, spec core.Spec) error {
	return o.EnqueueBulk(ctx, tx, []core.Spec{spec})
}

// EnqueueBulk is Enqueue for many specs, in order: every spec is checked
// before any is written, so one bad spec writes none (the error names it
// by its index, "specs[3].type: …").
func (o *Outbox) EnqueueBulk(ctx context.Context, tx *sql.Tx, specs []core.Spec) error {
	if tx == nil {
		panic("outbox: Enqueue with a nil *sql.Tx")
	}
	rows := make([][]byte, len(specs))
	for i, sp := range specs {
		b, err := o.encode(sp)
		if err != nil {
			if len(specs) > 1 {
				err = bus.Errorf(bus.CodeInvalid, "specs[%d].%s", i, bus.MessageOf(err))
			}
			return fmt.Errorf("outbox: enqueue: %w", err)
		}
		rows[i] = b
	}
	if len(rows) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, o.dialect.insertRow())
	if err != nil {
		return fmt.Errorf("outbox: enqueue: %w", err)
	}
	defer func() { _ = stmt.Close() }()
	at := o.now().UnixMilli()
	for i, b := range rows {
		if _, err := stmt.ExecContext(ctx, specs[i].Type, string(b), at); err != nil {
			return fmt.Errorf("outbox: enqueue: insert into %s: %w", tableRows, err)
		}
	}
	return nil
}

// encode checks a copy of sp as create would and returns the JSON the
// relay sends: sp as given (so a type's defaults still apply to what it
// leaves out), with a unique key.
func (o *Outbox) encode(sp core.Spec) ([]byte, error) {
	check := sp
	if err := check.Normalize(o.maxData); err != nil {
		return nil, err
	}
	if sp.UniqueKey == "" {
		var b [16]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand's contract)
		sp.UniqueKey = UniqueKeyPrefix + hex.EncodeToString(b[:])
	}
	b, err := json.Marshal(sp)
	if err != nil {
		return nil, core.Invalidf("data", "%v", err)
	}
	return b, nil
}

// Stats is what the outbox holds: rows the relay has not moved yet, and
// rows core refused.
type Stats struct {
	// Waiting is how many rows wait in kuebus_outbox.
	Waiting int64 `json:"waiting"`
	// OldestAge is how long the oldest waiting row has waited, by this
	// process's clock against the enqueuer's (0 when none waits).
	OldestAge time.Duration `json:"oldest_age"`
	// Dead is how many rows core refused, kept in kuebus_outbox_dead.
	Dead int64 `json:"dead"`
}

// Stats counts the rows waiting and dead, and how old the oldest waiting
// row is. It reads committed rows only, with one cheap query (the count
// walks the table, which the relay keeps short).
func (o *Outbox) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	var oldest int64
	if err := o.db.QueryRowContext(ctx, o.dialect.stats()).Scan(&st.Waiting, &oldest, &st.Dead); err != nil {
		return st, fmt.Errorf("outbox: stats: %w", err)
	}
	if st.Waiting > 0 && oldest > 0 {
		st.OldestAge = max(0, o.now().Sub(time.UnixMilli(oldest)))
	}
	return st, nil
}

// Text is the stats in Prometheus's text format, for a relay's
// --metrics-addr or a node's metrics page.
func (st Stats) Text() string {
	return "# HELP kuebus_outbox_rows_waiting Rows in kuebus_outbox the relay has not moved to core yet.\n" +
		"# TYPE kuebus_outbox_rows_waiting gauge\n" +
		"kuebus_outbox_rows_waiting " + strconv.FormatInt(st.Waiting, 10) + "\n" +
		"# HELP kuebus_outbox_oldest_age_seconds How long the oldest waiting row has waited.\n" +
		"# TYPE kuebus_outbox_oldest_age_seconds gauge\n" +
		"kuebus_outbox_oldest_age_seconds " + strconv.FormatFloat(st.OldestAge.Seconds(), 'f', 3, 64) + "\n" +
		"# HELP kuebus_outbox_rows_dead Rows core refused, kept in kuebus_outbox_dead.\n" +
		"# TYPE kuebus_outbox_rows_dead gauge\n" +
		"kuebus_outbox_rows_dead " + strconv.FormatInt(st.Dead, 10) + "\n"
}
