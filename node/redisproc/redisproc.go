package redisproc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrNotInstalled is returned (wrapped) by Start when no redis-server binary
// can be found: Options.Binary is empty and there is no redis-server in PATH.
var ErrNotInstalled = errors.New("redis-server not found in PATH; install it with: " +
	"apt-get install -y redis-server (Debian/Ubuntu) or brew install redis (macOS)")

const (
	binaryDefault       = "redis-server"
	startTimeoutDefault = 10 * time.Second
	// stopGrace is how long Stop waits after SIGTERM before SIGKILL.
	stopGrace = 5 * time.Second
	// portAttempts is how often Start tries when it picks the port itself:
	// the first try and up to 3 retries on another free port.
	portAttempts = 4
	// tailLines is how many lines of redis-server's output are kept.
	tailLines = 64
	// waitDelay bounds how long Wait waits for redis-server's output pipe
	// after it exited (a fork child may still hold it).
	waitDelay = time.Second
	// pingTimeout bounds one readiness probe.
	pingTimeout  = time.Second
	firstBackoff = 5 * time.Millisecond
	maxBackoff   = 100 * time.Millisecond
)

// Options configures a redis-server child process. The zero value starts a
// throwaway server: redis-server from PATH, a free port, data in a temporary
// directory, no AOF.
type Options struct {
	// Binary is the redis-server binary, a path or a name looked up in PATH.
	// A wrapper script must exec redis-server, not fork it: readiness checks
	// that the server answering is the child's pid. Default: redis-server,
	// looked up in PATH.
	Binary string
	// Dir is the working directory for data (RDB dump, AOF). It is created
	// (0o755) if missing and kept by Stop. Default: a temporary directory
	// that Stop removes.
	Dir string
	// Port is the TCP port on 127.0.0.1. 0 picks a free one.
	Port int
	// AppendOnly turns on the append-only file (--appendonly yes). RDB
	// snapshots are always off (--save "") unless ExtraArgs says otherwise.
	AppendOnly bool
	// StartTimeout bounds the wait for the server to answer PING.
	// Default 10s.
	StartTimeout time.Duration
	// Logger gets one debug line per start and stop, with pid and address.
	// nil discards.
	Logger *slog.Logger
	// Password, when set, is required of every client (requirepass), and
	// the readiness probe and URL use it. redis-server reads it from its
	// standard input as configuration, so it shows neither in `ps` nor in
	// a file of this package's. Default: none.
	Password string
	// ExtraArgs are appended to redis-server's command line, so they override
	// the defaults above, for example []string{"--maxmemory", "64mb"}. They
	// must not change --bind or --port, which readiness relies on.
	ExtraArgs []string
	// ConfigFile, when set, is a configuration file redis-server reads
	// before its command line (its first argument), and may rewrite: a
	// Sentinel needs one. Default: none.
	ConfigFile string
}

// Server is a redis-server child process. Its methods are safe for
// concurrent use.
type Server struct {
	opts      Options // resolved: Binary is a path, Dir absolute, Port set
	ownDir    bool    // Dir was created by Start and is removed by Stop
	addr      string
	log       *slog.Logger
	stopGrace time.Duration

	mu      sync.Mutex
	proc    *process // the current or last process
	stopped bool
}

// process is one run of redis-server. A single goroutine (wait) calls
// cmd.Wait and closes done when it returns; err is its result, valid once
// done is closed.
type process struct {
	cmd    *exec.Cmd
	out    *tailBuffer
	done   chan struct{}
	err    error
	onExit context.CancelFunc // called after done is closed
}

