package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/redisproc"
	"github.com/kuebus/kuebus/promoter"
)

// shape is what a scenario needs running.
type shape struct {
	cores     int // core nodes, each on the NATS node
	promoters int // promoter nodes in one memberlist ring
	workers   int // worker processes
	// redisCluster: Redis is a Redis Cluster of three masters, each with
	// one replica, in place of one redis-server; the jobs are of one type
	// per master (cluster types), and core WAITs for a replica of each
	// change (wait_replicas 1), so that a failover loses nothing
	// acknowledged.
	redisCluster bool
}

// cluster is one scenario's deployment on loopback: a Redis, a NATS-only
// kuebus node, core nodes, promoter nodes and worker processes, each a
// process of its own so that each can be killed alone.
type cluster struct {
	cfg   config
	dir   string
	procs *procs

	redisPort int
	redis     *proc
	rc        *redisproc.Cluster // with shape.redisCluster, in place of redis
	types     []string           // the job types of the load and the workers
	natsURL   string
	nats      *proc
	cores     []*node
	promoters []*node
	workers   []*proc

	nc     *nats.Conn // the driver's own connection, to the NATS node
	client *core.Client
}

// node is one `kuebus node` process and the config it runs from.
type node struct {
	name   string
	config string
	proc   *proc
}

// startCluster starts everything sh asks for, in dependency order, and
// returns once core answers and, with promoters, the ring has a leader.
func startCluster(ctx context.Context, cfg config, dir string, sh shape) (_ *cluster, err error) {
	if err := os.MkdirAll(filepath.Join(dir, "redis"), 0o755); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	ps, err := newProcs(dir)
	if err != nil {
		return nil, err
	}
	c := &cluster{cfg: cfg, dir: dir, procs: ps}
	defer func() {
		if err != nil {
			c.stop()
		}
	}()
	if sh.redisCluster {
		err = c.startRedisCluster(ctx)
	} else {
		c.types = []string{jobType}
		err = c.startRedis(ctx)
	}
	if err != nil {
		return nil, err
	}
	if err := c.startNATS(ctx); err != nil {
		return nil, err
	}
	for i := range sh.cores {
		n, err := c.startCoreNode(ctx, fmt.Sprintf("core%d", i+1))
		if err != nil {
			return nil, err
		}
		c.cores = append(c.cores, n)
	}
	if err := c.startPromoters(ctx, sh.promoters); err != nil {
		return nil, err
	}
	if c.nc, err = bus.Connect(c.natsURL, "kuebus-chaos"); err != nil {
		return nil, err
	}
	if c.client, err = core.NewClient(c.nc, &core.ClientOptions{Timeout: 3 * time.Second}); err != nil {
		return nil, err
	}
	if err := c.waitCore(ctx); err != nil {
		return nil, err
	}
	if sh.promoters > 0 {
		if _, err := c.waitLeader(ctx, ""); err != nil {
			return nil, err
		}
	}
	for i := range sh.workers {
		w, err := c.startWorker(fmt.Sprintf("w%d", i+1))
		if err != nil {
			return nil, err
		}
		c.workers = append(c.workers, w)
	}
	return c, nil
}

// stop kills every process and closes the driver's connection.
func (c *cluster) stop() {
	if c.nc != nil {
		c.nc.Close()
	}
	c.procs.close()
	if c.rc != nil {
		_ = c.rc.Stop() // its nodes' data is the run's no longer
	}
}

// startRedis starts (or restarts, on the same port and folder) the
// redis-server, with the append-only file on: see docs/reliability.md for
// what each appendfsync setting means for an acknowledged create.
func (c *cluster) startRedis(ctx context.Context) error {
	if c.redisPort == 0 {
		port, err := freePort()
		if err != nil {
			return err
		}
		c.redisPort = port
	}
	pr, err := c.procs.start("redis", c.cfg.redisServer,
		"--port", strconv.Itoa(c.redisPort), "--bind", "127.0.0.1",
		"--dir", filepath.Join(c.dir, "redis"), "--save", "",
		"--appendonly", "yes", "--appendfsync", c.cfg.appendfsync)
	if err != nil {
		return err
	}
	c.redis = pr
	return waitRedis(ctx, pr, c.redisPort)
}

// waitRedis waits until Redis answers PING: after a restart it first
// replays its append-only file, answering LOADING.
func waitRedis(ctx context.Context, pr *proc, port int) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if pingRedis(port) == nil {
			return nil
		}
		select {
		case <-pr.done:
			return fmt.Errorf("chaos: redis exited at start (see %s)", pr.log)
		case <-ctx.Done():
			return fmt.Errorf("chaos: redis on port %d: no PONG: %w", port, ctx.Err())
		case <-tick.C:
		}
	}
}

func pingRedis(port int) error {
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("redis: %s", strings.TrimSpace(line))
	}
	return nil
}

// startNATS starts the NATS-only node every other process connects to,
// so that killing a core leaves the bus up.
func (c *cluster) startNATS(ctx context.Context) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	c.natsURL = fmt.Sprintf("nats://127.0.0.1:%d", port)
	yaml := fmt.Sprintf(`name: nats
roles: [nats]
nats:
  embedded:
    listen: 127.0.0.1:%d
log:
  format: text
`, port)
	n, err := c.startNode(ctx, "nats", yaml)
	if err != nil {
		return err
	}
	c.nats = n.proc
	return nil
}

