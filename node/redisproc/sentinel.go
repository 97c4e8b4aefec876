package redisproc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	sentinelMasterDefault = "kuebus"
	// sentinelDownAfterDefault is the first Sentinel's
	// down-after-milliseconds. It must exceed Sentinel's 1 s ping period
	// by a margin: when a Sentinel switches to a new master it may wait up
	// to that second before it connects and sends the first PING, while it
	// counts the new master's silence from the switch. At 1 s a Sentinel
	// often found the master it had just promoted down, tried a failover
	// with no replica to promote, and then refused any failover for
	// 2 × failover-timeout: the next kill took 11 to 13 s to recover.
	sentinelDownAfterDefault = 1500 * time.Millisecond
	// sentinelDownAfterStep is how much longer each further Sentinel waits
	// before it finds the master down. Sentinels that find it down at the
	// same moment (on loopback they do) each start a failover and vote for
	// themselves, no one wins, and the next try waits 2 × failover-timeout.
	// Staggered, the second Sentinel to find the master down is the first
	// to hear another agree (quorum 2), and asks for the votes alone.
	sentinelDownAfterStep = 250 * time.Millisecond
	// sentinelFailoverTimeoutDefault is Sentinel's failover-timeout: how
	// long a failover may wait for its leader's election and for the
	// promoted replica to say role:master (Sentinel asks every second), and
	// half the wait before a failed failover is tried again. Redis's
	// default is 3 minutes.
	sentinelFailoverTimeoutDefault = 3 * time.Second
	sentinelReadyDefault           = 30 * time.Second
)

// SentinelOptions configures a Sentinel set on loopback: one master, its
// replicas, and the Sentinels that watch them. The zero value is 1 master,
// 1 replica and 3 Sentinels with quorum 2, no passwords.
type SentinelOptions struct {
	// Master is the name the Sentinels know the master set by. Default
	// "kuebus".
	Master string
	// Replicas is how many replicas the master gets. Default 1.
	Replicas int
	// Sentinels is how many Sentinels watch the set. Default 3.
	Sentinels int
	// Quorum is how many Sentinels must agree that the master is down
	// before one of them fails it over (which also needs a majority of
	// them to elect it). Default: a majority of Sentinels (2 of 3).
	Quorum int
	// Password is every server's requirepass and masterauth, and the
	// Sentinels' auth-pass for the master set. Default: none.
	Password string
	// SentinelPassword is the Sentinels' own password: each one's
	// requirepass (given on standard input, as Password is to the
	// servers), and the sentinel-pass it gives the other Sentinels, which
	// ask it too. Default: none, the Sentinels take any client.
	SentinelPassword string
	// DownAfter is the first Sentinel's down-after-milliseconds: how long
	// the master may not answer before it thinks it down; each further
	// Sentinel waits 250 ms more, so that one of them leads the failover.
	// Default 1.5s, so that a failover takes a few seconds.
	DownAfter time.Duration
	// FailoverTimeout is Sentinel's failover-timeout. Default 3s.
	FailoverTimeout time.Duration
	// ReadyTimeout bounds the wait for the set to be ready, at start and
	// in WaitReady. Default 30s.
	ReadyTimeout time.Duration
	// Binary is the redis-server binary, which runs the Sentinels too
	// (redis-server sentinel.conf --sentinel, as redis-sentinel does).
	// Default: redis-server in PATH.
	Binary string
	// Logger is each process's Options.Logger. nil discards.
	Logger *slog.Logger
	// ExtraArgs are appended to the master's and the replicas' command
	// lines (not the Sentinels').
	ExtraArgs []string
}

// Sentinel is a Sentinel set of redis-server children on loopback: data
// servers (the first started as master, the others as its replicas, with
// the append-only file on) and Sentinels, each with its own port and
// temporary folder. Which data server is master changes with failovers:
// Master asks the Sentinels. Its methods are safe for concurrent use.
type Sentinel struct {
	opts      SentinelOptions
	servers   []*Server // the data servers: servers[0] started as master
	sentinels []*Server
	dirs      []string // the Sentinels' folders (sentinel.conf), removed by Stop

	mu      sync.Mutex
	stopped bool
}

