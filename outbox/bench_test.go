package outbox_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// BenchmarkCommitToEnqueueEventPostgres measures, on the suite's
// PostgreSQL with a relay LISTENing, how long a committed row takes to
// become a job: from the commit's return to the job.enqueue event's
// arrival at a subscriber. One row per transaction, one at a time; it
// reports the p50 and p99 (docs/outbox.md keeps a measured run).
func BenchmarkCommitToEnqueueEventPostgres(b *testing.B) {
	d := newPostgresDB(b)
	c := nodetest.NewCore(b, service.Config{})
	ob := d.outbox(b)
	seen := make(chan string, 1)
	sub, err := c.Client.Subscribe(c.Client.Subjects().JobEventsOf("enqueue", "latency"), func(ev *core.Event) {
		if ev.Job != nil {
			seen <- ev.Job.UniqueKey
		}
	})
	require.NoError(b, err)
	b.Cleanup(func() { _ = sub.Unsubscribe() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ob.Relay(c.Client, nil).Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		require.NoError(b, <-done)
	})
	// One row first, so the relay is LISTENing before the clock starts.
	enqueue(b, d.db, ob, true, core.Spec{Type: "latency", UniqueKey: "warm"})
	require.Equal(b, "warm", <-seen)

	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		key := fmt.Sprintf("row-%d", i)
		tx, err := d.db.BeginTx(ctx, nil)
		require.NoError(b, err)
		require.NoError(b, ob.Enqueue(ctx, tx, core.Spec{Type: "latency", UniqueKey: key}))
		require.NoError(b, tx.Commit())
		at := time.Now()
		select {
		case got := <-seen:
			require.Equal(b, key, got)
		case <-time.After(30 * time.Second):
			b.Fatalf("no job.enqueue for %s within 30s", key)
		}
		lat = append(lat, time.Since(at))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "p99-ms")
}
