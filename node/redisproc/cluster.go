package redisproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrNoRedisCLI is returned (wrapped) by StartCluster when there is no
// redis-cli to create the cluster with.
var ErrNoRedisCLI = errors.New("redis-cli not found in PATH; install it with: " +
	"apt-get install -y redis-tools (Debian/Ubuntu) or brew install redis (macOS)")

const (
	clusterNodeTimeoutDefault = 3 * time.Second
	clusterReadyDefault       = 30 * time.Second
)

// ClusterOptions configures a Redis Cluster of redis-server children on
// loopback. The zero value is 3 masters without replicas.
type ClusterOptions struct {
	// Masters is how many masters share the 16384 slots; at least 3, as
	// redis-cli --cluster create requires. Default 3.
	Masters int
	// Replicas is how many replicas each master gets. Default 0.
	Replicas int
	// Binary is the redis-server binary; CLI the redis-cli one. Defaults:
	// redis-server and redis-cli in PATH.
	Binary, CLI string
	// NodeTimeout is cluster-node-timeout: how long a node may not answer
	// before its replica takes over. Default 3s, short enough for a test
	// to see a failover, long enough for a busy 2-core machine.
	NodeTimeout time.Duration
	// ReadyTimeout bounds the wait for cluster_state:ok on every node, at
	// start and in WaitReady. Default 30s.
	ReadyTimeout time.Duration
	// Logger is each node's Options.Logger. nil discards.
	Logger *slog.Logger
	// ExtraArgs are appended to every node's command line.
	ExtraArgs []string
}

// Cluster is a Redis Cluster of redis-server children: each node a Server
// with its own temporary data directory (nodes.conf in it, so that a
// restarted node rejoins with its identity), its own client port and its
// own cluster bus port. Its methods are safe for concurrent use.
type Cluster struct {
	opts  ClusterOptions
	nodes []*Server // in the order redis-cli got them: masters first

	mu      sync.Mutex
	stopped bool
}

// StartCluster starts Masters×(1+Replicas) redis-server processes in
// cluster mode, joins them with redis-cli --cluster create, and waits until
// every node says cluster_state:ok. ctx bounds the start only. On error
// every process started is stopped; otherwise the caller must call Stop.
func StartCluster(ctx context.Context, opts ClusterOptions) (*Cluster, error) {
	if opts.Masters == 0 {
		opts.Masters = 3
	}
	if opts.Masters < 3 || opts.Replicas < 0 {
		return nil, fmt.Errorf("redisproc: start cluster: %d masters and %d replicas each: a cluster needs at least 3 masters", opts.Masters, opts.Replicas)
	}
	if opts.NodeTimeout <= 0 {
		opts.NodeTimeout = clusterNodeTimeoutDefault
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = clusterReadyDefault
	}
	cli := opts.CLI
	if cli == "" {
		cli = "redis-cli"
	}
	cli, err := exec.LookPath(cli)
	if err != nil {
		if opts.CLI == "" {
			err = ErrNoRedisCLI
		}
		return nil, fmt.Errorf("redisproc: start cluster: %w", err)
	}
	opts.CLI = cli

	c := &Cluster{opts: opts}
	for range opts.Masters * (1 + opts.Replicas) {
		s, err := startClusterNode(ctx, opts)
		if err != nil {
			return nil, errors.Join(err, c.Stop())
		}
		c.nodes = append(c.nodes, s)
	}

	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(opts.Replicas), "--cluster-yes")
	out, err := exec.CommandContext(ctx, opts.CLI, args...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "[OK] All 16384 slots covered") {
		return nil, errors.Join(fmt.Errorf("redisproc: start cluster: redis-cli --cluster create: %v\n%s", err, out), c.Stop())
	}
	if err := c.WaitReady(ctx); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

// startClusterNode starts one node on a free client port and a free bus
// port, trying other bus ports when the one picked was taken meanwhile
// (Start itself retries other client ports).
func startClusterNode(ctx context.Context, opts ClusterOptions) (*Server, error) {
	var err error
	for range portAttempts {
		var bus int
		if bus, err = pickPort(); err != nil {
			return nil, fmt.Errorf("redisproc: start cluster: pick a free bus port: %w", err)
		}
		var s *Server
		s, err = Start(ctx, Options{
			Binary: opts.Binary,
			Logger: opts.Logger,
			ExtraArgs: append([]string{
				"--cluster-enabled", "yes",
				"--cluster-config-file", "nodes.conf", // in the node's own Dir
				// The bus port is otherwise the client port + 10000, which
				// for a port picked above 55535 does not exist.
				"--cluster-port", strconv.Itoa(bus),
				"--cluster-node-timeout", strconv.FormatInt(opts.NodeTimeout.Milliseconds(), 10),
				// A replica's full sync starts at once: Redis 7 otherwise
				// waits 5 s for more replicas before a diskless sync, and a
				// replica that has not synced can neither take over nor
				// acknowledge a WAIT.
				"--repl-diskless-sync-delay", "0",
			}, opts.ExtraArgs...),
		})
		if err == nil || ctx.Err() != nil {
			return s, err
		}
	}
	return nil, err
}

// Addrs returns every node's HOST:PORT, those stopped or killed too.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		addrs[i] = s.Addr()
	}
	return addrs
}

