package main

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/nats-io/nats.go"
	_ "modernc.org/sqlite"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/outbox"
)

// Exit codes, as kuebus's.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// Variables that give flags their defaults: a DSN or a password in a
// variable stays out of `ps`.
const (
	envDriver       = "KUEBUS_OUTBOX_DRIVER"
	envDSN          = "KUEBUS_OUTBOX_DSN"
	envNATSURL      = "KUEBUS_NATS_URL"
	envNATSToken    = "KUEBUS_NATS_TOKEN"
	envNATSUser     = "KUEBUS_NATS_USER"
	envNATSPassword = "KUEBUS_NATS_PASSWORD"
	envNATSNkey     = "KUEBUS_NATS_NKEY"
	envNATSCreds    = "KUEBUS_NATS_CREDS"
	envNATSTLSCA    = "KUEBUS_NATS_TLS_CA"
	envNATSTLSCert  = "KUEBUS_NATS_TLS_CERT"
	envNATSTLSKey   = "KUEBUS_NATS_TLS_KEY"
)

// timeoutDefault bounds each call to core.
const timeoutDefault = 10 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop) // a second signal kills at once
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: kuebus-outbox COMMAND [flags]

Moves jobs from an application's SQL transactions to kuebus (docs/outbox.md).

commands:
  migrate   make the outbox's tables (and PostgreSQL's NOTIFY trigger)
  relay     move committed rows to core, until SIGTERM
  stats     print the rows waiting, the oldest row's age and the dead rows as JSON

