package outbox_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/outbox"
)

// enqueue writes specs in one transaction of db and commits it, or rolls
// it back.
func enqueue(t testing.TB, db *sql.DB, ob *outbox.Outbox, commit bool, specs ...core.Spec) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, ob.EnqueueBulk(ctx, tx, specs))
	if commit {
		require.NoError(t, tx.Commit())
	} else {
		require.NoError(t, tx.Rollback())
	}
}

func spec(jobType string, n int) core.Spec {
	return core.Spec{Type: jobType, Data: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))}
}

// jobsOf reads the jobs of a type, oldest first, up to 1000.
func jobsOf(t testing.TB, c *core.Client, jobType string) []core.Job {
	t.Helper()
	jobs, err := c.Range(context.Background(), core.RangeRequest{Type: jobType, From: 0, To: 999, Order: "asc"})
	require.NoError(t, err)
	return jobs
}

func TestARolledBackEnqueueMakesNoJobAndCommittedOnesMakeOneEach(t *testing.T) {
	forEachDB(t, func(t *testing.T, d *testDB) {
		c := nodetest.NewCore(t, service.Config{})
		ob := d.outbox(t)
		ctx := context.Background()
		enqueue(t, d.db, ob, false, spec("signup", 100), spec("signup", 101))
		enqueue(t, d.db, ob, true, spec("signup", 1), spec("signup", 2))
		enqueue(t, d.db, ob, true, spec("signup", 3))
		enqueue(t, d.db, ob, false, spec("signup", 102))
		st, err := ob.Stats(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(3), st.Waiting)

		r := ob.Relay(c.Client, nil)
		require.NoError(t, r.Drain(ctx))

		jobs := jobsOf(t, c.Client, "signup")
		var data []string
		for _, j := range jobs {
			full, err := c.Client.Get(ctx, j.ID)
			require.NoError(t, err)
			data = append(data, string(full.Data))
			require.True(t, strings.HasPrefix(full.UniqueKey, outbox.UniqueKeyPrefix), "its unique key %q", full.UniqueKey)
		}
		require.Equal(t, []string{`{"n":1}`, `{"n":2}`, `{"n":3}`}, data, "one job per committed row, in order")
		require.Zero(t, d.rows(t, "kuebus_outbox"), "the relay deletes the rows it moved")
		require.Equal(t, outbox.RelayCounts{Created: 3}, r.Counts())

		require.NoError(t, r.Drain(ctx))
		require.Len(t, jobsOf(t, c.Client, "signup"), 3, "a second drain makes nothing")
	})
}

func TestABadSpecFailsEnqueueAndStoresNothing(t *testing.T) {
	forEachDB(t, func(t *testing.T, d *testDB) {
		ob := d.outbox(t)
		ctx := context.Background()
		for _, tc := range []struct {
			name  string
			spec  core.Spec
			field string
		}{
			{"a type that is not a token", core.Spec{Type: "bad type"}, "type:"},
			{"data that is not JSON", core.Spec{Type: "ok", Data: json.RawMessage(`{"a":`)}, "data"},
			{"a negative delay", core.Spec{Type: "ok", Delay: -time.Millisecond}, "delay:"},
			{"an unknown backoff", core.Spec{Type: "ok", Backoff: &core.Backoff{Type: "linear"}}, "backoff.type:"},
			{"data over core's limit", core.Spec{Type: "ok", Data: json.RawMessage(`"` + strings.Repeat("x", core.MaxDataBytesDefault) + `"`)}, "data:"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				tx, err := d.db.BeginTx(ctx, nil)
				require.NoError(t, err)
				err = ob.Enqueue(ctx, tx, tc.spec)
				require.ErrorIs(t, err, core.ErrInvalid)
				require.Contains(t, err.Error(), tc.field)
				require.NoError(t, tx.Commit())
				require.Zero(t, d.rows(t, "kuebus_outbox"))
			})
		}
		t.Run("one bad spec of a bulk writes none", func(t *testing.T) {
			tx, err := d.db.BeginTx(ctx, nil)
			require.NoError(t, err)
			err = ob.EnqueueBulk(ctx, tx, []core.Spec{spec("ok", 1), {Type: "no/slash"}, spec("ok", 2)})
			require.ErrorIs(t, err, core.ErrInvalid)
			require.Contains(t, err.Error(), "specs[1].type:")
			require.NoError(t, tx.Commit())
			require.Zero(t, d.rows(t, "kuebus_outbox"))
		})
	})
}

