package outbox

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kuebus/kuebus/core"
)

// Defaults of RelayOptions.
const (
	BatchSizeDefault     = 500
	MaxBatchSize         = 1000 // core's limit of specs per create_bulk
	BatchBytesDefault    = 512 << 10
	PollIntervalDefault  = 500 * time.Millisecond
	ListenPollDefault    = 5 * time.Second
	BatchTimeoutDefault  = 30 * time.Second
	retryBackoffFirst    = 100 * time.Millisecond
	retryBackoffMax      = 5 * time.Second
	sqliteBusyTimeoutSet = 5000 // ms, on the relay's connection when it had none
)

// RelayOptions tune a Relay; nil or zero fields take their defaults.
type RelayOptions struct {
	// BatchSize is how many rows one create_bulk carries at most. Default
	// 500, at most 1000.
	BatchSize int
	// BatchBytes bounds the specs' JSON in one create_bulk, so that a
	// batch of large specs stays under NATS's payload limit; a single row
	// larger than it goes alone. Default 512 KiB.
	BatchBytes int
	// PollInterval is how long the relay waits before it looks again when
	// the table was empty, on MySQL and SQLite (and on PostgreSQL when it
	// cannot LISTEN). Default 500 ms.
	PollInterval time.Duration
	// ListenPoll is how long the relay waits between looks on PostgreSQL
	// while it LISTENs, in case a notification was lost with its
	// connection. Default 5 s.
	ListenPoll time.Duration
	// BatchTimeout bounds one batch: the select, the create and the
	// delete. A batch under way when Run's ctx ends finishes within it.
	// Default 30 s.
	BatchTimeout time.Duration
	// Logger gets the relay's errors and dead rows. Default: none.
	Logger *slog.Logger
}