// StartSentinel starts the master, its replicas (replicaof the master) and
// the Sentinels (monitoring the master), and waits until the set is ready
// (see WaitReady). ctx bounds the start only. On error every process
// started is stopped; otherwise the caller must call Stop.
func StartSentinel(ctx context.Context, opts SentinelOptions) (*Sentinel, error) {
	opts.Master = cmp.Or(opts.Master, sentinelMasterDefault)
	if opts.Replicas == 0 {
		opts.Replicas = 1
	}
	if opts.Sentinels == 0 {
		opts.Sentinels = 3
	}
	if opts.Quorum == 0 {
		opts.Quorum = opts.Sentinels/2 + 1
	}
	if opts.Replicas < 1 || opts.Sentinels < 1 || opts.Quorum < 1 || opts.Quorum > opts.Sentinels {
		return nil, fmt.Errorf("redisproc: start sentinel: %d replicas, %d sentinels, quorum %d: a failover needs a replica, and a quorum between 1 and the number of Sentinels",
			opts.Replicas, opts.Sentinels, opts.Quorum)
	}
	if err := checkMasterName(opts.Master); err != nil {
		return nil, fmt.Errorf("redisproc: start sentinel: master name %q: %w", opts.Master, err)
	}
	if opts.DownAfter <= 0 {
		opts.DownAfter = sentinelDownAfterDefault
	}
	if opts.FailoverTimeout <= 0 {
		opts.FailoverTimeout = sentinelFailoverTimeoutDefault
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = sentinelReadyDefault
	}

	s := &Sentinel{opts: opts}
	data := func(extra ...string) Options {
		// A master waits repl-diskless-sync-delay (5 s) for more replicas
		// before it sends a replica its data; here none are coming.
		extra = append(extra, "--repl-diskless-sync-delay", "0")
		return Options{
			Binary:     opts.Binary,
			Logger:     opts.Logger,
			Password:   opts.Password,
			AppendOnly: true, // a master killed and restarted before its failover keeps its data
			ExtraArgs:  append(extra, opts.ExtraArgs...),
		}
	}
	master, err := Start(ctx, data())
	if err != nil {
		return nil, fmt.Errorf("redisproc: start sentinel: master: %w", err)
	}
	s.servers = append(s.servers, master)
	mhost, mport, _ := net.SplitHostPort(master.Addr())
	for range opts.Replicas {
		r, err := Start(ctx, data("--replicaof", mhost, mport))
		if err != nil {
			return nil, errors.Join(fmt.Errorf("redisproc: start sentinel: replica: %w", err), s.Stop())
		}
		s.servers = append(s.servers, r)
	}
	for i := range opts.Sentinels {
		downAfter := opts.DownAfter + time.Duration(i)*sentinelDownAfterStep
		if err := s.startSentinel(ctx, master.Port(), downAfter); err != nil {
			return nil, errors.Join(err, s.Stop())
		}
	}
	if err := s.WaitReady(ctx); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	return s, nil
}

// startSentinel writes a sentinel.conf into a folder of its own and starts
// a Sentinel on it. The file holds the auth-pass, so it is 0600 in a 0700
// folder; the Sentinel rewrites it (its id, the other Sentinels and
// replicas it found, the current master), and a restart reads it back.
func (s *Sentinel) startSentinel(ctx context.Context, masterPort int, downAfter time.Duration) error {
	dir, err := os.MkdirTemp("", "redisproc-sentinel-")
	if err != nil {
		return fmt.Errorf("redisproc: start sentinel: create folder: %w", err)
	}
	s.dirs = append(s.dirs, dir)
	name := s.opts.Master
	var b strings.Builder
	fmt.Fprintf(&b, "sentinel monitor %s 127.0.0.1 %d %d\n", name, masterPort, s.opts.Quorum)
	fmt.Fprintf(&b, "sentinel down-after-milliseconds %s %d\n", name, downAfter.Milliseconds())
	fmt.Fprintf(&b, "sentinel failover-timeout %s %d\n", name, s.opts.FailoverTimeout.Milliseconds())
	fmt.Fprintf(&b, "sentinel parallel-syncs %s 1\n", name)
	if s.opts.Password != "" {
		fmt.Fprintf(&b, "sentinel auth-pass %s %s\n", name, quoteConfig(s.opts.Password))
	}
	if s.opts.SentinelPassword != "" {
		// Redis 7.0 would fall back to the Sentinel's requirepass when it
		// connects to another Sentinel; sentinel-pass says it, and holds
		// for Sentinels whose requirepass differs from the others'.
		fmt.Fprintf(&b, "sentinel sentinel-pass %s\n", quoteConfig(s.opts.SentinelPassword))
	}
	conf := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("redisproc: start sentinel: write %s: %w", conf, err)
	}
	srv, err := Start(ctx, Options{
		Binary:     s.opts.Binary,
		Logger:     s.opts.Logger,
		Dir:        dir,
		ConfigFile: conf,
		// requirepass, and the readiness probe's AUTH. (The masterauth
		// line that comes with it means nothing to a Sentinel, which gives
		// a master its auth-pass.)
		Password:  s.opts.SentinelPassword,
		ExtraArgs: []string{"--sentinel"},
	})
	if err != nil {
		return fmt.Errorf("redisproc: start sentinel: %w", err)
	}
	s.sentinels = append(s.sentinels, srv)
	return nil
}