func (p *process) wait() {
	p.err = p.cmd.Wait()
	close(p.done)
	p.onExit()
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL and waits until the process has been reaped.
func (p *process) kill() error {
	var err error
	if !p.exited() {
		err = killProcess(p.cmd.Process)
	}
	<-p.done
	return err
}

// exitStatus describes how the process ended; only valid once done is closed.
func (p *process) exitStatus() string {
	if p.err == nil {
		return "exit status 0"
	}
	return p.err.Error()
}

// Start starts redis-server as described by opts and waits until it answers
// PING. ctx bounds the start only, not the life of the server; cancelling it
// during the start kills the child. The caller must call Stop.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("redisproc: start redis-server: %w", err)
	}
	if opts.Port < 0 || opts.Port > 65535 {
		return nil, fmt.Errorf("redisproc: start redis-server: invalid port %d", opts.Port)
	}
	bin, err := findBinary(opts.Binary)
	if err != nil {
		return nil, err
	}
	opts.Binary = bin
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = startTimeoutDefault
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.ExtraArgs = append([]string(nil), opts.ExtraArgs...)

	s := &Server{log: opts.Logger, stopGrace: stopGrace}
	if opts.Dir == "" {
		dir, err := os.MkdirTemp("", "redisproc-")
		if err != nil {
			return nil, fmt.Errorf("redisproc: start redis-server: create data dir: %w", err)
		}
		opts.Dir, s.ownDir = dir, true
	} else {
		dir, err := filepath.Abs(opts.Dir)
		if err != nil {
			return nil, fmt.Errorf("redisproc: start redis-server: data dir %q: %w", opts.Dir, err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("redisproc: start redis-server: create data dir: %w", err)
		}
		opts.Dir = dir
	}

	attempts := 1
	if opts.Port == 0 {
		attempts = portAttempts
	}
	for attempt := 1; ; attempt++ {
		port := opts.Port
		if port == 0 {
			if port, err = pickPort(); err != nil {
				err = fmt.Errorf("redisproc: start redis-server: pick a free port: %w", err)
				break
			}
		}
		var p *process
		var exitedEarly bool
		p, exitedEarly, err = launch(ctx, "start", opts, port)
		if err == nil {
			s.opts = opts
			s.opts.Port = port
			s.addr = loopbackAddr(port)
			s.proc = p
			s.log.Debug("redisproc: redis-server started",
				"pid", p.cmd.Process.Pid, "addr", s.addr, "dir", opts.Dir)
			return s, nil
		}
		// A picked port may have been taken between pickPort and redis-server's
		// bind: try another one. Any early exit counts, as the reason can only
		// be told from redis-server's log text.
		if !exitedEarly || attempt >= attempts || ctx.Err() != nil {
			break
		}
	}
	if s.ownDir {
		_ = os.RemoveAll(opts.Dir)
	}
	return nil, err
}

// findBinary resolves Options.Binary to a path.
func findBinary(bin string) (string, error) {
	if bin == "" {
		path, err := exec.LookPath(binaryDefault)
		if err != nil {
			return "", fmt.Errorf("redisproc: start redis-server: %w", ErrNotInstalled)
		}
		return path, nil
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		if ee, ok := errors.AsType[*exec.Error](err); ok {
			err = ee.Err
		}
		return "", fmt.Errorf("redisproc: start redis-server: binary %q: %w", bin, err)
	}
	return path, nil
}

// pickPort is freePort; tests replace it to provoke port clashes.
var pickPort = freePort

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, err
	}
	return port, nil
}

func loopbackAddr(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// args is redis-server's command line. With a password it has a "-"
// argument: redis-server then reads configuration from its standard input
// (stdinConfig). redis-server takes "-" only first or last: first without
// a config file, so that the arguments after it override it; last after
// the config file, which must come first.
func args(opts Options, port int) []string {
	appendOnly := "no"
	if opts.AppendOnly {
		appendOnly = "yes"
	}
	var a []string
	if opts.ConfigFile != "" {
		a = append(a, opts.ConfigFile)
	} else if opts.Password != "" {
		a = append(a, "-")
	}
	a = append(a,
		"--bind", "127.0.0.1",
		"--port", strconv.Itoa(port),
		"--dir", opts.Dir,
		"--appendonly", appendOnly,
		"--save", "",
		"--daemonize", "no",
		"--protected-mode", "yes",
		"--logfile", "", // stdout, captured into the tail buffer
	)
	a = append(a, opts.ExtraArgs...)
	if opts.ConfigFile != "" && opts.Password != "" {
		a = append(a, "-")
	}
	return a
}

// stdinConfig is the configuration redis-server reads from its standard
// input: the password, which must not be on the command line, as the one
// clients give (requirepass) and the one this server gives its master
// when it is or becomes a replica (masterauth; a Sentinel set's servers
// share one password, and any of them may be made a replica).
func stdinConfig(opts Options) string {
	if opts.Password == "" {
		return ""
	}
	pw := quoteConfig(opts.Password)
	return "requirepass " + pw + "\nmasterauth " + pw + "\n"
}

// quoteConfig writes s for a redis-server config line: every byte as a
// \xHH escape inside double quotes, so that any string survives
// redis-server's config parser.
func quoteConfig(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, `\x%02x`, c)
	}
	b.WriteByte('"')
	return b.String()
}

