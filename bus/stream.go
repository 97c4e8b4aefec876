package bus

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Durable events: core publishes every event with a plain NATS publish, as
// without them; a JetStream stream on job.> and queue.> (EventStream) keeps
// a copy of each that reaches the server, within its limits, and a reader
// replays them from a time or a sequence and then follows the live ones.
// There is no publish acknowledgement on core's path: an event is stored
// when the server receives it, so "durable" means "kept once received",
// not "exactly once" (an event lost between core and the server is lost
// for the stream too, as for every subscriber).

// Defaults of EventStreamConfig.
const (
	EventMaxAgeDefault   = 24 * time.Hour
	EventMaxBytesDefault = 1 << 30 // 1 GiB
)

// EventStreamConfig is the event stream's limits and storage. When the
// stream holds more than MaxBytes, or an event is older than MaxAge, the
// oldest events go.
type EventStreamConfig struct {
	// MaxAge is how long an event is kept. Default EventMaxAgeDefault (24h).
	MaxAge time.Duration
	// MaxBytes bounds the stream's size. Default EventMaxBytesDefault (1 GiB).
	MaxBytes int64
	// Memory keeps the stream in the server's memory instead of on file:
	// it survives a reader's restart, not the server's. Default false.
	Memory bool
	// Replicas is how many servers of a JetStream cluster keep a copy of
	// every event, 1 to 5 (JetStream's own bound), and no more than the
	// cluster has servers; with 3 of 3 the stream survives the loss of one
	// server. Default 1: one server, as on a single server.
	Replicas int
	// FewerReplicas lets EnsureEventStream make (or keep) the stream with
	// fewer replicas than Replicas, as many as the servers up can hold,
	// when the cluster cannot place them all yet (the first servers of a
	// cluster to start have their quorum before the others are up). The
	// info returned says how many it got; a later call raises them. Default
	// false: fail with JetStream's "no suitable peers".
	FewerReplicas bool
	// WaitFunc, when set, is called each time EnsureEventStream finds
	// JetStream not ready yet (err wraps ErrJetStreamNotReady) and waits to
	// try again: a caller's log line. Default: none.
	WaitFunc func(err error)
}

// ErrNotDurable says the events of a deployment are not kept: its NATS has
// no JetStream, or no event stream (events.durable is off).
var ErrNotDurable = errors.New("kuebus: events are not durable here")

// ErrNoJetStream says the NATS server has no JetStream at all: it runs
// without -js (or jetstream {} in its config), or the account has none.
var ErrNoJetStream = errors.New("kuebus: the NATS server has no JetStream")

// ErrJetStreamNotReady says JetStream is on but cannot serve yet: a
// clustered JetStream has no meta leader until a quorum of its servers
// (2 of 3) are up and routed, and answers nothing, or "temporarily
// unavailable", meanwhile.
var ErrJetStreamNotReady = errors.New("kuebus: JetStream is not ready yet")

// Retry pacing of EnsureEventStream while JetStream is not ready: one
// attempt may take ensureAttemptTimeout (a leaderless cluster answers
// nothing), and the pause between attempts grows from ensureRetryMin to
// ensureRetryMax.
const (
	ensureAttemptTimeout = 3 * time.Second
	ensureRetryMin       = 100 * time.Millisecond
	ensureRetryMax       = time.Second
)

// jsNoSuitablePeers is the code of JetStream's "no suitable peers for
// placement": fewer servers up than the stream's replicas.
const jsNoSuitablePeers = 10005

// jsClusterNotAvailable is the code of JetStream's "JetStream system
// temporarily unavailable": a clustered JetStream that has had no meta
// leader for a while.
const jsClusterNotAvailable = 10008

