package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/redisproc"
	"github.com/kuebus/kuebus/promoter"
)

// Timeouts of the set-up and take-down.
const (
	pingTimeout = 5 * time.Second
	stopTimeout = 10 * time.Second
)

// stack is what the bench runs against: its own queue (own) or a running
// deployment's. A nil field was not started.
type stack struct {
	own         bool
	log         *slog.Logger
	subj        bus.Subjects
	natsURL     string
	natsAddr    string // for the header: the URL without credentials
	redisAddr   string // host:port, no credentials
	redisOrigin string // who runs that Redis, for the header

	redis *redisproc.Server // only when the bench started it
	rdb   *redis.Client
	keys  *keyspace

	nats     *bus.Embedded // only with its own core
	coreConn *nats.Conn
	svc      *service.Service
	loopConn *nats.Conn
	stopLoop context.CancelFunc
	loop     sync.WaitGroup // owns the promote and rescue loops' goroutines
	loopErr  error          // set by the promote loop's goroutine before it ends

	conn   *nats.Conn   // the producers'
	client *core.Client // on conn
	listen *nats.Conn   // event subscriptions, apart from the producers' replies
	// natsOpts are Config.NATSOptions, for every connection to NATSURL.
	natsOpts []nats.Option
}

// start sets up what cfg asks for; on failure it takes down what it set up.
func start(ctx context.Context, cfg Config) (*stack, error) {
	s := &stack{own: cfg.NATSURL == "", log: cfg.Logger}
	s.subj, _ = bus.NewSubjects(cfg.Prefix) // checked by validate
	if err := s.setUp(ctx, cfg); err != nil {
		return nil, errors.Join(err, s.stop())
	}
	return s, nil
}

func (s *stack) setUp(ctx context.Context, cfg Config) error {
	redisURL := cfg.RedisURL
	s.redisOrigin = "given"
	if redisURL == "" {
		var err error
		// run.sh's Redis: no RDB snapshots, no AOF, hz 10.
		s.redis, err = redisproc.Start(ctx, redisproc.Options{Logger: s.log, ExtraArgs: []string{"--hz", "10"}})
		if errors.Is(err, redisproc.ErrNotInstalled) {
			return errors.New("bench: redis-server is not installed: install it (apt-get install -y redis-server), or give a Redis URL")
		}
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		redisURL = s.redis.URL()
		s.redisOrigin = "started by the bench: no persistence, hz 10"
	}
	opts, err := redisstore.ParseURL(redisURL)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	s.redisAddr = opts.Addr
	s.rdb = redis.NewClient(opts)
	pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
	err = s.rdb.Ping(pingCtx).Err()
	cancel()
	if err != nil {
		return fmt.Errorf("bench: Redis at %s does not answer: %w", s.redisAddr, err)
	}
	s.keys = newKeyspace(s.rdb, cfg.KeyPrefix, s.own)

	s.natsURL = cfg.NATSURL
	s.natsOpts = cfg.NATSOptions
	if s.own {
		if err := s.startCore(ctx, cfg); err != nil {
			return err
		}
	}
	s.natsAddr = redactedURL(s.natsURL)
	if s.conn, err = s.connect("kuebus-bench-producer"); err != nil {
		return err
	}
	if s.client, err = core.NewClient(s.conn, &core.ClientOptions{Prefix: cfg.Prefix}); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if s.listen, err = s.connect("kuebus-bench-listener"); err != nil {
		return err
	}
	// A core answers: a count of a type of the bench's own is one ZCARD.
	pingCtx, cancel = context.WithTimeout(ctx, pingTimeout)
	_, err = s.client.Count(pingCtx, "", s.keys.jobType("ping"))
	cancel()
	if err != nil {
		return fmt.Errorf("bench: no core answers at %s: %w", s.natsAddr, err)
	}
	return nil
}

// startCore starts embedded NATS, a core on the bench's key prefix and the
// promote and rescue loops, each on its own connection, as `kuebus dev` does.
func (s *stack) startCore(ctx context.Context, cfg Config) error {
	var err error
	if s.nats, err = bus.StartEmbedded(bus.EmbeddedConfig{Listen: "127.0.0.1:-1"}); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	s.natsURL = s.nats.ClientURL()
	store, err := redisstore.New(redisstore.Config{Client: s.rdb, Prefix: cfg.KeyPrefix})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	// Core and the loops sit beside the embedded server and reach it in
	// process, as in `kuebus dev`; producers and the worker stand for other
	// processes and use TCP.
	if s.coreConn, err = s.connect("kuebus-bench-core", s.nats.InProcess()); err != nil {
		return err
	}
	s.svc, err = service.New(service.Config{Store: store, Conn: s.coreConn, Subjects: s.subj, Logger: s.log, ShutdownTimeout: stopTimeout})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if s.loopConn, err = s.connect("kuebus-bench-promoter", s.nats.InProcess()); err != nil {
		return err
	}
	client, err := core.NewClient(s.loopConn, &core.ClientOptions{Prefix: cfg.Prefix})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	loopCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stopLoop = stop
	s.loop.Go(func() {
		s.loopErr = promoter.RunLoop(loopCtx, promoter.LoopConfig{Core: client, Logger: s.log})
	})
	// As in `kuebus dev`, which rescues expired leases beside promoting.
	s.loop.Go(func() {
		_ = promoter.RunRescueLoop(loopCtx, promoter.RescueConfig{Core: client, Logger: s.log})
	})
	return nil
}

func (s *stack) connect(name string, opts ...nats.Option) (*nats.Conn, error) {
	nc, err := bus.Connect(s.natsURL, name, append(slices.Clone(s.natsOpts), opts...)...)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return nc, nil
}

// stop takes down what start set up, in an order where nothing still
// running depends on what is stopped: the loops, core, the bench's
// keys (nothing writes them any more), the connections, Redis, NATS.
func (s *stack) stop() error {
	var errs []error
	if s.stopLoop != nil {
		s.stopLoop()
		s.loop.Wait()
		if s.loopErr != nil {
			errs = append(errs, fmt.Errorf("bench: promote loop: %w", s.loopErr))
		}
	}
	if s.svc != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		if err := s.svc.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("bench: stop core: %w", err))
		}
		cancel()
	}
	if s.keys != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		errs = append(errs, s.keys.clean(ctx, true))
		cancel()
	}
	for _, nc := range []*nats.Conn{s.listen, s.conn, s.loopConn, s.coreConn} {
		if nc != nil {
			nc.Close()
		}
	}
	if s.rdb != nil {
		if err := s.rdb.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bench: close Redis client: %w", err))
		}
	}
	if s.redis != nil {
		if err := s.redis.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("bench: %w", err))
		}
	}
	if s.nats != nil {
		s.nats.Shutdown()
	}
	return errors.Join(errs...)
}