// launch runs redis-server on port and waits until it answers PING. On error
// the child has been killed and reaped; exitedEarly tells that it exited on
// its own before it was ready.
func launch(ctx context.Context, op string, opts Options, port int) (p *process, exitedEarly bool, err error) {
	addr := loopbackAddr(port)
	fail := func(format string, a ...any) error {
		return fmt.Errorf("redisproc: %s redis-server on %s: %w", op, addr, fmt.Errorf(format, a...))
	}

	out := newTailBuffer(tailLines)
	cmd := exec.Command(opts.Binary, args(opts, port)...)
	if opts.Password != "" {
		cmd.Stdin = strings.NewReader(stdinConfig(opts))
	}
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = waitDelay
	if err := cmd.Start(); err != nil {
		return nil, false, fail("%w", err)
	}
	// readyCtx also ends when the child exits, so that a probe stuck on
	// whatever else listens on the port does not delay the verdict.
	readyCtx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	p = &process{cmd: cmd, out: out, done: make(chan struct{}), onExit: cancel}
	go p.wait()

	lastErr := errors.New("no probe yet")
	backoff := firstBackoff
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-p.done:
			return nil, true, fail("exited during startup (%s)%s", p.exitStatus(), out.tail())
		case <-readyCtx.Done():
			if p.exited() {
				return nil, true, fail("exited during startup (%s)%s", p.exitStatus(), out.tail())
			}
			_ = p.kill()
			if ctx.Err() != nil {
				return nil, false, fail("%w%s", ctx.Err(), out.tail())
			}
			return nil, false, fail("no PONG within %s (last probe: %v): %w%s",
				opts.StartTimeout, lastErr, readyCtx.Err(), out.tail())
		case <-timer.C:
		}
		if lastErr = probe(readyCtx, addr, opts.Password, cmd.Process.Pid); lastErr == nil {
			return p, false, nil
		}
		timer.Reset(backoff)
		backoff = min(2*backoff, maxBackoff)
	}
}

// probe sends PING on a new connection and expects +PONG, after AUTH when
// the server has a password. A server that is still loading its data
// answers -LOADING, which counts as not ready.
//
// PONG alone does not prove that our child answered: if the port was taken
// (by another test package's redis-server, say) our child exits on "address
// already in use", but the other server answers first. So probe also asks
// INFO server and compares process_id with pid. Options.Binary must therefore
// be redis-server itself or exec it, not fork it. A server whose INFO is
// disabled or renamed is taken at its PONG.
func probe(ctx context.Context, addr, password string, pid int) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(deadline); err != nil {
			return err
		}
	}
	// Cancelling ctx (the child exited, or the caller gave up) unblocks a
	// read from a listener that never answers.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	r := bufio.NewReader(conn)
	if password != "" {
		// As a RESP array: the password may hold any byte.
		auth := fmt.Sprintf("*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n", len(password), password)
		if _, err := io.WriteString(conn, auth); err != nil {
			return err
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if line != "+OK\r\n" {
			return fmt.Errorf("AUTH answered %q", strings.TrimSpace(line))
		}
	}
	if _, err := io.WriteString(conn, "PING\r\n"); err != nil {
		return err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}

	if _, err := io.WriteString(conn, "INFO server\r\n"); err != nil {
		return err
	}
	line, err = r.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "$") {
		return nil // INFO refused: no way to tell, trust the PONG
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil || n < 0 || n > 1<<20 {
		return fmt.Errorf("INFO answered %q", strings.TrimSpace(line))
	}
	info := make([]byte, n+2)
	if _, err := io.ReadFull(r, info); err != nil {
		return err
	}
	for l := range strings.Lines(string(info)) {
		v, ok := strings.CutPrefix(strings.TrimSpace(l), "process_id:")
		if !ok {
			continue
		}
		if v != strconv.Itoa(pid) {
			return fmt.Errorf("port answered by another redis-server (pid %s, ours is %d)", v, pid)
		}
		return nil
	}
	return nil
}

// Addr returns the server's address, "127.0.0.1:PORT".
func (s *Server) Addr() string { return s.addr }

// URL returns the server's URL, "redis://127.0.0.1:PORT", or with a
// password "redis://:PASSWORD@127.0.0.1:PORT" (log it with url.Redacted).
func (s *Server) URL() string {
	u := url.URL{Scheme: "redis", Host: s.addr}
	if s.opts.Password != "" {
		u.User = url.UserPassword("", s.opts.Password)
	}
	return u.String()
}

// Port returns the server's TCP port. It stays the same across Restart.
func (s *Server) Port() int { return s.opts.Port }

// Pid returns the process id of the most recently started redis-server,
// which may have exited since.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc.cmd.Process.Pid
}

// Output returns the last lines the current (or last) process printed,
// oldest first: why a server did what it did, for a test's log.
func (s *Server) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc.out.String()
}