func TestOpenRefusesAnUnknownDialect(t *testing.T) {
	d := newSQLiteDB(t)
	_, err := outbox.Open(d.db, outbox.Dialect(9))
	require.ErrorIs(t, err, core.ErrInvalid)
	require.Contains(t, err.Error(), "dialect:")
	_, err = outbox.ParseDialect("oracle")
	require.ErrorIs(t, err, core.ErrInvalid)
	require.Contains(t, err.Error(), "dialect:")
	for name, want := range map[string]outbox.Dialect{"postgres": outbox.Postgres, "mariadb": outbox.MySQL, "sqlite3": outbox.SQLite} {
		got, err := outbox.ParseDialect(name)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}

func TestRelayRefusesBadOptions(t *testing.T) {
	d := newSQLiteDB(t)
	ob := d.outbox(t)
	c := nodetest.NewCore(t, service.Config{})
	err := ob.Relay(c.Client, &outbox.RelayOptions{PollInterval: -time.Second}).Run(context.Background())
	require.ErrorIs(t, err, core.ErrInvalid)
	require.Contains(t, err.Error(), "poll_interval:")
}

func TestARowCoreRefusesDoesNotBlockTheRowsBehindIt(t *testing.T) {
	forEachDB(t, func(t *testing.T, d *testDB) {
		// This core takes less data than Enqueue's check (core's default),
		// as a core configured tighter than the application would.
		c := nodetest.NewCore(t, service.Config{MaxDataBytes: 64})
		ob := d.outbox(t)
		ctx := context.Background()
		big := core.Spec{Type: "order", Data: json.RawMessage(`"` + strings.Repeat("x", 100) + `"`)}
		enqueue(t, d.db, ob, true, spec("order", 1), big, spec("order", 2))
		enqueue(t, d.db, ob, true, spec("order", 3))

		r := ob.Relay(c.Client, nil)
		require.NoError(t, r.Drain(ctx))
		require.Len(t, jobsOf(t, c.Client, "order"), 3, "the rows before and behind the refused one")
		require.Zero(t, d.rows(t, "kuebus_outbox"))
		require.Equal(t, 1, d.rows(t, "kuebus_outbox_dead"))
		var reason string
		require.NoError(t, d.db.QueryRowContext(ctx, "SELECT error FROM kuebus_outbox_dead").Scan(&reason))
		require.Contains(t, reason, "data:")
		require.Equal(t, outbox.RelayCounts{Created: 3, Dead: 1}, r.Counts())
		st, err := ob.Stats(ctx)
		require.NoError(t, err)
		require.Equal(t, outbox.Stats{Dead: 1}, st)
	})
}

func TestStatsCountTheWaitingRowsAndTheOldestAge(t *testing.T) {
	d := newSQLiteDB(t)
	ob := d.outbox(t)
	ctx := context.Background()
	st, err := ob.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, outbox.Stats{}, st)
	enqueue(t, d.db, ob, true, spec("a", 1))
	before := time.Now()
	_, err = d.db.ExecContext(ctx, "UPDATE kuebus_outbox SET created_at = ?", before.Add(-time.Minute).UnixMilli())
	require.NoError(t, err)
	enqueue(t, d.db, ob, true, spec("a", 2))
	st, err = ob.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(2), st.Waiting)
	require.GreaterOrEqual(t, st.OldestAge, time.Minute)
	require.Contains(t, st.Text(), "kuebus_outbox_rows_waiting 2\n")
}

func TestARelayStoppedBetweenCreateAndDeleteMakesNoSecondJob(t *testing.T) {
	forEachDB(t, func(t *testing.T, d *testDB) {
		c := nodetest.NewCore(t, service.Config{})
		ob := d.outbox(t)
		ctx := context.Background()
		for i := range 5 {
			enqueue(t, d.db, ob, true, spec("invoice", 2*i), spec("invoice", 2*i+1))
		}
		crash := errors.New("killed between the create and the delete")
		r := ob.Relay(c.Client, &outbox.RelayOptions{BatchSize: 4})
		crashes := 0
		r.SetAfterCreate(func() error {
			if crashes < 3 {
				crashes++
				return crash
			}
			return nil
		})
		for range 3 {
			require.ErrorIs(t, r.Drain(ctx), crash)
		}
		require.Len(t, jobsOf(t, c.Client, "invoice"), 4, "the first batch's jobs exist")
		require.Equal(t, 10, d.rows(t, "kuebus_outbox"), "and its rows are still there")

		// A new relay, as after a restart.
		require.NoError(t, ob.Relay(c.Client, &outbox.RelayOptions{BatchSize: 4}).Drain(ctx))
		jobs := jobsOf(t, c.Client, "invoice")
		require.Len(t, jobs, 10, "one job per row, whatever the crashes")
		require.Zero(t, d.rows(t, "kuebus_outbox"))
	})
}

