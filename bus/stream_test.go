package bus_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/bus/embedded"
)

// startJetStream starts an embedded server with JetStream on, its files in
// the test's folder, under the prefix "t" and locked with users when some
// are given.
func startJetStream(t *testing.T, users ...embedded.User) (*embedded.Server, bus.Subjects) {
	t.Helper()
	subj, err := bus.NewSubjects("t")
	require.NoError(t, err)
	e, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:-1", Users: users, Subjects: subj, JetStreamDir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(e.Shutdown)
	return e, subj
}

func TestEventStreamNameCarriesThePrefix(t *testing.T) {
	t.Parallel()
	for prefix, want := range map[string]string{"": "KUEBUS_EVENTS", "acme": "KUEBUS_EVENTS_acme", "acme.prod": "KUEBUS_EVENTS_acme_prod"} {
		subj, err := bus.NewSubjects(prefix)
		require.NoError(t, err)
		require.Equal(t, want, subj.EventStream(), "prefix %q", prefix)
	}
}

func TestEnsureEventStreamAppliesItsLimitsAndIsIdempotent(t *testing.T) {
	t.Parallel()
	e, subj := startJetStream(t)
	nc := bustest.ConnectInProcess(t, e)
	ctx := context.Background()

	info, err := bus.EnsureEventStream(ctx, nc, subj, bus.EventStreamConfig{})
	require.NoError(t, err)
	require.Equal(t, "KUEBUS_EVENTS_t", info.Config.Name)
	require.Equal(t, []string{"t.job.>", "t.queue.>"}, info.Config.Subjects)
	require.Equal(t, bus.EventMaxAgeDefault, info.Config.MaxAge)
	require.Equal(t, int64(bus.EventMaxBytesDefault), info.Config.MaxBytes)
	require.Equal(t, jetstream.FileStorage, info.Config.Storage)
	require.Equal(t, jetstream.DiscardOld, info.Config.Discard)

	// A second node, or a restart with new limits: the same stream, its
	// limits changed, its events kept.
	require.NoError(t, nc.Publish(subj.Queue(bus.QueuePause), []byte(`{"event":"pause"}`)))
	require.NoError(t, nc.Flush())
	info, err = bus.EnsureEventStream(ctx, nc, subj, bus.EventStreamConfig{MaxAge: time.Hour, MaxBytes: 1 << 20})
	require.NoError(t, err)
	require.Equal(t, time.Hour, info.Config.MaxAge)
	require.Equal(t, int64(1<<20), info.Config.MaxBytes)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := js.Stream(ctx, subj.EventStream())
		return err == nil && st.CachedInfo().State.Msgs == 1
	}, 5*time.Second, 10*time.Millisecond, "the event published before the update is kept")
}

func TestEnsureEventStreamWithoutJetStreamSaysSo(t *testing.T) {
	t.Parallel()
	srv := bustest.NewServer(t) // JetStream off
	start := time.Now()
	_, err := bus.EnsureEventStream(context.Background(), srv.Conn, bus.Subjects{}, bus.EventStreamConfig{})
	require.ErrorContains(t, err, "has no JetStream")
	require.ErrorIs(t, err, bus.ErrNoJetStream)
	require.NotErrorIs(t, err, bus.ErrJetStreamNotReady)
	require.Less(t, time.Since(start), time.Second, "at once: there is nothing to wait for")

	err = bus.ReplayEvents(context.Background(), srv.Conn, bus.Subjects{}, bus.ReplayOptions{}, func(bus.StoredEvent) error { return nil })
	require.ErrorIs(t, err, bus.ErrNotDurable)
}

func TestReplayWithoutTheStreamIsNotDurable(t *testing.T) {
	t.Parallel()
	e, subj := startJetStream(t) // JetStream on, no stream made
	err := bus.ReplayEvents(context.Background(), bustest.ConnectInProcess(t, e), subj, bus.ReplayOptions{}, func(bus.StoredEvent) error { return nil })
	require.ErrorIs(t, err, bus.ErrNotDurable)
	require.ErrorContains(t, err, "KUEBUS_EVENTS_t")
}