// EnsureEventStream creates the deployment's event stream, or updates its
// limits and replicas when it exists: every core node does it at start, so
// it is idempotent. It returns the stream's info.
//
// While JetStream is not ready (a clustered JetStream before a quorum of
// its servers is up: no meta leader), it tries again, calling
// cfg.WaitFunc before each pause, until ctx ends; then its error wraps
// ErrJetStreamNotReady and the last answer. A server without JetStream
// fails at once, with an error that wraps ErrNoJetStream. Anything else
// (a replica count the cluster cannot place, a permission) fails at once
// with the server's own words.
func EnsureEventStream(ctx context.Context, nc *nats.Conn, subj Subjects, cfg EventStreamConfig) (*jetstream.StreamInfo, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("bus: event stream: %w", err)
	}
	sc := jetstream.StreamConfig{
		Name:        subj.EventStream(),
		Description: "kuebus events (job.> and queue.>), replayable",
		Subjects:    subj.EventSubjects(),
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      cmp.Or(cfg.MaxAge, EventMaxAgeDefault),
		MaxBytes:    cmp.Or(cfg.MaxBytes, EventMaxBytesDefault),
		Storage:     jetstream.FileStorage,
		Replicas:    max(cfg.Replicas, 1),
	}
	if cfg.Memory {
		sc.Storage = jetstream.MemoryStorage
	}
	start, pause := time.Now(), ensureRetryMin
	raced := false // lost a creation race once
	for {
		actx, cancel := context.WithTimeout(ctx, ensureAttemptTimeout)
		st, err := js.CreateOrUpdateStream(actx, sc)
		cancel()
		if err == nil {
			return st.CachedInfo(), nil
		}
		switch {
		case cfg.FewerReplicas && sc.Replicas > 1 && isAPIError(err, jsNoSuitablePeers):
			sc.Replicas-- // at once: the cluster answered, and has fewer servers up
			continue
		case (errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) || isAPIError(err, jetstream.JSErrCodeStreamNameInUse)) && !raced:
			// Another core created it between our update (not found) and
			// our create, with other replicas: the next update finds it.
			raced = true
			continue
		case noJetStream(nc, err):
			return nil, fmt.Errorf("bus: event stream %s: the NATS server has no JetStream (run nats-server with -js, or turn durable events off): %w: %w",
				sc.Name, ErrNoJetStream, err)
		case !jetStreamNotReady(err):
			return nil, fmt.Errorf("bus: event stream %s (%d replicas): %w", sc.Name, sc.Replicas, err)
		}
		waited := time.Since(start).Round(time.Millisecond)
		notReady := fmt.Errorf("bus: event stream %s: JetStream not ready after %s: no meta leader yet? (a clustered JetStream has none until a quorum, more than half of its servers, is up and routed: 2 of 3): %w: %w",
			sc.Name, waited, ErrJetStreamNotReady, err)
		if ctx.Err() != nil {
			return nil, notReady
		}
		if cfg.WaitFunc != nil {
			cfg.WaitFunc(notReady)
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, notReady
		case <-t.C:
		}
		pause = min(2*pause, ensureRetryMax)
	}
}

// noJetStream says err means the server (or the account) has no JetStream:
// the server says it is off, or no one answers the API of a server whose
// INFO says it has none (one whose INFO says it has is only not ready).
func noJetStream(nc *nats.Conn, err error) bool {
	if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
		return true
	}
	if errors.Is(err, nats.ErrNoResponders) {
		on, _ := nc.ConnectedServerJetStream()
		return !on
	}
	return false
}

// jetStreamNotReady says err is what a JetStream without a meta leader
// answers: nothing within the attempt's time, no responders on a server
// that has JetStream (noJetStream ruled out the others), or "temporarily
// unavailable".
func jetStreamNotReady(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || isAPIError(err, jsClusterNotAvailable)
}

// isAPIError says err is JetStream's API error of this code.
func isAPIError(err error, code jetstream.ErrorCode) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == code
}

// missingStream says err means there is no event stream to read: the
// server has no JetStream, or not this stream.
func missingStream(nc *nats.Conn, err error) bool {
	return errors.Is(err, jetstream.ErrStreamNotFound) || (err != nil && noJetStream(nc, err))
}

// StoredEvent is one event read back from the event stream.
type StoredEvent struct {
	// Seq is the event's sequence in the stream: a reader that stops
	// resumes with FromSeq = Seq+1.
	Seq     uint64
	Subject string
	Data    []byte
	// At is when the server stored the event.
	At time.Time
}