Run 'kuebus-outbox COMMAND -h' for a command's flags.
`

// usageError is a mistake in the command line: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	case "migrate":
		err = runMigrate(ctx, args[1:], stderr)
	case "relay":
		err = runRelay(ctx, args[1:], stderr)
	case "stats":
		err = runStats(ctx, args[1:], stdout, stderr)
	default:
		err = usagef("unknown command %q (see 'kuebus-outbox help')", args[0])
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	}
	fmt.Fprintf(stderr, "kuebus-outbox: %s\n", bus.RedactURL(err.Error()))
	if _, ok := errors.AsType[*usageError](err); ok {
		return exitUsage
	}
	return exitFailure
}

// dbFlags are the database flags of every command.
type dbFlags struct{ driver, dsn string }

func (d *dbFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.driver, "driver", os.Getenv(envDriver), "the database: postgres, mysql (MariaDB too) or sqlite ($"+envDriver+" overrides the default)")
	fs.StringVar(&d.dsn, "dsn", "", "the database's `DSN`, as its Go driver takes it (default $"+envDSN+")")
	if v := os.Getenv(envDSN); v != "" {
		d.dsn = v // set after registering: --help never shows it
	}
}

// driverNames maps a dialect to the database/sql driver this binary links.
var driverNames = map[outbox.Dialect]string{outbox.Postgres: "pgx", outbox.MySQL: "mysql", outbox.SQLite: "sqlite"}

// open checks the flags and opens the outbox; the caller closes db.
func (d *dbFlags) open() (*outbox.Outbox, *sql.DB, error) {
	if d.driver == "" {
		return nil, nil, usagef("--driver: missing: postgres, mysql or sqlite")
	}
	dialect, err := outbox.ParseDialect(d.driver)
	if err != nil {
		return nil, nil, usagef("--driver: %s", strings.TrimPrefix(bus.MessageOf(err), "dialect: "))
	}
	if d.dsn == "" {
		return nil, nil, usagef("--dsn: missing (or set $%s)", envDSN)
	}
	db, err := sql.Open(driverNames[dialect], d.dsn)
	if err != nil {
		return nil, nil, usagef("--dsn: %v", err)
	}
	ob, err := outbox.Open(db, dialect)
	if err != nil {
		_ = db.Close()
		return nil, nil, err
	}
	return ob, db, nil
}

func parse(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%s: %v", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

func runMigrate(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	var d dbFlags
	d.register(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	ob, db, err := d.open()
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	return ob.Migrate(ctx)
}

func runStats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("stats", flag.ContinueOnError)
	var d dbFlags
	d.register(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	ob, db, err := d.open()
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	st, err := ob.Stats(ctx)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(map[string]any{
		"waiting": st.Waiting, "oldest_age_ms": st.OldestAge.Milliseconds(), "dead": st.Dead})
}

// relayFlags are relay's own flags besides the database's.
type relayFlags struct {
	natsURL, prefix string
	timeout         time.Duration
	auth            bus.Auth
	batchSize       int
	poll            time.Duration
	metricsAddr     string
	insecure        bool
}

func (r *relayFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.natsURL, "nats-url", cmp.Or(os.Getenv(envNATSURL), bus.URLDefault), "NATS `URL` of the queue ($"+envNATSURL+" overrides the default)")
	fs.StringVar(&r.prefix, "prefix", "", "subject `PREFIX` of the deployment, e.g. acme")
	fs.DurationVar(&r.timeout, "timeout", timeoutDefault, "how long to wait for each answer from core, a `DURATION`")
	fs.IntVar(&r.batchSize, "batch-size", outbox.BatchSizeDefault, "rows per create_bulk, 1..1000")
	fs.DurationVar(&r.poll, "poll-interval", outbox.PollIntervalDefault, "how often to look for rows when the table was empty (MySQL, SQLite; PostgreSQL LISTENs)")
	fs.StringVar(&r.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://`ADDR`/metrics (a loopback address unless --insecure)")
	fs.BoolVar(&r.insecure, "insecure", false, "allow --metrics-addr beyond loopback (it has no authentication)")
	for _, f := range []struct {
		to        *string
		name, env string
		usage     string
	}{
		{&r.auth.Token, "nats-token", envNATSToken, "authenticate to NATS with this `TOKEN`"},
		{&r.auth.User, "nats-user", envNATSUser, "authenticate to NATS as this `USER`"},
		{&r.auth.Password, "nats-password", envNATSPassword, "the `PASSWORD` of --nats-user (prefer the variable: a flag shows in ps)"},
		{&r.auth.NkeySeedFile, "nats-nkey", envNATSNkey, "authenticate with the nkey seed in this `FILE`"},
		{&r.auth.CredsFile, "nats-creds", envNATSCreds, "authenticate with this .creds `FILE` (JWT and nkey)"},
		{&r.auth.TLSCA, "nats-tls-ca", envNATSTLSCA, "trust the NATS servers whose certificates the CA in this `FILE` signed"},
		{&r.auth.TLSCert, "nats-tls-cert", envNATSTLSCert, "client certificate `FILE`, for servers that ask for one"},
		{&r.auth.TLSKey, "nats-tls-key", envNATSTLSKey, "the key `FILE` of --nats-tls-cert"},
	} {
		fs.StringVar(f.to, f.name, "", f.usage+" (default $"+f.env+")")
		if v := strings.TrimSpace(os.Getenv(f.env)); v != "" {
			*f.to = v
		}
	}
}

// check validates the flags before anything is dialled, and gives the
// NATS options of the credentials they name.
func (r *relayFlags) check() ([]bus.Option, error) {
	subj, err := bus.NewSubjects(r.prefix)
	if err != nil {
		return nil, usagef("--prefix: %v", err)
	}
	switch {
	case r.timeout <= 0:
		return nil, usagef("--timeout: %s is not positive", r.timeout)
	case r.batchSize < 1 || r.batchSize > outbox.MaxBatchSize:
		return nil, usagef("--batch-size: %d is outside 1..%d", r.batchSize, outbox.MaxBatchSize)
	case r.poll <= 0:
		return nil, usagef("--poll-interval: %s is not positive", r.poll)
	}
	if err := bus.CheckURL(r.natsURL); err != nil {
		return nil, usagef("--nats-url: %v", err)
	}
	if r.metricsAddr != "" {
		host, _, err := net.SplitHostPort(r.metricsAddr)
		if err != nil {
			return nil, usagef("--metrics-addr: %v", err)
		}
		if !bus.LoopbackHost(host) && !r.insecure {
			return nil, usagef("--metrics-addr: %s is beyond loopback and the metrics have no authentication: add --insecure to serve them there", r.metricsAddr)
		}
	}
	opts, err := r.auth.Options(subj)
	if err != nil {
		return nil, usagef("%s", strings.TrimPrefix(err.Error(), "bus: "))
	}
	return opts, nil
}

func runRelay(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("relay", flag.ContinueOnError)
	var d dbFlags
	var rf relayFlags
	d.register(fs)
	rf.register(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	opts, err := rf.check()
	if err != nil {
		return err
	}
	ob, db, err := d.open()
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	nc, err := bus.Connect(rf.natsURL, "kuebus-outbox", append(opts, nats.Timeout(rf.timeout), nats.MaxReconnects(-1))...)
	if err != nil {
		return fmt.Errorf("connect to NATS at %s: %w", bus.RedactURL(rf.natsURL), err)
	}
	defer nc.Close()
	client, err := core.NewClient(nc, &core.ClientOptions{Prefix: rf.prefix, Timeout: rf.timeout})
	if err != nil { // check took the prefix already
		return fmt.Errorf("kuebus-outbox: client: %w", err)
	}
	defer client.Close()
	logger := slog.New(slog.NewTextHandler(stderr, nil)).With("component", "outbox")
	relay := ob.Relay(client, &outbox.RelayOptions{BatchSize: rf.batchSize, PollInterval: rf.poll, Logger: logger})
	if rf.metricsAddr != "" {
		stopMetrics, err := serveMetrics(ctx, rf.metricsAddr, ob, relay, logger)
		if err != nil {
			return err
		}
		defer stopMetrics()
	}
	logger.InfoContext(ctx, "outbox relay: running", "driver", ob.Dialect().String(), "nats", bus.RedactURL(rf.natsURL))
	return relay.Run(ctx)
}

// serveMetrics serves the outbox's stats and the relay's counters in
// Prometheus's text format; stop shuts the server down.
func serveMetrics(ctx context.Context, addr string, ob *outbox.Outbox, relay *outbox.Relay, logger *slog.Logger) (stop func(), err error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		st, err := ob.Stats(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		c := relay.Counts()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = io.WriteString(w, st.Text()+
			"# HELP kuebus_outbox_relayed_total Rows this relay moved to core.\n"+
			"# TYPE kuebus_outbox_relayed_total counter\n"+
			"kuebus_outbox_relayed_total "+strconv.FormatInt(c.Created, 10)+"\n"+
			"# HELP kuebus_outbox_dead_total Rows this relay moved to kuebus_outbox_dead.\n"+
			"# TYPE kuebus_outbox_dead_total counter\n"+
			"kuebus_outbox_dead_total "+strconv.FormatInt(c.Dead, 10)+"\n")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.ErrorContext(ctx, "outbox relay: metrics server", "error", err)
		}
	}()
	logger.InfoContext(ctx, "outbox relay: metrics", "addr", l.Addr().String())
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
	}, nil
}