// checkMasterName refuses a master name that would break a config line.
func checkMasterName(name string) error {
	if name == "" || strings.ContainsAny(name, " \t\r\n\"'") {
		return errors.New("empty, or has white space or quotes")
	}
	return nil
}

// MasterName is the name the Sentinels know the master set by.
func (s *Sentinel) MasterName() string { return s.opts.Master }

// Password is the data servers' password.
func (s *Sentinel) Password() string { return s.opts.Password }

// SentinelPassword is the Sentinels' own password; "" when they take any
// client.
func (s *Sentinel) SentinelPassword() string { return s.opts.SentinelPassword }

// SentinelAddrs returns every Sentinel's HOST:PORT.
func (s *Sentinel) SentinelAddrs() []string { return addrsOf(s.sentinels) }

// ServerAddrs returns every data server's HOST:PORT, master and replicas,
// running or not, the one started as master first.
func (s *Sentinel) ServerAddrs() []string { return addrsOf(s.servers) }

func addrsOf(servers []*Server) []string {
	addrs := make([]string, len(servers))
	for i, srv := range servers {
		addrs[i] = srv.Addr()
	}
	return addrs
}

// Node returns the data server or Sentinel at addr, to Kill, Restart or
// read its Pid; nil for an address that is none of the set's.
func (s *Sentinel) Node(addr string) *Server {
	for _, list := range [][]*Server{s.servers, s.sentinels} {
		if i := slices.IndexFunc(list, func(srv *Server) bool { return srv.Addr() == addr }); i >= 0 {
			return list[i]
		}
	}
	return nil
}