func (c *cluster) startCoreNode(ctx context.Context, name string) (*node, error) {
	redis := fmt.Sprintf("  url: redis://127.0.0.1:%d/0\n", c.redisPort)
	if c.rc != nil {
		// WAIT 1: an acknowledged change is on the master's replica too,
		// so the replica that takes over has it (docs/reliability.md).
		redis = fmt.Sprintf("  cluster:\n    addrs: [%s]\n  wait_replicas: 1\n  wait_timeout: 500ms\n",
			strings.Join(c.rc.Addrs(), ", "))
	}
	yaml := fmt.Sprintf(`name: %s
roles: [core]
shutdown_timeout: 1s
nats:
  external:
    urls: [%s]
redis:
%slog:
  format: text
`, name, c.natsURL, redis)
	return c.startNode(ctx, name, yaml)
}

// startPromoters starts n promoter nodes, p1..pn, each seeded with the
// others; the lowest name leads.
func (c *cluster) startPromoters(ctx context.Context, n int) error {
	ports := make([]int, n)
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return err
		}
		ports[i] = p
	}
	for i := range n {
		var seeds []string
		for j, p := range ports {
			if j != i {
				seeds = append(seeds, fmt.Sprintf("127.0.0.1:%d", p))
			}
		}
		yaml := fmt.Sprintf(`name: p%d
roles: [promoter]
shutdown_timeout: 1s
nats:
  external:
    urls: [%s]
memberlist:
  bind: 127.0.0.1:%d
  preset: local
  seeds: [%s]
log:
  format: text
`, i+1, c.natsURL, ports[i], strings.Join(seeds, ", "))
		nd, err := c.startNode(ctx, fmt.Sprintf("p%d", i+1), yaml)
		if err != nil {
			return err
		}
		c.promoters = append(c.promoters, nd)
	}
	return nil
}

// startNode writes the node's config and starts `kuebus node` on it,
// returning once the node logs that it is ready.
func (c *cluster) startNode(ctx context.Context, name, yaml string) (*node, error) {
	path := filepath.Join(c.dir, name+".yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		return nil, fmt.Errorf("chaos: config of %s: %w", name, err)
	}
	n := &node{name: name, config: path}
	return n, c.restartNode(ctx, n)
}

// restartNode starts n's process (again) and waits for its ready line.
func (c *cluster) restartNode(ctx context.Context, n *node) error {
	offset := logSize(filepath.Join(c.dir, n.name+".log"))
	pr, err := c.procs.start(n.name, c.cfg.kuebus, "node", "--config", n.config)
	if err != nil {
		return err
	}
	n.proc = pr
	return waitLogLine(ctx, pr, offset, "kuebus node ready")
}

// superviseNode restarts n as a supervisor would (systemd's
// Restart=on-failure): again, every 500 ms, while it exits before it is
// ready, up to 30 s. A node exits at start when Redis does not answer its
// ping, which on a Redis Cluster whose master was just killed lasts until
// the replica took over. It returns how many starts it took.
func (c *cluster) superviseNode(ctx context.Context, n *node) (starts int, err error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		starts++
		err = c.restartNode(ctx, n)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return starts, err
		}
		select {
		case <-n.proc.done: // exited: start it again
		default:
			return starts, err // running but not ready: no restart helps
		}
		if err := pause(ctx, 500*time.Millisecond); err != nil {
			return starts, err
		}
	}
}

// startWorker starts a worker process: this binary's worker mode.
func (c *cluster) startWorker(name string) (*proc, error) {
	return c.procs.start(name, c.cfg.self, "worker",
		"--nats", c.natsURL, "--id", name,
		"--records", filepath.Join(c.dir, name+".records"),
		"--type", strings.Join(c.types, ","),
		"--concurrency", strconv.Itoa(c.cfg.concurrency),
		"--work", c.cfg.work.String())
}

// waitCore waits until a core answers.
func (c *cluster) waitCore(ctx context.Context) error {
	return retry(ctx, 30*time.Second, func(ctx context.Context) error {
		_, err := c.client.Stats(ctx)
		return err
	})
}

// waitLeader waits until the ring has a leader other than not, and
// returns its name.
func (c *cluster) waitLeader(ctx context.Context, not string) (string, error) {
	var leader string
	err := retry(ctx, 30*time.Second, func(ctx context.Context) error {
		st, err := promoter.FetchStatus(ctx, c.nc, c.client.Subjects())
		if err != nil {
			return err
		}
		if st.Leader == "" || st.Leader == not {
			return fmt.Errorf("leader is %q", st.Leader)
		}
		leader = st.Leader
		return nil
	})
	return leader, err
}

// sweepLine is what a core logs when the leader's sweep finished
// hand-overs a crash left half done (core/service/deps.go), with count=N.
const sweepLine = "dependency hand-overs finished by the sweep"

var sweepCount = regexp.MustCompile(`count=(\d+)`)

// sweptHandOvers adds up, from the cores' logs, the hand-overs the
// leader's sweep finished: on a Redis Cluster, the completions whose
// second step a kill cut off. The figure shows the fault hit that path.
func (c *cluster) sweptHandOvers() (int, error) {
	total := 0
	for _, n := range c.cores {
		f, err := os.Open(n.proc.log)
		if err != nil {
			return 0, fmt.Errorf("chaos: read log: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if !strings.Contains(sc.Text(), sweepLine) {
				continue
			}
			if m := sweepCount.FindStringSubmatch(sc.Text()); m != nil {
				k, _ := strconv.Atoi(m[1]) // \d+ of a log line: an int
				total += k
			}
		}
		err = sc.Err()
		_ = f.Close()
		if err != nil {
			return 0, fmt.Errorf("chaos: read log %s: %w", n.proc.log, err)
		}
	}
	return total, nil
}

// retry calls fn every 50 ms until it succeeds or limit passes.
func retry(ctx context.Context, limit time.Duration, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		callCtx, callCancel := context.WithTimeout(ctx, time.Second)
		err := fn(callCtx)
		callCancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("chaos: gave up after %s: %w", limit, err)
		case <-tick.C:
		}
	}
}
