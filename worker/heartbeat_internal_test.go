package worker

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
)

// TestAHeartbeatAfterASilenceTouchesEveryLease: a heartbeat core hears
// after a silence in which core may have found the worker silent
// (core.WorkerSilentAfter less one beat) makes every running job's lease
// due for a touch at once and pokes the lease keeper; one after a beat's
// pause does neither.
func TestAHeartbeatAfterASilenceTouchesEveryLease(t *testing.T) {
	w := &Worker{jobs: newRegistry(), log: slog.New(slog.DiscardHandler)}
	at := time.Unix(1000, 0)
	hb := &heartbeats{w: w, now: func() time.Time { return at }, heard: at}
	_, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	r := w.jobs.add(&core.Job{ID: 1, TTL: 60_000}, at.Add(time.Minute), cancel)
	r.touched = at
	<-w.jobs.added // the add's own poke

	at = at.Add(core.HeartbeatEvery * time.Millisecond)
	hb.delivered()
	require.Empty(t, w.jobs.added, "a beat on time pokes nothing")
	require.Empty(t, w.jobs.dueForTouch(at), "and makes no lease due")

	at = at.Add((core.WorkerSilentAfter - core.HeartbeatEvery) * time.Millisecond)
	hb.delivered()
	require.Len(t, w.jobs.added, 1, "the lease keeper is poked")
	require.Len(t, w.jobs.dueForTouch(at), 1, "the running job's lease is due for a touch now")
}