func TestReplayRefusesATimeAndASequenceTogether(t *testing.T) {
	t.Parallel()
	e, subj := startJetStream(t)
	err := bus.ReplayEvents(context.Background(), bustest.ConnectInProcess(t, e), subj,
		bus.ReplayOptions{Since: time.Now(), FromSeq: 3}, func(bus.StoredEvent) error { return nil })
	require.ErrorIs(t, err, bus.ErrInvalid)
}

// publishEvents stores n complete events, of ids from on, in the event
// stream, and returns once the stream holds them.
func publishEvents(t *testing.T, nc *nats.Conn, subj bus.Subjects, from, n int) {
	t.Helper()
	// Through JetStream, each acknowledged once stored: a plain publish
	// (as core's) and a flush return when the server has the message, not
	// the stream, and a read by sequence at once could miss it.
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	for i := from; i < from+n; i++ {
		_, err := js.Publish(context.Background(), subj.Job(bus.EventComplete, int64(i), "email"), fmt.Appendf(nil, `{"id":%d}`, i))
		require.NoError(t, err)
	}
}

// replayInto runs ReplayEvents on its own goroutine until the test ends,
// sending what it reads to the channel it returns.
func replayInto(t *testing.T, nc *nats.Conn, subj bus.Subjects, opts bus.ReplayOptions) <-chan bus.StoredEvent {
	t.Helper()
	out, stop := replayUntil(t, nc, subj, opts)
	t.Cleanup(stop)
	return out
}

// replayUntil is replayInto ended by the stop it returns.
func replayUntil(t *testing.T, nc *nats.Conn, subj bus.Subjects, opts bus.ReplayOptions) (<-chan bus.StoredEvent, func()) {
	t.Helper()
	out := make(chan bus.StoredEvent, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- bus.ReplayEvents(ctx, nc, subj, opts, func(ev bus.StoredEvent) error { out <- ev; return nil })
	}()
	return out, sync.OnceFunc(func() {
		cancel()
		require.NoError(t, <-done)
	})
}

func next(t *testing.T, ch <-chan bus.StoredEvent) bus.StoredEvent {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
		return bus.StoredEvent{}
	}
}

func TestReplayFromASequenceThenLive(t *testing.T) {
	t.Parallel()
	e, subj := startJetStream(t)
	nc := bustest.ConnectInProcess(t, e)
	_, err := bus.EnsureEventStream(context.Background(), nc, subj, bus.EventStreamConfig{Memory: true})
	require.NoError(t, err)
	publishEvents(t, nc, subj, 1, 10)

	got := replayInto(t, bustest.Connect(t, e.ClientURL()), subj, bus.ReplayOptions{FromSeq: 4})
	for seq := uint64(4); seq <= 10; seq++ {
		ev := next(t, got)
		require.Equal(t, seq, ev.Seq)
		require.Equal(t, subj.Job(bus.EventComplete, int64(seq), "email"), ev.Subject)
		require.JSONEq(t, fmt.Sprintf(`{"id":%d}`, seq), string(ev.Data))
	}
	publishEvents(t, nc, subj, 11, 2) // live ones follow
	require.Equal(t, uint64(11), next(t, got).Seq)
	require.Equal(t, uint64(12), next(t, got).Seq)
}

func TestReplaySinceATimeAndOfOneSubject(t *testing.T) {
	t.Parallel()
	e, subj := startJetStream(t)
	nc := bustest.ConnectInProcess(t, e)
	_, err := bus.EnsureEventStream(context.Background(), nc, subj, bus.EventStreamConfig{Memory: true})
	require.NoError(t, err)
	publishEvents(t, nc, subj, 1, 3)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	last, err := js.Stream(context.Background(), subj.EventStream())
	require.NoError(t, err)
	msg, err := last.GetMsg(context.Background(), 3)
	require.NoError(t, err)

	got := replayInto(t, nc, subj, bus.ReplayOptions{Since: msg.Time})
	require.Equal(t, uint64(3), next(t, got).Seq, "the first event stored at or after the time")

	one, err := subj.Pattern("job.*.5.*")
	require.NoError(t, err)
	only := replayInto(t, nc, subj, bus.ReplayOptions{Subjects: []string{one}})
	publishEvents(t, nc, subj, 4, 3)
	ev := next(t, only)
	require.Equal(t, uint64(5), ev.Seq)
	require.Equal(t, subj.Job(bus.EventComplete, 5, "email"), ev.Subject)
}

