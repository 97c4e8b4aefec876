package httpapi

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// Defaults of Config.
const (
	AddrDefault            = "127.0.0.1:8080"
	MaxBodyBytesDefault    = 1 << 20
	MaxPopWaitDefault      = 30 * time.Second
	ShutdownTimeoutDefault = 10 * time.Second
	HeartbeatDefault       = 25 * time.Second
	SessionTTLDefault      = 12 * time.Hour
)

// Config configures a Server.
type Config struct {
	// Conn is the NATS connection to core. Required.
	Conn *nats.Conn
	// Prefix is the deployment's subject prefix. Default: none.
	Prefix string
	// Addr is the HOST:PORT Run listens on. Default AddrDefault
	// (127.0.0.1:8080).
	Addr string
	// Auth protects the API, the dashboard and /events. Default: none, which
	// New accepts only on a loopback Addr unless InsecureBind is set.
	Auth Auth
	// TLSCert and TLSKey are PEM files of the certificate (with its chain)
	// and its key: with both, the server serves HTTPS only, and a plain
	// HTTP request gets 400. New loads them and fails when it cannot.
	// Default: none, plain HTTP.
	TLSCert, TLSKey string
	// SessionKey signs the session cookies of browsers that log in with the
	// token; at least SessionKeyMinBytes. Servers that share it accept each
	// other's cookies. Default: random per server, so a restart signs
	// everyone out.
	SessionKey []byte
	// SessionTTL is how long a session cookie is valid. Default
	// SessionTTLDefault (12h).
	SessionTTL time.Duration
	// MetricsAuth protects /metrics. Default (nil): the same as Auth. A
	// pointer to a zero Auth leaves /metrics open.
	MetricsAuth *Auth
	// InsecureBind allows a non-loopback Addr without Auth. Default false:
	// New refuses with ErrInsecureBind.
	InsecureBind bool
	// Metrics sees every event and every core call. Default: none.
	Metrics Metrics
	// MetricsHandler serves GET /metrics. Default (nil): /metrics is not
	// served.
	MetricsHandler http.Handler
	// MaxBodyBytes limits a request body. Default MaxBodyBytesDefault (1 MiB).
	MaxBodyBytes int64
	// MaxPopWait caps the wait of POST /pop. Default MaxPopWaitDefault (30s);
	// at most core.MaxLeaseWait (5 min), the longest a lease may wait.
	MaxPopWait time.Duration
	// CallTimeout bounds one call to core. Default bus.CallTimeoutDefault (10s).
	CallTimeout time.Duration
	// Heartbeat is how often an idle event stream gets a comment line, so
	// that proxies keep it open. Default HeartbeatDefault (25s).
	Heartbeat time.Duration
	// DurableEvents says the deployment keeps its events in the durable
	// event stream (events.durable): GET /events then sends each event's
	// stream sequence as its SSE id, and a client that reconnects with
	// Last-Event-ID gets every event after it first. Default false.
	DurableEvents bool
	// ShutdownTimeout bounds how long Run waits for requests in flight after
	// its context ends. Default ShutdownTimeoutDefault (10s).
	ShutdownTimeout time.Duration
	// BasePath mounts every route under a path, e.g. "/admin/queues": the
	// dashboard is then at /admin/queues/, the API at /admin/queues/stats.
	// The dashboard's own links are relative, so it also works behind a
	// proxy that strips such a prefix with no BasePath here. Default: none.
	BasePath string
	// Logger gets failures. Default: discard.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	c.Addr = cmp.Or(c.Addr, AddrDefault)
	c.MaxBodyBytes = cmp.Or(c.MaxBodyBytes, MaxBodyBytesDefault)
	c.MaxPopWait = cmp.Or(c.MaxPopWait, MaxPopWaitDefault)
	c.CallTimeout = cmp.Or(c.CallTimeout, bus.CallTimeoutDefault)
	c.Heartbeat = cmp.Or(c.Heartbeat, HeartbeatDefault)
	c.ShutdownTimeout = cmp.Or(c.ShutdownTimeout, ShutdownTimeoutDefault)
	c.SessionTTL = cmp.Or(c.SessionTTL, SessionTTLDefault)
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	c.BasePath = strings.TrimSuffix(c.BasePath, "/")
	if c.Metrics == nil {
		c.Metrics = nopMetrics{}
	}
	if c.MetricsAuth == nil {
		same := c.Auth
		c.MetricsAuth = &same
	}
	return c
}