func (o *RelayOptions) withDefaults() RelayOptions {
	var c RelayOptions
	if o != nil {
		c = *o
	}
	c.BatchSize = min(cmp.Or(c.BatchSize, BatchSizeDefault), MaxBatchSize)
	c.BatchBytes = cmp.Or(c.BatchBytes, BatchBytesDefault)
	c.PollInterval = cmp.Or(c.PollInterval, PollIntervalDefault)
	c.ListenPoll = cmp.Or(c.ListenPoll, ListenPollDefault)
	c.BatchTimeout = cmp.Or(c.BatchTimeout, BatchTimeoutDefault)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

func (o RelayOptions) validate() error {
	switch {
	case o.BatchSize < 0:
		return core.Invalidf("batch_size", "%d is negative", o.BatchSize)
	case o.BatchBytes < 0:
		return core.Invalidf("batch_bytes", "%d is negative", o.BatchBytes)
	case o.PollInterval < 0:
		return core.Invalidf("poll_interval", "%s is negative", o.PollInterval)
	case o.ListenPoll < 0:
		return core.Invalidf("listen_poll", "%s is negative", o.ListenPoll)
	case o.BatchTimeout < 0:
		return core.Invalidf("batch_timeout", "%s is negative", o.BatchTimeout)
	}
	return nil
}

// Creator is what the relay needs of core: *core.Client's bulk create.
type Creator interface {
	CreateBulkIDs(ctx context.Context, specs []core.Spec) ([]int64, error)
}

var _ Creator = (*core.Client)(nil)

// Relay moves committed rows of an outbox to core, oldest first, and
// deletes them once their jobs exist. See docs/outbox.md for why each row
// makes exactly one job, and what the limits of that are.
type Relay struct {
	ob     *Outbox
	client Creator
	opts   RelayOptions
	optErr error

	// Counters since the relay was made.
	created atomic.Int64
	dead    atomic.Int64

	// afterCreate, when set (tests), runs after core created a batch's
	// jobs and before the rows are deleted; an error from it abandons the
	// batch as a crash there would.
	afterCreate func() error
}

// Relay returns the relay of the outbox, which creates jobs through
// client. opts may be nil.
func (o *Outbox) Relay(client Creator, opts *RelayOptions) *Relay {
	if client == nil {
		panic("outbox: Relay with a nil client")
	}
	r := &Relay{ob: o, client: client}
	if opts != nil {
		r.optErr = opts.validate()
	}
	r.opts = opts.withDefaults()
	return r
}

// RelayCounts is what one relay has done since it was made.
type RelayCounts struct {
	Created int64 `json:"created"` // rows whose job core created (or had)
	Dead    int64 `json:"dead"`    // rows core refused, moved to kuebus_outbox_dead
}

// Counts reads the relay's counters.
func (r *Relay) Counts() RelayCounts {
	return RelayCounts{Created: r.created.Load(), Dead: r.dead.Load()}
}

// Run moves rows until ctx ends, then finishes the batch under way (within
// BatchTimeout) and returns nil. Errors of the database or of core are
// logged and retried with a growing pause (up to 5 s); Run returns an
// error only for bad options.
func (r *Relay) Run(ctx context.Context) error {
	if r.optErr != nil {
		return fmt.Errorf("outbox: relay: %w", r.optErr)
	}
	wake := make(chan struct{}, 1)
	poll := r.opts.PollInterval
	var wg sync.WaitGroup
	defer wg.Wait()
	lctx, stopListen := context.WithCancel(ctx)
	defer stopListen()
	if r.ob.dialect == Postgres {
		listening := make(chan bool, 1)
		wg.Go(func() { r.listen(lctx, wake, listening) })
		select {
		case ok := <-listening:
			if ok {
				poll = r.opts.ListenPoll
			}
		case <-ctx.Done():
			return nil
		}
	}
	pause := time.Duration(0)
	for {
		err := r.drain(ctx)
		switch {
		case err == nil:
			pause = 0
		case ctx.Err() != nil:
			return nil
		default:
			pause = min(max(2*pause, retryBackoffFirst), retryBackoffMax)
			r.opts.Logger.ErrorContext(ctx, "outbox relay: batch failed", "error", err, "retry_in", pause)
		}
		wait := poll
		if pause > 0 {
			wait = pause
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-wake:
			if pause > 0 {
				// A wake does not cut an error's pause short.
				select {
				case <-t.C:
				case <-ctx.Done():
					return nil
				}
			}
		case <-t.C:
		}
		t.Stop()
	}
}

// Drain moves the rows committed so far, in batches, until a batch finds
// fewer rows than a full one, and returns the first error (the rows of a
// failed batch stay). It is Run's work without the waiting: for a cron
// job, a test, or a shutdown that wants the table empty.
func (r *Relay) Drain(ctx context.Context) error {
	if r.optErr != nil {
		return fmt.Errorf("outbox: relay: %w", r.optErr)
	}
	return r.drain(ctx)
}

// drain runs batches until one finds fewer rows than a full batch, or ctx
// ends.
func (r *Relay) drain(ctx context.Context) error {
	for ctx.Err() == nil {
		full, err := r.batch(ctx)
		if err != nil || !full {
			return err
		}
	}
	return nil
}

// row is one outbox row as the relay reads it.
type row struct {
	id        int64
	jobType   string
	spec      string
	createdAt int64
}

// querier is what a batch runs its statements on: a *sql.Tx, or the
// *sql.Conn holding SQLite's write lock.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// batch moves one batch: it locks the oldest rows, creates their jobs in
// one create_bulk, then deletes them, in one database transaction. It
// reports whether the batch was full (more rows may wait).
//
// Killed anywhere before the commit, the transaction rolls back and the
// rows stay: the next batch (this relay's or another's) sends them again,
// and their unique keys make core answer with the jobs already made.
func (r *Relay) batch(parent context.Context) (full bool, err error) {
	// A batch started runs to its end even when Run's ctx ends meanwhile:
	// its create may be done, and deleting the rows now saves a resend.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), r.opts.BatchTimeout)
	defer cancel()
	q, commit, rollback, err := r.begin(ctx)
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil {
			rollback()
		}
	}()
	rows, full, err := r.read(ctx, q)
	if err != nil || len(rows) == 0 {
		if err == nil {
			err = commit()
		}
		return false, err
	}
	done, dead, err := r.create(ctx, rows)
	if err != nil {
		return false, err
	}
	if r.afterCreate != nil {
		if err := r.afterCreate(); err != nil {
			return false, err
		}
	}
	if err := r.finish(ctx, q, rows, dead); err != nil {
		return false, err
	}
	if err := commit(); err != nil {
		return false, err
	}
	r.created.Add(int64(done))
	r.dead.Add(int64(len(dead)))
	for _, d := range dead {
		r.opts.Logger.WarnContext(ctx, "outbox relay: core refused a row; moved to "+tableDead,
			"row_id", d.row.id, "type", d.row.jobType, "error", d.err)
	}
	return full, nil
}

// begin opens the batch's transaction. On SQLite it takes the database's
// write lock first (BEGIN IMMEDIATE), which keeps a second relay out until
// this batch commits: SQLite has no row locks to skip.
func (r *Relay) begin(ctx context.Context) (q querier, commit func() error, rollback func(), err error) {
	if r.ob.dialect != SQLite {
		tx, err := r.ob.db.BeginTx(ctx, nil)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("outbox: relay: begin: %w", err)
		}
		return tx, tx.Commit, func() { _ = tx.Rollback() }, nil
	}
	conn, err := r.ob.db.Conn(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("outbox: relay: connect: %w", err)
	}
	var busy int
	if err := conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err == nil && busy == 0 {
		// Without a busy timeout the write lock is refused at once while
		// the application writes; with one, SQLite waits for it.
		_, _ = conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", sqliteBusyTimeoutSet))
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		_ = conn.Close()
		return nil, nil, nil, fmt.Errorf("outbox: relay: begin immediate: %w", err)
	}
	commit = func() error {
		_, err := conn.ExecContext(ctx, "COMMIT")
		if err != nil {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
		_ = conn.Close()
		if err != nil {
			return fmt.Errorf("outbox: relay: commit: %w", err)
		}
		return nil
	}
	rollback = func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		_ = conn.Close()
	}
	return conn, commit, rollback, nil
}