// ReplayOptions say where a replay starts and which events it reads.
// Since and FromSeq exclude each other; with neither, the replay starts at
// the oldest event the stream keeps. A start older than the stream's
// oldest event starts at that one: a reader sees it lost events to the
// limits when the first Seq is past the FromSeq it gave.
type ReplayOptions struct {
	// Since starts at the first event stored at or after this time.
	Since time.Time
	// FromSeq starts at this stream sequence.
	FromSeq uint64
	// Subjects narrow the replay to these patterns, under the prefix
	// (Subjects.Pattern builds them). Default: every event.
	Subjects []string
}

// ReplayEvents calls fn with every stored event from the start point, in
// stream order, then with each new one as it is stored, until ctx ends
// (it returns nil) or fn returns an error (it returns that). fn runs on
// the caller's goroutine, one event at a time. Without an event stream it
// returns an error that wraps ErrNotDurable. The reader is an ordered
// consumer, which the server forgets when the replay ends.
func ReplayEvents(ctx context.Context, nc *nats.Conn, subj Subjects, opts ReplayOptions, fn func(StoredEvent) error) error {
	name := subj.EventStream()
	cc := jetstream.OrderedConsumerConfig{FilterSubjects: opts.Subjects, DeliverPolicy: jetstream.DeliverAllPolicy}
	switch {
	case !opts.Since.IsZero() && opts.FromSeq > 0:
		return Errorf(CodeInvalid, "replay: give a time or a sequence to start from, not both")
	case !opts.Since.IsZero():
		since := opts.Since
		cc.DeliverPolicy, cc.OptStartTime = jetstream.DeliverByStartTimePolicy, &since
	case opts.FromSeq > 0:
		cc.DeliverPolicy, cc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, opts.FromSeq
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("bus: replay %s: %w", name, err)
	}
	stream, err := js.Stream(ctx, name)
	switch {
	case missingStream(nc, err):
		return fmt.Errorf("bus: replay: no event stream %s (turn events.durable on): %w", name, ErrNotDurable)
	case err != nil:
		return fmt.Errorf("bus: replay %s: %w", name, err)
	}
	cons, err := stream.OrderedConsumer(ctx, cc)
	if err != nil {
		return fmt.Errorf("bus: replay %s: %w", name, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("bus: replay %s: %w", name, err)
	}
	// Next does not see ctx end while the ordered consumer re-creates its
	// server side (after a lost heartbeat): Stop ends that too.
	stopOnDone := context.AfterFunc(ctx, it.Stop)
	defer stopOnDone()
	defer func() {
		// Stop ends the iterator's goroutines on their own; its Closed
		// channel may never close once Next has seen ctx end, so we do not
		// wait on it.
		it.Stop()
		// The server would drop the consumer after a few idle minutes;
		// say it is done now.
		if info := cons.CachedInfo(); info != nil {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			_ = js.DeleteConsumer(dctx, name, info.Name)
			cancel()
		}
	}()
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("bus: replay %s: %w", name, err)
		}
		md, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("bus: replay %s: %w", name, err)
		}
		if err := fn(StoredEvent{Seq: md.Sequence.Stream, Subject: m.Subject(), Data: m.Data(), At: md.Timestamp}); err != nil {
			return err
		}
	}
}

// EventStreamNext is the sequence the next event stored will get: where
// a reader that wants only new events starts (ReplayOptions.FromSeq).
// Without an event stream it returns an error that wraps ErrNotDurable.
func EventStreamNext(ctx context.Context, nc *nats.Conn, subj Subjects) (uint64, error) {
	name := subj.EventStream()
	js, err := jetstream.New(nc)
	if err != nil {
		return 0, fmt.Errorf("bus: event stream %s: %w", name, err)
	}
	stream, err := js.Stream(ctx, name)
	switch {
	case missingStream(nc, err):
		return 0, fmt.Errorf("bus: no event stream %s (turn events.durable on): %w", name, ErrNotDurable)
	case err != nil:
		return 0, fmt.Errorf("bus: event stream %s: %w", name, err)
	}
	return stream.CachedInfo().State.LastSeq + 1, nil
}