func (c Config) validate() error {
	if c.MaxBodyBytes < 0 || c.MaxPopWait < 0 || c.CallTimeout < 0 || c.Heartbeat < 0 || c.ShutdownTimeout < 0 {
		return errors.New("httpapi: MaxBodyBytes, MaxPopWait, CallTimeout, Heartbeat and ShutdownTimeout must not be negative")
	}
	if c.SessionTTL < time.Second {
		return fmt.Errorf("httpapi: session TTL %s: must be at least 1s", c.SessionTTL)
	}
	if n := len(c.SessionKey); n > 0 && n < SessionKeyMinBytes {
		return fmt.Errorf("httpapi: session key: %d bytes, needs at least %d", n, SessionKeyMinBytes)
	}
	if err := CheckBasePath(c.BasePath); err != nil {
		return fmt.Errorf("httpapi: base path: %w", err)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("httpapi: tls: a certificate and its key go together: give both files or neither")
	}
	if err := c.Auth.validate(); err != nil {
		return fmt.Errorf("httpapi: auth: %w", err)
	}
	if err := c.MetricsAuth.validate(); err != nil {
		return fmt.Errorf("httpapi: metrics auth: %w", err)
	}
	if c.MaxPopWait > core.MaxLeaseWait*time.Millisecond {
		return fmt.Errorf("httpapi: MaxPopWait %v is over core's limit on a lease's wait, %v", c.MaxPopWait, core.MaxLeaseWait*time.Millisecond)
	}
	return CheckBind(c.Addr, c.Auth.Enabled(), c.InsecureBind)
}

// Server serves the API, the dashboard, /events and /metrics. Use Run, or
// Start with Handler and Close to mount it elsewhere (tests do).
type Server struct {
	cfg     Config
	core    *core.Client
	subj    bus.Subjects
	log     *slog.Logger
	metrics Metrics
	handler http.Handler
	hub     *hub
	// tls is the server's TLS config; nil serves plain HTTP.
	tls      *tls.Config
	sessions *sessions
	limit    *loginLimiter
	// now is the clock of sessions and the login limit; tests set it.
	now func() time.Time
	// pause keeps a held address's line for a wrong try's d (limit.go),
	// ending early when the server closes; tests set it.
	pause func(d time.Duration)
	// stop is closed by Close: it ends pauses and waits in the lines.
	stop     chan struct{}
	stopOnce sync.Once
	// table is every route with what it needs (routes.go), for tests.
	table []route

	mu     sync.Mutex
	subs   []*nats.Subscription // nil until Start
	closed bool
}

// New checks cfg and builds the server. Its only I/O is reading the TLS
// files.
func New(cfg Config) (*Server, error) {
	if cfg.Conn == nil {
		panic("httpapi: Config.Conn is nil")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// Every call the server makes to core goes through this client, which
	// reports each one to the metrics hook.
	client, err := core.NewClient(cfg.Conn, &core.ClientOptions{
		Prefix: cfg.Prefix, Timeout: cfg.CallTimeout, OnCall: cfg.Metrics.RPC,
	})
	if err != nil {
		return nil, fmt.Errorf("httpapi: %w", err)
	}
	tlsCfg, err := loadTLS(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		core:     client,
		subj:     client.Subjects(),
		log:      cfg.Logger.With("component", "http"),
		metrics:  cfg.Metrics,
		hub:      newHub(),
		tls:      tlsCfg,
		sessions: newSessions(cfg.SessionKey, cfg.SessionTTL),
		now:      time.Now,
		stop:     make(chan struct{}),
	}
	s.pause = func(d time.Duration) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-s.stop:
		}
	}
	s.limit = newLoginLimiter(LoginBurstDefault, LoginEveryDefault, func() time.Time { return s.now() })
	s.handler = s.routes()
	return s, nil
}