// Master returns the HOST:PORT of the master as the first Sentinel that
// answers names it (SENTINEL GET-MASTER-ADDR-BY-NAME). During a failover
// Sentinels may disagree for a moment: WaitReady waits until they agree.
func (s *Sentinel) Master(ctx context.Context) (string, error) {
	var errs []error
	for _, sn := range s.sentinels {
		if !sn.running() {
			continue
		}
		st, err := sentinelState(ctx, sn.Addr(), s.opts.SentinelPassword, s.opts.Master)
		if err == nil {
			return st.addr, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", sn.Addr(), err))
	}
	return "", fmt.Errorf("redisproc: sentinel master %s: no Sentinel names it: %w", s.opts.Master, errors.Join(errs...))
}

// Kill kills the data server or Sentinel at addr as a crash would (see
// Server.Kill): SIGKILL to its pid.
func (s *Sentinel) Kill(addr string) error {
	srv := s.Node(addr)
	if srv == nil {
		return fmt.Errorf("redisproc: kill sentinel set's %s: no such server", addr)
	}
	return srv.Kill()
}

// Restart starts the server at addr again on its port, with its data (or
// its sentinel.conf), and waits until it answers PING. A data server that
// the Sentinels no longer name as master is then made a replica of the
// current master (REPLICAOF) at once: Sentinel would do the same to a
// returning old master, but only 8 s or more after it came back. It does
// not wait for the set: WaitReady does.
//
// A master restarted before its failover comes back as master, with what
// its append-only file kept (everysec: a kill -9 loses nothing the kernel
// had).
func (s *Sentinel) Restart(ctx context.Context, addr string) error {
	srv := s.Node(addr)
	if srv == nil {
		return fmt.Errorf("redisproc: restart sentinel set's %s: no such server", addr)
	}
	if err := srv.Restart(ctx); err != nil {
		return err
	}
	if !slices.Contains(s.servers, srv) {
		return nil
	}
	master, err := s.Master(ctx)
	if err != nil || master == addr {
		return err
	}
	host, port, _ := net.SplitHostPort(master)
	if _, err := Command(ctx, addr, s.opts.Password, "REPLICAOF", host, port); err != nil {
		return fmt.Errorf("redisproc: restart sentinel set's %s: make it a replica of %s: %w", addr, master, err)
	}
	return nil
}

// WaitReady waits, within ctx and ReadyTimeout, until every running
// Sentinel names the same master, sees it up (status=ok) and knows every
// running Sentinel and at least every running replica; that master says
// role:master; and every other running data server is a replica linked to
// it (state=online in the master's INFO replication). It polls: the state
// is the servers', there is nothing to be told of.
func (s *Sentinel) WaitReady(ctx context.Context) error {
	return pollReady(ctx, s.opts.ReadyTimeout, "sentinel set", s.ready)
}

// ready is one check of WaitReady's conditions.
func (s *Sentinel) ready(ctx context.Context) error {
	var running []*Server
	for _, srv := range s.servers {
		if srv.running() {
			running = append(running, srv)
		}
	}
	sentinels := 0
	for _, sn := range s.sentinels {
		if sn.running() {
			sentinels++
		}
	}
	if sentinels == 0 {
		return errors.New("no Sentinel running")
	}
	master := ""
	for _, sn := range s.sentinels {
		if !sn.running() {
			continue
		}
		st, err := sentinelState(ctx, sn.Addr(), s.opts.SentinelPassword, s.opts.Master)
		switch {
		case err != nil:
			return fmt.Errorf("sentinel %s: %w", sn.Addr(), err)
		case master != "" && st.addr != master:
			return fmt.Errorf("sentinels disagree on the master: %s and %s", master, st.addr)
		case st.status != "ok":
			return fmt.Errorf("sentinel %s: master %s has status %s", sn.Addr(), st.addr, st.status)
		case st.sentinels < sentinels:
			return fmt.Errorf("sentinel %s knows %d of %d sentinels", sn.Addr(), st.sentinels, sentinels)
		case st.replicas < len(running)-1:
			return fmt.Errorf("sentinel %s knows %d of %d replicas", sn.Addr(), st.replicas, len(running)-1)
		}
		master = st.addr
	}
	if !slices.ContainsFunc(running, func(srv *Server) bool { return srv.Addr() == master }) {
		return fmt.Errorf("the sentinels' master %s is none of the running servers", master)
	}
	info, err := Command(ctx, master, s.opts.Password, "INFO", "replication")
	if err != nil {
		return fmt.Errorf("master %s: %w", master, err)
	}
	if !strings.Contains(info, "role:master") {
		return fmt.Errorf("master %s does not say role:master", master)
	}
	for _, srv := range running {
		if srv.Addr() == master {
			continue
		}
		_, port, _ := net.SplitHostPort(srv.Addr())
		if !strings.Contains(info, ",port="+port+",state=online") {
			return fmt.Errorf("replica %s is not online at master %s", srv.Addr(), master)
		}
	}
	return nil
}

// masterState is what one Sentinel says of the master set.
type masterState struct {
	addr      string // HOST:PORT
	status    string // ok, sdown, odown
	replicas  int    // replicas it knows, down ones too
	sentinels int    // Sentinels it knows, itself included
}

// sentinelState reads a Sentinel's INFO sentinel line of master name:
// master0:name=kuebus,status=ok,address=127.0.0.1:6379,slaves=1,sentinels=3.
// (INFO is a bulk string, which Command reads; SENTINEL MASTER's reply is
// an array, which it does not.)
func sentinelState(ctx context.Context, addr, password, name string) (masterState, error) {
	info, err := Command(ctx, addr, password, "INFO", "sentinel")
	if err != nil {
		return masterState{}, err
	}
	for line := range strings.Lines(info) {
		_, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(fields, "name="+name+",") {
			continue
		}
		var st masterState
		for f := range strings.SplitSeq(fields, ",") {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "status":
				st.status = v
			case "address":
				st.addr = v
			case "slaves":
				st.replicas, _ = strconv.Atoi(v)
			case "sentinels":
				st.sentinels, _ = strconv.Atoi(v)
			}
		}
		if st.addr == "" {
			return st, fmt.Errorf("INFO sentinel has no address in %q", fields)
		}
		return st, nil
	}
	return masterState{}, fmt.Errorf("does not monitor %s", name)
}

// Stop kills every process of the set (SIGKILL to each pid, see
// Server.Kill), Sentinels first so that they start no failover meanwhile,
// and removes their folders and the servers' data. It is idempotent.
//
// It kills rather than asks (SIGTERM), as nothing of a test set is to be
// kept, and redis-server may refuse SIGTERM: a replica that has just
// synced answers "Writing initial AOF, can't exit" and goes on, and a
// master waits up to 10 s for its replicas (shutdown-timeout).
func (s *Sentinel) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	s.stopped = true
	errs := stopAll(s.sentinels)
	for _, dir := range s.dirs {
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("redisproc: stop sentinel: remove %s: %w", dir, err))
		}
	}
	errs = append(errs, stopAll(s.servers)...)
	return errors.Join(errs...)
}

// stopAll kills servers in parallel, then stops them (which removes a
// data directory Start made).
func stopAll(servers []*Server) []error {
	var wg sync.WaitGroup
	errs := make([]error, len(servers))
	for i, srv := range servers {
		wg.Go(func() { errs[i] = errors.Join(srv.Kill(), srv.Stop()) })
	}
	wg.Wait()
	return errs
}

// running tells whether the server's current process is up.
func (s *Server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.stopped && !s.proc.exited()
}