// countingCreator records the unique key of every spec a relay sent, so
// that the test sees a row sent twice even though core's unique keys
// would hide it.
type countingCreator struct {
	next outbox.Creator
	mu   sync.Mutex
	sent map[string]int
}

func (c *countingCreator) CreateBulkIDs(ctx context.Context, specs []core.Spec) ([]int64, error) {
	ids, err := c.next.CreateBulkIDs(ctx, specs)
	if err == nil {
		c.mu.Lock()
		for _, sp := range specs {
			c.sent[sp.UniqueKey]++
		}
		c.mu.Unlock()
	}
	return ids, err
}

func TestTwoRelaysOnOneTableNeverSendARowTwice(t *testing.T) {
	forEachDB(t, func(t *testing.T, d *testDB) {
		c := nodetest.NewCore(t, service.Config{})
		ob := d.outbox(t)
		cc := &countingCreator{next: c.Client, sent: map[string]int{}}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 2 {
			// Each relay on a pool of its own, as two processes.
			ob2, err := outbox.Open(d.open(t), d.dialect)
			require.NoError(t, err)
			r := ob2.Relay(cc, &outbox.RelayOptions{BatchSize: 7, PollInterval: 5 * time.Millisecond})
			wg.Go(func() { _ = r.Run(ctx) })
		}
		const txs, per = 30, 10
		for i := range txs {
			specs := make([]core.Spec, per)
			for k := range specs {
				specs[k] = spec("pair", i*per+k)
			}
			enqueue(t, d.db, ob, true, specs...)
		}
		require.Eventually(t, func() bool {
			st, err := ob.Stats(ctx)
			return err == nil && st.Waiting == 0
		}, 60*time.Second, 10*time.Millisecond)
		cancel()
		wg.Wait()
		require.Len(t, jobsOf(t, c.Client, "pair"), txs*per)
		require.Len(t, cc.sent, txs*per)
		for key, n := range cc.sent {
			require.Equal(t, 1, n, "row %s sent %d times", key, n)
		}
	})
}

func TestEveryFieldOfASpecReachesItsJob(t *testing.T) {
	d := newSQLiteDB(t)
	c := nodetest.NewCore(t, service.Config{})
	ob := d.outbox(t)
	ctx := context.Background()
	stalls := 3
	sp := core.Spec{
		Type: "full", Data: json.RawMessage(`{"order":42,"items":["a","b"]}`),
		Priority: core.PriorityHigh, Delay: time.Hour, MaxAttempts: 5,
		Backoff: core.ExponentialBackoff(2 * time.Second), TTL: 90 * time.Second,
		RemoveOnComplete: core.RemoveAtOnce, RemoveOnFail: core.Retention{Age: 24 * time.Hour, Count: 10},
		UniqueKey: "order-42", StallLimit: &stalls,
	}
	enqueue(t, d.db, ob, true, sp)
	require.NoError(t, ob.Relay(c.Client, nil).Drain(ctx))
	jobs := jobsOf(t, c.Client, "full")
	require.Len(t, jobs, 1)
	job, err := c.Client.Get(ctx, jobs[0].ID)
	require.NoError(t, err)
	require.JSONEq(t, string(sp.Data), string(job.Data))
	require.Equal(t, core.PriorityHigh, job.Priority)
	require.Equal(t, core.StateDelayed, job.State)
	require.Equal(t, sp.Delay, job.DelayDuration())
	require.Equal(t, 5, job.MaxAttempts)
	require.Equal(t, sp.Backoff, job.Backoff)
	require.Equal(t, sp.TTL, job.TTLDuration())
	require.Equal(t, core.RemoveAtOnce, job.RemoveOnComplete)
	require.Equal(t, sp.RemoveOnFail, job.RemoveOnFail)
	require.Equal(t, "order-42", job.UniqueKey, "a spec's own unique key is kept")
	require.Equal(t, 3, job.StallLimit)
}
