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
}

// ErrNotDurable says the events of a deployment are not kept: its NATS has
// no JetStream, or no event stream (events.durable is off).
var ErrNotDurable = errors.New("kuebus: events are not durable here")

// EnsureEventStream creates the deployment's event stream, or updates its
// limits when it exists: every core node does it at start, so it is
// idempotent. It fails with a clear error when the server has no
// JetStream, and returns the stream's info.
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
	}
	if cfg.Memory {
		sc.Storage = jetstream.MemoryStorage
	}
	st, err := js.CreateOrUpdateStream(ctx, sc)
	if err != nil {
		if noJetStream(err) {
			return nil, fmt.Errorf("bus: event stream %s: the NATS server has no JetStream (run nats-server with -js, or turn durable events off): %w", sc.Name, err)
		}
		return nil, fmt.Errorf("bus: event stream %s: %w", sc.Name, err)
	}
	return st.CachedInfo(), nil
}

// noJetStream says err means the server (or the account) has no JetStream:
// no one answers the API, or the server says it is off.
func noJetStream(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount)
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
	case errors.Is(err, jetstream.ErrStreamNotFound) || (err != nil && noJetStream(err)):
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
	case errors.Is(err, jetstream.ErrStreamNotFound) || (err != nil && noJetStream(err)):
		return 0, fmt.Errorf("bus: no event stream %s (turn events.durable on): %w", name, ErrNotDurable)
	case err != nil:
		return 0, fmt.Errorf("bus: event stream %s: %w", name, err)
	}
	return stream.CachedInfo().State.LastSeq + 1, nil
}
