package embedded

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
)

// Config configures a NATS server run inside the kuebus process.
type Config struct {
	// Listen is the client address HOST:PORT. Port 0 or -1 picks a free one.
	// Default "127.0.0.1:-1".
	Listen string
	// ServerName names the server in a cluster. Default: generated, except
	// with JetStream in a cluster, where NATS requires one and each server
	// needs its own (kuebus node gives the node's name).
	ServerName string
	// ClusterName, ClusterListen and Routes join a NATS cluster: the server
	// listens for routes on ClusterListen and dials every URL in Routes
	// (nats-route://host:port). All empty means a single server. With
	// JetStreamDir the JetStream is clustered too, under ClusterName: it
	// counts its servers from Routes, and serves once more than half of
	// them are up (its meta leader is elected).
	ClusterName   string
	ClusterListen string
	Routes        []string
	// MaxPayload is the largest message in bytes. Default 1 MiB, NATS's own.
	MaxPayload int32
	// MaxPending bounds the bytes the server holds for one client that
	// does not read them: beyond it the client is cut off as a slow
	// consumer, rather than have the server (this process) buffer for it.
	// Default MaxPendingDefault (16 MiB; NATS's own is 64 MiB).
	MaxPending int64
	// ReadyTimeout bounds the wait for the server to accept clients.
	// Default 10s.
	ReadyTimeout time.Duration

	// Token locks the server with one token: every client presenting it
	// is an admin. It excludes Users. Default: none.
	Token string
	// Users lock the server with named users, each with a role (see
	// Permissions). Default: none; with neither Token nor Users the
	// server takes anonymous clients.
	Users []User
	// Subjects carries the deployment prefix the users' permissions and
	// inboxes are under. Default: none.
	Subjects bus.Subjects
	// TLS serves clients over TLS. Default: none (plain TCP).
	TLS *TLSFiles
	// ClusterTLS serves and dials routes over TLS. Default: none.
	ClusterTLS *TLSFiles
	// RouteUser and RoutePassword authenticate routes: the server asks
	// them of the routes that connect to it and presents them on the
	// routes it dials. Default: none.
	RouteUser     string
	RoutePassword string
	// JetStreamDir, when set, turns JetStream on, with this folder for the
	// streams kept on file (the durable event stream:
	// bus.EnsureEventStream). Default: "", JetStream off.
	JetStreamDir string
}

// MaxPendingDefault is Config.MaxPending's default: 16 MiB, 16 of the
// largest messages, or some 30,000 job events, a few seconds of a busy
// core's events for a subscriber that stopped reading. NATS's own 64 MiB
// let three subscribers to job.> that never read hold ~200 MB of
// kuebus dev's memory (issue 25).
const MaxPendingDefault = 16 << 20

// User is one user of a locked embedded server: a Name with a Password,
// or an Nkey (a public user key, U...) with no password; its Role fixes
// its permissions, its inbox prefix is bus.Subjects.Inbox of its name (of
// its public key for an nkey user).
type User struct {
	Name     string
	Password string
	Nkey     string
	Role     bus.Role
}

// TLSFiles are PEM files: the server's certificate and key, and the CA
// that signed the certificates of clients (or other servers). Verify asks
// every client for a certificate signed by CA; routes always ask for one
// when CA is set.
type TLSFiles struct {
	Cert   string
	Key    string
	CA     string
	Verify bool
}

// Server is a running embedded NATS server.
type Server struct {
	srv *server.Server
	// token, or local, is what this process's own connections present:
	// the server's token, or one in-process-only user per role.
	token string
	local map[bus.Role]localUser
}

// localUser is a user only in-process connections may log in as; its
// password is random and never leaves the process.
type localUser struct {
	name, password, inbox string
}

