package kuebustest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node"
	"github.com/kuebus/kuebus/node/redisproc"
	"github.com/kuebus/kuebus/worker"
)

// QueueOpts configure a test queue; nil: the defaults.
type QueueOpts struct {
	// RedisURL is a Redis to keep the queue's keys in, under a key prefix
	// no other queue uses (they stay when the queue stops). Default: a
	// redis-server of the queue's own (redis-server in PATH), in a
	// temporary folder, stopped and removed with the queue.
	RedisURL string
	// Prefix is the deployment's subject prefix. Default: none.
	Prefix string
}

// Queue is a whole queue for tests, as `kuebus dev` runs one: embedded
// NATS on a free loopback port, core, and a promoter leader of one (so
// delayed jobs, retries with a backoff and schedules run on time).
type Queue struct {
	// Client is a client of the queue on a connection of its own.
	Client *core.Client
	// Conn is Client's NATS connection.
	Conn *nats.Conn

	node   *node.Node
	prefix string
}

// Start starts a queue for the test tb and stops it when the test ends; a
// queue that does not start fails the test at once.
func Start(tb testing.TB, opts *QueueOpts) *Queue {
	tb.Helper()
	q, err := StartQueue(context.Background(), opts)
	if err != nil {
		tb.Fatalf("kuebustest: %v", err)
	}
	tb.Cleanup(func() {
		if err := q.Stop(); err != nil {
			tb.Errorf("kuebustest: %v", err)
		}
	})
	return q
}

// StartQueue starts a queue for a caller without a testing.TB (a runnable
// Example, a TestMain); Stop stops it.
func StartQueue(ctx context.Context, opts *QueueOpts) (*Queue, error) {
	if opts == nil {
		opts = &QueueOpts{}
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	cfg := node.Config{
		Node: &clusterconfig.Config{
			Name:        "kuebustest",
			Roles:       []string{clusterconfig.RoleNATS, clusterconfig.RoleCore, clusterconfig.RolePromoter},
			Prefix:      opts.Prefix,
			RedisPrefix: "kuebustest-" + hex.EncodeToString(b[:]),
			NATS:        clusterconfig.NATS{Embedded: &clusterconfig.EmbeddedNATS{Listen: "127.0.0.1:0"}},
			Memberlist:  clusterconfig.Memberlist{Bind: "127.0.0.1:0", Preset: clusterconfig.PresetLocal},
		},
		Alone: true,
	}
	if opts.RedisURL != "" {
		cfg.Node.Redis = clusterconfig.Redis{URL: opts.RedisURL}
	} else {
		cfg.ManagedRedis = &redisproc.Options{}
	}
	n, err := node.Start(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("start a queue: %w", err)
	}
	q := &Queue{node: n, prefix: opts.Prefix}
	if q.Conn, err = nats.Connect(q.URL()); err == nil {
		q.Client, err = core.NewClient(q.Conn, &core.ClientOptions{Prefix: opts.Prefix})
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("connect to the queue: %w", err), q.Stop())
	}
	return q, nil
}

// URL is the queue's NATS URL, for the producers and workers under test
// (bus.Connect, nats.Connect).
func (q *Queue) URL() string { return q.node.NATS().ClientURL() }

// Prefix is the queue's subject prefix, for a worker.Config or
// core.ClientOptions.
func (q *Queue) Prefix() string { return q.prefix }

// Stop closes the client and stops the queue: core, NATS, the promoter and
// its own redis-server.
func (q *Queue) Stop() error {
	if q.Client != nil {
		q.Client.Close()
	}
	if q.Conn != nil {
		q.Conn.Close()
	}
	if err := q.node.Stop(); err != nil {
		return fmt.Errorf("stop the queue: %w", err)
	}
	return nil
}

// NewWorker returns a worker of the queue, on a connection of its own
// (cfg.Conn and cfg.Prefix are set here), closed when the test ends.
// Register its handlers, then Run it.
func (q *Queue) NewWorker(tb testing.TB, cfg worker.Config) *worker.Worker {
	tb.Helper()
	nc, err := nats.Connect(q.URL())
	if err != nil {
		tb.Fatalf("kuebustest: connect a worker: %v", err)
	}
	tb.Cleanup(nc.Close)
	cfg.Conn, cfg.Prefix = nc, q.prefix
	w, err := worker.New(cfg)
	if err != nil {
		tb.Fatalf("kuebustest: %v", err)
	}
	return w
}

// Run runs w until the test ends, then stops it, and fails the test when
// its Run returned an error.
func (q *Queue) Run(tb testing.TB, w *worker.Worker) {
	tb.Helper()
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var err error
	wg.Go(func() { err = w.Run(ctx) })
	tb.Cleanup(func() {
		stop()
		wg.Wait()
		if err != nil {
			tb.Errorf("kuebustest: the worker's Run: %v", err)
		}
	})
}

// AwaitTimeout bounds Await.
const AwaitTimeout = 30 * time.Second

// Await waits until job id has finished (complete, failed or cancelled)
// and returns it; the test fails when it has not within AwaitTimeout.
func (q *Queue) Await(tb testing.TB, id int64) *core.Job {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), AwaitTimeout)
	defer cancel()
	job, err := q.Client.Await(ctx, id)
	if err != nil {
		tb.Fatalf("kuebustest: job %d did not finish within %s: %v", id, AwaitTimeout, err)
	}
	return job
}