// Handler returns the server's handler. Without Start, /events streams
// nothing and the metrics see no events.
func (s *Server) Handler() http.Handler { return s.handler }

// Start subscribes to every job and queue event. When it returns, each event
// published afterwards reaches the event streams and the metrics. Starting
// a started server does nothing; a closed one cannot start again.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return errors.New("httpapi: start: the server is closed")
	case s.subs != nil:
		return nil
	}
	for subject, fn := range map[string]nats.MsgHandler{
		s.subj.AllJobEvents(): s.onEvent, s.subj.AllQueueEvents(): s.onEvent, s.subj.HTTPLogout(): s.onLogout,
	} {
		sub, err := s.cfg.Conn.Subscribe(subject, fn)
		if err != nil {
			s.unsubscribe()
			return fmt.Errorf("httpapi: subscribe %s: %w", subject, err)
		}
		s.subs = append(s.subs, sub)
	}
	// Flush: the server knows the subscriptions once Start returns.
	if err := s.cfg.Conn.Flush(); err != nil {
		s.unsubscribe()
		return fmt.Errorf("httpapi: subscribe to events: %w", err)
	}
	return nil
}

// Close ends every event stream and unsubscribes. Handlers already running
// finish on their own.
func (s *Server) Close() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.hub.close()
	s.mu.Lock()
	s.closed = true
	s.unsubscribe()
	s.mu.Unlock()
}

func (s *Server) unsubscribe() {
	for _, sub := range s.subs {
		_ = sub.Unsubscribe()
	}
	s.subs = nil
}

// logoutNote is the body of an HTTPLogout announcement.
type logoutNote struct {
	ID     string `json:"id"`
	Expiry int64  `json:"expiry"` // unix seconds
}

// announceLogout tells every HTTP server of the deployment that ses ended.
// A failure is logged: the session has ended here all the same.
func (s *Server) announceLogout(ses session) {
	data, _ := json.Marshal(logoutNote{ID: ses.id, Expiry: ses.expiry})
	if err := s.cfg.Conn.Publish(s.subj.HTTPLogout(), data); err != nil {
		s.log.Warn("could not announce a logout to the other HTTP servers", "err", err)
	}
}

// onLogout hears a session that a server (this one too) ended.
func (s *Server) onLogout(m *nats.Msg) {
	var note logoutNote
	if err := json.Unmarshal(m.Data, &note); err != nil || note.ID == "" {
		return
	}
	s.sessions.revoke(note.ID, note.Expiry, s.now())
}

// loadTLS reads the certificate and key, if given, so that a bad file is
// an error at start rather than at the first client.
func loadTLS(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("httpapi: tls: certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// Scheme is "https" when the server serves TLS, else "http".
func (s *Server) Scheme() string {
	if s.tls != nil {
		return "https"
	}
	return "http"
}

// Listen opens the listener on Config.Addr.
func (s *Server) Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("httpapi: listen on %s: %w", s.cfg.Addr, err)
	}
	return ln, nil
}

// Run listens on Config.Addr and serves until ctx ends (see Serve).
func (s *Server) Run(ctx context.Context) error {
	ln, err := s.Listen()
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Serve starts the server (see Start), if that has not been done, and
// serves on ln until ctx ends. Then
// it ends the event streams, which would otherwise never finish, and waits
// up to ShutdownTimeout for the other requests. It returns nil after a clean
// stop.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.Start(); err != nil {
		_ = ln.Close()
		return err
	}
	srv := &http.Server{
		Handler: s.handler,
		// No WriteTimeout: event streams and waiting pops are long on purpose.
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	served := make(chan error, 1)
	if s.tls != nil {
		srv.TLSConfig = s.tls
		go func() { served <- srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { served <- srv.Serve(ln) }()
	}
	select {
	case err := <-served:
		s.Close()
		return fmt.Errorf("httpapi: serve: %w", err)
	case <-ctx.Done():
	}
	s.Close()
	shutCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(shutCtx)
	<-served // http.ErrServerClosed once Shutdown has begun
	if err != nil {
		_ = srv.Close()
		return fmt.Errorf("httpapi: shutdown: %w", err)
	}
	return nil
}