// Start starts a NATS server in this process and waits until it accepts
// clients. It installs no signal handlers: the process owns those.
func Start(cfg Config) (*Server, error) {
	host, port, err := splitHostPort(cmp.Or(cfg.Listen, "127.0.0.1:-1"), "listen")
	if err != nil {
		return nil, err
	}
	opts := &server.Options{
		ServerName: cfg.ServerName,
		Host:       host,
		Port:       port,
		NoSigs:     true,
		NoLog:      true,
		MaxPayload: cfg.MaxPayload,
		MaxPending: cmp.Or(cfg.MaxPending, MaxPendingDefault),
	}
	if cfg.JetStreamDir != "" {
		opts.JetStream, opts.StoreDir = true, cfg.JetStreamDir
	}
	if cfg.ClusterListen != "" {
		chost, cport, err := splitHostPort(cfg.ClusterListen, "cluster listen")
		if err != nil {
			return nil, err
		}
		opts.Cluster = server.ClusterOpts{Name: cmp.Or(cfg.ClusterName, "kuebus"), Host: chost, Port: cport}
		for _, r := range cfg.Routes {
			u, err := url.Parse(r)
			if err != nil || u.Host == "" {
				return nil, fmt.Errorf("bus: embedded NATS: route %q is not a URL like nats-route://127.0.0.1:6222", r)
			}
			opts.Routes = append(opts.Routes, u)
		}
	} else if len(cfg.Routes) > 0 {
		return nil, errors.New("bus: embedded NATS: routes need a cluster listen address")
	}
	e := &Server{}
	if err := e.configureAuth(cfg, opts); err != nil {
		return nil, err
	}
	if err := configureTLS(cfg, opts); err != nil {
		return nil, err
	}
	// The server only logs a failure to listen, and we run it without logs:
	// try the addresses first so a port in use fails at once, by name. A
	// cluster port that cannot be bound would leave the server without
	// routes, and a clustered JetStream waiting for a quorum it never gets.
	if port != server.RANDOM_PORT {
		if err := canListen(host, port); err != nil {
			return nil, fmt.Errorf("bus: embedded NATS cannot listen on %s:%d: %w", host, port, err)
		}
	}
	if c := opts.Cluster; cfg.ClusterListen != "" && c.Port != server.RANDOM_PORT && c.Port != 0 {
		if err := canListen(c.Host, c.Port); err != nil {
			return nil, fmt.Errorf("bus: embedded NATS cannot listen for its cluster on %s: %w", cfg.ClusterListen, err)
		}
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("bus: embedded NATS on %s: %w", cfg.Listen, err)
	}
	go srv.Start() // Start returns at once; the server runs its own goroutines, ended by Shutdown.
	wait := cfg.ReadyTimeout
	if wait == 0 {
		wait = 10 * time.Second
	}
	if !srv.ReadyForConnections(wait) {
		srv.Shutdown()
		srv.WaitForShutdown()
		why := "is the port in use?"
		if cfg.JetStreamDir != "" {
			// A JetStream that cannot start stops the server's start, and
			// the server logs why only to the logs we turned off.
			why += " Can JetStream write its store folder " + cfg.JetStreamDir + "?"
			if cfg.ClusterListen != "" {
				why += " In a cluster, JetStream also needs routes to the other servers."
			}
		}
		return nil, fmt.Errorf("bus: embedded NATS on %s:%d not ready after %s (%s)", host, port, wait, why)
	}
	e.srv = srv
	return e, nil
}

// canListen says whether host:port can be listened on now.
func canListen(host string, port int) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	return ln.Close()
}

// ClientURL is the URL clients connect to: nats://, or tls:// when the
// server serves TLS.
func (e *Server) ClientURL() string { return e.srv.ClientURL() }

// InProcessURL is the URL to give bus.Connect with InProcess or
// InProcessAs: always nats://, since an in-process pipe needs no TLS and
// a tls:// URL would make the client insist on it.
func (e *Server) InProcessURL() string {
	return "nats://" + strings.TrimPrefix(strings.TrimPrefix(e.srv.ClientURL(), "nats://"), "tls://")
}

// ClusterAddr is the address routes listen on, or nil for a single server.
func (e *Server) ClusterAddr() net.Addr { return e.srv.ClusterAddr() }

// NumRoutes reports how many routes to other servers are up.
func (e *Server) NumRoutes() int { return e.srv.NumRoutes() }

// Interest says whether a message published on subject now would reach
// anyone: a subscription of a client of this server, of a server routed
// to it, or of a JetStream stream (durable events). kuebus's users all
// live in the server's one account.
func (e *Server) Interest(subject string) bool {
	return e.srv.GlobalAccount().SubscriptionInterest(subject)
}

// InProcess is the connection option that reaches this server through an
// in-memory pipe instead of TCP: for a client in the same process (core
// beside its embedded NATS), it saves the loopback's system calls on every
// message. On a locked server it logs in as an admin.
func (e *Server) InProcess() bus.Option { return e.InProcessAs(bus.RoleAdmin) }

// InProcessAs is InProcess for a connection with role's permissions when
// the server is locked with users (an admin's when locked with a token,
// which knows no roles): it logs in as the server's in-process-only user
// of that role, with that user's inbox prefix.
func (e *Server) InProcessAs(role bus.Role) bus.Option {
	opts := []bus.Option{nats.InProcessServer(e.srv)}
	switch u, ok := e.local[role]; {
	case ok:
		opts = append(opts, nats.UserInfo(u.name, u.password), nats.CustomInboxPrefix(u.inbox))
	case e.token != "":
		opts = append(opts, nats.Token(e.token))
	}
	return func(o *nats.Options) error {
		for _, opt := range opts {
			if err := opt(o); err != nil {
				return err
			}
		}
		return nil
	}
}

// Shutdown stops the server and waits until it has stopped. Idempotent.
func (e *Server) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

func splitHostPort(addr, what string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("bus: embedded NATS: %s address %q: %v", what, addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < -1 || port > 65535 {
		return "", 0, fmt.Errorf("bus: embedded NATS: %s address %q: port must be a number from 0 to 65535", what, addr)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return host, port, nil
}