// Node returns the node at addr, to Kill, Restart or read its Pid; nil
// for an address that is none of the cluster's.
func (c *Cluster) Node(addr string) *Server {
	i := slices.IndexFunc(c.nodes, func(s *Server) bool { return s.Addr() == addr })
	if i < 0 {
		return nil
	}
	return c.nodes[i]
}

// Kill kills the node at addr as a crash would (see Server.Kill).
func (c *Cluster) Kill(addr string) error {
	s := c.Node(addr)
	if s == nil {
		return fmt.Errorf("redisproc: kill cluster node %s: no such node", addr)
	}
	return s.Kill()
}

// Restart starts the node at addr again, on its port with its nodes.conf,
// so that it rejoins the cluster (see Server.Restart). It does not wait
// for the cluster: WaitReady does.
func (c *Cluster) Restart(ctx context.Context, addr string) error {
	s := c.Node(addr)
	if s == nil {
		return fmt.Errorf("redisproc: restart cluster node %s: no such node", addr)
	}
	return s.Restart(ctx)
}

// WaitReady waits until every running node answers CLUSTER INFO with
// cluster_state:ok, is a master that serves slots or a replica, and every
// running replica's link to its master is up (synced: it can take over,
// and WAIT counts it), polling each node (the state is the server's; there is
// nothing to be told of), within ctx and ReadyTimeout.
func (c *Cluster) WaitReady(ctx context.Context) error {
	return pollReady(ctx, c.opts.ReadyTimeout, "cluster", c.allOK)
}

// pollReady calls check, with growing pauses, until it answers nil, or
// until ctx or timeout ends: then the error names what is not ready and
// check's last answer. The state it polls is the servers'; there is
// nothing to be told of. Cluster's and Sentinel's WaitReady share it.
func pollReady(ctx context.Context, timeout time.Duration, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	backoff := firstBackoff
	timer := time.NewTimer(0)
	defer timer.Stop()
	var last error
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("redisproc: %s not ready within %s (last: %v): %w", what, timeout, last, ctx.Err())
		case <-timer.C:
		}
		if last = check(ctx); last == nil {
			return nil
		}
		timer.Reset(backoff)
		backoff = min(2*backoff, maxBackoff)
	}
}

// allOK checks cluster_state:ok on each node that is running.
func (c *Cluster) allOK(ctx context.Context) error {
	for _, s := range c.nodes {
		s.mu.Lock()
		down := s.stopped || s.proc.exited()
		s.mu.Unlock()
		if down {
			continue
		}
		info, err := Command(ctx, s.Addr(), "", "CLUSTER", "INFO")
		if err != nil {
			return fmt.Errorf("%s: %w", s.Addr(), err)
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Errorf("%s: cluster_state is not ok", s.Addr())
		}
		// redis-cli --cluster create attaches the replicas after the
		// slots are covered, and the other nodes learn it by gossip: until
		// then a node's view shows a replica as a master without slots
		// (CLUSTER SLOTS lists no replica of it), while cluster_state is
		// ok already. A failed node (killed, not back) may hold no slots.
		nodes, err := Command(ctx, s.Addr(), "", "CLUSTER", "NODES")
		if err != nil {
			return fmt.Errorf("%s: %w", s.Addr(), err)
		}
		for line := range strings.Lines(nodes) {
			// <id> <addr> <flags> <master> <ping> <pong> <epoch> <link> <slot>...
			f := strings.Fields(line)
			if len(f) == 8 && strings.Contains(f[2], "master") &&
				!strings.Contains(f[2], "fail") && !strings.Contains(f[2], "handshake") && !strings.Contains(f[2], "noaddr") {
				return fmt.Errorf("%s: sees %s as a master without slots (a replica not attached yet)", s.Addr(), f[1])
			}
		}
		repl, err := Command(ctx, s.Addr(), "", "INFO", "replication")
		if err != nil {
			return fmt.Errorf("%s: %w", s.Addr(), err)
		}
		if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
			return fmt.Errorf("%s: replica not in sync with its master yet", s.Addr())
		}
	}
	return nil
}

// Stop stops every node (see Server.Stop) and removes their data. It is
// idempotent.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	var wg sync.WaitGroup
	errs := make([]error, len(c.nodes))
	for i, s := range c.nodes {
		wg.Go(func() { errs[i] = s.Stop() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Command sends one command (after AUTH when password is set) on a new
// connection to addr and returns its reply: a simple or bulk string, or an
// integer in decimal. An error reply is returned as an error; arrays are
// not read. It is for harnesses that poll a server's state without a
// Redis client library.
func Command(ctx context.Context, addr, password string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	r := bufio.NewReader(conn)
	if password != "" {
		if _, err := roundTrip(conn, r, "AUTH", password); err != nil {
			return "", err
		}
	}
	return roundTrip(conn, r, args...)
}

// roundTrip writes args as a RESP array and reads one reply.
func roundTrip(w io.Writer, r *bufio.Reader, args ...string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return "", err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return "", errors.New("empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", fmt.Errorf("%s answered %s", args[0], line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n > 16<<20 {
			return "", fmt.Errorf("%s answered %q", args[0], line)
		}
		if n < 0 {
			return "", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return "", fmt.Errorf("%s answered %q, which Command does not read", args[0], line)
}