// read selects the oldest rows, at most BatchSize and BatchBytes (but at
// least one), and reports whether more may wait.
func (r *Relay) read(ctx context.Context, q querier) ([]row, bool, error) {
	rs, err := q.QueryContext(ctx, r.ob.dialect.selectBatch(), r.opts.BatchSize)
	if err != nil {
		return nil, false, fmt.Errorf("outbox: relay: select: %w", err)
	}
	defer func() { _ = rs.Close() }()
	var rows []row
	size := 0
	for rs.Next() {
		var w row
		if err := rs.Scan(&w.id, &w.jobType, &w.spec, &w.createdAt); err != nil {
			return nil, false, fmt.Errorf("outbox: relay: scan: %w", err)
		}
		if len(rows) > 0 && size+len(w.spec) > r.opts.BatchBytes {
			// Locked but not sent: the rows stay for the next batch,
			// which this relay starts at once.
			return rows, true, nil
		}
		size += len(w.spec)
		rows = append(rows, w)
	}
	if err := rs.Err(); err != nil {
		return nil, false, fmt.Errorf("outbox: relay: select: %w", err)
	}
	return rows, len(rows) == r.opts.BatchSize, nil
}

// deadRow is a row core refused, with core's reason.
type deadRow struct {
	row row
	err error
}

// create makes the rows' jobs in one create_bulk. When core refuses the
// bulk as invalid (all or nothing), it sends the rows one at a time so
// that the ones core takes are made and the refused ones come back as
// dead, never holding up the rows behind them. Any other error (core
// down, a timeout) leaves every row for a later batch.
func (r *Relay) create(ctx context.Context, rows []row) (done int, dead []deadRow, err error) {
	specs := make([]core.Spec, 0, len(rows))
	var ok []row
	for _, w := range rows {
		var sp core.Spec
		if err := json.Unmarshal([]byte(w.spec), &sp); err != nil {
			// Only a hand-written row gets here: Enqueue writes JSON it
			// made from a core.Spec.
			dead = append(dead, deadRow{w, core.Invalidf("spec", "not a job spec: %v", err)})
			continue
		}
		specs = append(specs, sp)
		ok = append(ok, w)
	}
	if len(specs) == 0 {
		return 0, dead, nil
	}
	_, err = r.client.CreateBulkIDs(ctx, specs)
	if err == nil {
		return len(specs), dead, nil
	}
	if !errors.Is(err, core.ErrInvalid) {
		return 0, nil, fmt.Errorf("outbox: relay: create_bulk of %d rows: %w", len(specs), err)
	}
	for i, sp := range specs {
		_, err := r.client.CreateBulkIDs(ctx, []core.Spec{sp})
		switch {
		case err == nil:
			done++
		case errors.Is(err, core.ErrInvalid):
			dead = append(dead, deadRow{ok[i], err})
		default:
			return 0, nil, fmt.Errorf("outbox: relay: create row %d: %w", ok[i].id, err)
		}
	}
	return done, dead, nil
}

// finish moves the dead rows to kuebus_outbox_dead and deletes every row
// of the batch.
func (r *Relay) finish(ctx context.Context, q querier, rows []row, dead []deadRow) error {
	now := r.ob.now().UnixMilli()
	for _, d := range dead {
		if _, err := q.ExecContext(ctx, r.ob.dialect.insertDead(),
			d.row.id, d.row.jobType, d.row.spec, d.row.createdAt, now, d.err.Error()); err != nil {
			return fmt.Errorf("outbox: relay: insert into %s: %w", tableDead, err)
		}
	}
	if r.ob.dialect == MySQL {
		// One row at a time, by its key: InnoDB may run an IN list as a
		// scan that locks rows it does not delete, another relay's among
		// them, and the two relays then deadlock (the test of two relays
		// found it). A delete by primary key locks that row only.
		for _, w := range rows {
			if _, err := q.ExecContext(ctx, r.ob.dialect.deleteRows(1), w.id); err != nil {
				return fmt.Errorf("outbox: relay: delete row %d: %w", w.id, err)
			}
		}
		return nil
	}
	ids := make([]any, len(rows))
	for i, w := range rows {
		ids[i] = w.id
	}
	if _, err := q.ExecContext(ctx, r.ob.dialect.deleteRows(len(ids)), ids...); err != nil {
		return fmt.Errorf("outbox: relay: delete: %w", err)
	}
	return nil
}