// Stop shuts the server down: SIGTERM, which makes redis-server flush its
// AOF and exit, then SIGKILL if it has not exited within 5s. It then removes
// the data directory if Start created it. Stop is idempotent; after it the
// Server cannot be restarted. It returns an error if redis-server did not
// shut down cleanly (non-zero exit, or it had to be killed); a process that
// had already exited, for example after Kill, is not an error.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	s.stopped = true
	err := s.terminate("stop")
	if s.ownDir {
		if rmErr := os.RemoveAll(s.opts.Dir); rmErr != nil {
			err = errors.Join(err, fmt.Errorf("redisproc: stop redis-server on %s: remove data dir: %w", s.addr, rmErr))
		}
	}
	s.log.Debug("redisproc: redis-server stopped", "pid", s.proc.cmd.Process.Pid, "addr", s.addr)
	return err
}

// terminate sends SIGTERM to the current process if it is running and waits
// up to stopGrace for it to exit, then kills it. s.mu must be held.
func (s *Server) terminate(op string) error {
	p := s.proc
	if p.exited() {
		return nil
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("redisproc: %s redis-server on %s (pid %d): %w",
			op, s.addr, p.cmd.Process.Pid, fmt.Errorf(format, a...))
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		// No SIGTERM on this platform: there is nothing gentler than a kill.
		if err := p.kill(); err != nil {
			return fail("kill: %w", err)
		}
		return nil
	}
	timer := time.NewTimer(s.stopGrace)
	defer timer.Stop()
	select {
	case <-p.done:
		if p.err != nil && !errors.Is(p.err, exec.ErrWaitDelay) {
			return fail("unclean shutdown after SIGTERM (%s)%s", p.exitStatus(), p.out.tail())
		}
		return nil
	case <-timer.C:
		if err := p.kill(); err != nil {
			return fail("kill after SIGTERM: %w", err)
		}
		return fail("still running %s after SIGTERM, sent SIGKILL%s", s.stopGrace, p.out.tail())
	}
}

// Kill sends SIGKILL to redis-server (and its fork children) and waits for
// it to exit, as a crash would: nothing is flushed. The data directory is
// kept, and Restart starts the server again. Killing a server that is not
// running does nothing.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proc
	if p.exited() {
		return nil
	}
	if err := p.kill(); err != nil {
		return fmt.Errorf("redisproc: kill redis-server on %s (pid %d): %w", s.addr, p.cmd.Process.Pid, err)
	}
	s.log.Debug("redisproc: redis-server killed", "pid", p.cmd.Process.Pid, "addr", s.addr)
	return nil
}

// Restart starts redis-server again with the same options, data directory
// and port, and waits until it answers PING. It is meant for after Kill (or
// a crash); a server that is still running is first shut down as by Stop,
// but keeping its data directory. A stopped Server cannot be restarted.
// ctx bounds the start as in Start.
func (s *Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return fmt.Errorf("redisproc: restart redis-server on %s: server was stopped", s.addr)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redisproc: restart redis-server on %s: %w", s.addr, err)
	}
	if err := s.terminate("restart"); err != nil {
		return err
	}
	p, _, err := launch(ctx, "restart", s.opts, s.opts.Port)
	if err != nil {
		return err
	}
	s.proc = p
	s.log.Debug("redisproc: redis-server restarted", "pid", p.cmd.Process.Pid, "addr", s.addr)
	return nil
}

// tailBuffer is an io.Writer that keeps the last lines written to it.
type tailBuffer struct {
	mu      sync.Mutex
	lines   []string // ring of at most limit complete lines
	next    int      // where the next line goes once the ring is full
	limit   int
	partial []byte // the current line, not yet ended by '\n'
}

// maxLineLen bounds one kept line; longer lines are cut.
const maxLineLen = 4096

func newTailBuffer(limit int) *tailBuffer {
	return &tailBuffer{limit: limit}
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b.appendPartial(p)
			break
		}
		b.appendPartial(p[:i])
		b.push(strings.TrimRight(string(b.partial), "\r"))
		b.partial = b.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

func (b *tailBuffer) appendPartial(p []byte) {
	room := maxLineLen - len(b.partial)
	b.partial = append(b.partial, p[:min(len(p), room)]...)
}

func (b *tailBuffer) push(line string) {
	if len(b.lines) < b.limit {
		b.lines = append(b.lines, line)
		return
	}
	b.lines[b.next] = line
	b.next = (b.next + 1) % b.limit
}

// String returns the kept lines, oldest first, and any unfinished line.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var sb strings.Builder
	for i := range b.lines {
		sb.WriteString(b.lines[(b.next+i)%len(b.lines)])
		sb.WriteByte('\n')
	}
	sb.Write(b.partial)
	return strings.TrimRight(sb.String(), "\n")
}

// tail formats the kept output for the end of an error message.
func (b *tailBuffer) tail() string {
	s := b.String()
	if s == "" {
		return "; redis-server printed nothing"
	}
	return "; redis-server output (last lines):\n" + s
}