func TestReplayEndsWithTheErrorOfItsCallback(t *testing.T) {
	t.Parallel()
	e, subj := startJetStream(t)
	nc := bustest.ConnectInProcess(t, e)
	_, err := bus.EnsureEventStream(context.Background(), nc, subj, bus.EventStreamConfig{Memory: true})
	require.NoError(t, err)
	publishEvents(t, nc, subj, 1, 2)
	stop := errors.New("enough")
	err = bus.ReplayEvents(context.Background(), nc, subj, bus.ReplayOptions{}, func(bus.StoredEvent) error { return stop })
	require.ErrorIs(t, err, stop)
}

// TestRolesReadTheStreamAndOnlyAdminDeletesIt: on a locked server core
// creates the stream, a worker, a producer and a viewer replay it, and
// none of them, core included, may delete or purge it.
func TestRolesReadTheStreamAndOnlyAdminDeletesIt(t *testing.T) {
	t.Parallel()
	users := []embedded.User{
		{Name: "w1", Password: "pw", Role: bus.RoleWorker},
		{Name: "p1", Password: "pw", Role: bus.RoleProducer},
		{Name: "v1", Password: "pw", Role: bus.RoleViewer},
	}
	e, subj := startJetStream(t, users...)
	ctx := context.Background()
	core, err := bus.Connect(e.InProcessURL(), "core", e.InProcessAs(bus.RoleCore))
	require.NoError(t, err)
	t.Cleanup(core.Close)
	_, err = bus.EnsureEventStream(ctx, core, subj, bus.EventStreamConfig{Memory: true})
	require.NoError(t, err)
	publishEvents(t, core, subj, 1, 3)

	conns := map[string]*nats.Conn{}
	for _, u := range users {
		opts, err := bus.Auth{User: u.Name, Password: u.Password}.Options(subj)
		require.NoError(t, err)
		nc, err := bus.Connect(e.ClientURL(), u.Name, opts...)
		require.NoError(t, err)
		t.Cleanup(nc.Close)
		conns[string(u.Role)] = nc

		got, stop := replayUntil(t, nc, subj, bus.ReplayOptions{FromSeq: 2})
		require.Equal(t, uint64(2), next(t, got).Seq, "%s replays", u.Role)
		stop()
	}
	conns["core"] = core

	for role, nc := range conns {
		js, err := jetstream.New(nc)
		require.NoError(t, err)
		dctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		err = js.DeleteStream(dctx, subj.EventStream())
		cancel()
		require.Error(t, err, "%s deleted the stream", role)
		require.ErrorIs(t, nc.LastError(), nats.ErrPermissionViolation, role)
		st, err := js.Stream(ctx, subj.EventStream())
		require.NoError(t, err, "%s may read the stream's info", role)
		dctx, cancel = context.WithTimeout(ctx, 500*time.Millisecond)
		err = st.Purge(dctx)
		cancel()
		require.Error(t, err, "%s purged the stream", role)
	}

	admin, err := bus.Connect(e.InProcessURL(), "admin", e.InProcess())
	require.NoError(t, err)
	t.Cleanup(admin.Close)
	js, err := jetstream.New(admin)
	require.NoError(t, err)
	st, err := js.Stream(ctx, subj.EventStream())
	require.NoError(t, err)
	require.Equal(t, uint64(3), st.CachedInfo().State.Msgs, "every event is still there")
	require.NoError(t, js.DeleteStream(ctx, subj.EventStream()), "admin may")
}
