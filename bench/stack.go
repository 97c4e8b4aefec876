package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/node"
	"github.com/kuebus/kuebus/node/redisproc"
)

// Timeouts of the set-up and take-down.
const (
	pingTimeout = 5 * time.Second
	stopTimeout = 10 * time.Second
)

// stack is what the bench runs against: its own queue (own), a node as
// `kuebus dev` runs one, or a running deployment's. A nil field was not
// started.
type stack struct {
	own         bool
	log         *slog.Logger
	subj        bus.Subjects
	natsURL     string
	natsAddr    string // for the header: the URL without credentials
	redisAddr   string // host:port, no credentials
	redisOrigin string // who runs that Redis, for the header
	managed     bool   // the bench's node started that Redis, and stops it

	node  *node.Node        // only with its own queue
	redis *redisstore.Redis // the bench's own connection: server stats, its keys
	keys  *keyspace

	conn   *nats.Conn   // the producers'
	client *core.Client // on conn
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
	s.natsURL, s.natsOpts = cfg.NATSURL, cfg.NATSOptions
	s.redisOrigin = "given"
	if cfg.RedisURL != "" {
		if err := s.openRedis(ctx, cfg.RedisURL); err != nil {
			return err
		}
	}
	if s.own {
		if err := s.startNode(ctx, cfg); err != nil {
			return err
		}
	}
	if s.managed {
		if err := s.openRedis(ctx, s.node.Info().RedisURL); err != nil {
			return err
		}
		s.redisOrigin = "started by the bench: no persistence, hz 10"
	}
	s.keys = newKeyspace(s.redis, cfg.KeyPrefix, s.own)

	s.natsAddr = redactedURL(s.natsURL)
	var err error
	if s.conn, err = s.connect("kuebus-bench-producer"); err != nil {
		return err
	}
	if s.client, err = core.NewClient(s.conn, &core.ClientOptions{Prefix: cfg.Prefix}); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	// A core answers: a count of a type of the bench's own is one ZCARD.
	pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
	_, err = s.client.Count(pingCtx, "", s.keys.jobType("ping"))
	cancel()
	if err != nil {
		return fmt.Errorf("bench: no core answers at %s: %w", s.natsAddr, err)
	}
	return nil
}

// openRedis opens the bench's own connection to Redis and checks that it
// answers.
func (s *stack) openRedis(ctx context.Context, url string) error {
	var err error
	if s.redis, err = redisstore.Open(redisstore.Conn{URL: url}); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	s.redisAddr = s.redis.Addr()
	pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
	err = s.redis.Ping(pingCtx)
	cancel()
	if err != nil {
		return fmt.Errorf("bench: Redis at %s does not answer: %w", s.redisAddr, err)
	}
	return nil
}

// startNode starts the bench's own queue as `kuebus dev` runs one: a node
// of one with embedded NATS, a core on the bench's key prefix and the
// promoter (promote and rescue loops), on cfg.RedisURL or on a throwaway
// redis-server of its own. Core and the loops sit beside the embedded
// server and reach it in process; producers and the worker stand for
// other processes and use TCP.
func (s *stack) startNode(ctx context.Context, cfg Config) error {
	nc := node.Config{
		Node: &clusterconfig.Config{
			Name:            "bench",
			Roles:           []string{clusterconfig.RoleNATS, clusterconfig.RoleCore, clusterconfig.RolePromoter},
			Prefix:          cfg.Prefix,
			RedisPrefix:     cfg.KeyPrefix,
			ShutdownTimeout: stopTimeout,
			NATS:            clusterconfig.NATS{Embedded: &clusterconfig.EmbeddedNATS{Listen: "127.0.0.1:0"}},
			Memberlist:      clusterconfig.Memberlist{Bind: "127.0.0.1:0", Preset: clusterconfig.PresetLocal},
			Redis:           clusterconfig.Redis{URL: cfg.RedisURL},
		},
		Logger: s.log,
		Alone:  true,
	}
	if cfg.RedisURL == "" {
		// run.sh's Redis: no RDB snapshots, no AOF, hz 10.
		nc.ManagedRedis = &redisproc.Options{Logger: s.log, ExtraArgs: []string{"--hz", "10"}}
		s.managed = true
	}
	var err error
	s.node, err = node.Start(ctx, nc)
	if errors.Is(err, redisproc.ErrNotInstalled) {
		return errors.New("bench: redis-server is not installed: install it (apt-get install -y redis-server), or give a Redis URL")
	}
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	s.natsURL = s.node.Info().NATSURL
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
// running depends on what is stopped: the producers' connections, the
// bench's node (in node's order), the bench's keys (nothing writes them
// any more), the bench's Redis connection.
func (s *stack) stop() error {
	var errs []error
	if s.conn != nil {
		s.conn.Close()
	}
	if s.node != nil {
		if err := s.node.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("bench: %w", err))
		}
	}
	// A Redis the bench's node started is gone with its keys (it keeps no
	// data); in any other, delete them once no core of the bench's holds a
	// block of ids.
	if s.keys != nil && !s.managed {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		errs = append(errs, s.keys.clean(ctx, true))
		cancel()
	}
	if s.redis != nil {
		if err := s.redis.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bench: close Redis client: %w", err))
		}
	}
	return errors.Join(errs...)
}
