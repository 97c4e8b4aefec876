package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
	"github.com/kuebus/kuebus/httpapi/prom"
)

// Environment variables that stand in for the secret flags, so that secrets
// need not show in `ps`.
const (
	envHTTPToken        = "KUEBUS_HTTP_TOKEN"
	envHTTPBasic        = "KUEBUS_HTTP_BASIC"
	envHTTPMetricsToken = "KUEBUS_HTTP_METRICS_TOKEN"
)

// httpFlags are the access flags of the HTTP API, for every command that
// serves it.
type httpFlags struct {
	token, basic, metricsToken string
	metricsOpen, insecureBind  bool
}

func (f *httpFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.token, "http-token", "", "bearer `TOKEN` the HTTP API and dashboard require (default $"+envHTTPToken+")")
	fs.StringVar(&f.basic, "http-basic", "", "`USER:PASSWORD` of basic auth for the HTTP API and dashboard (default $"+envHTTPBasic+")")
	fs.StringVar(&f.metricsToken, "http-metrics-token", "", "bearer `TOKEN` /metrics requires instead of the API's credentials (default $"+envHTTPMetricsToken+")")
	fs.BoolVar(&f.metricsOpen, "http-metrics-open", false, "serve /metrics without credentials even when the API needs them")
	fs.BoolVar(&f.insecureBind, "http-insecure-bind", false, "allow --http-listen on a non-loopback address without --http-token or --http-basic")
}

// check fills secrets from the environment and applies the bind rule to
// listen ("" serves no HTTP).
func (f *httpFlags) check(listen string) error {
	f.token = cmpOrEnv(f.token, envHTTPToken)
	f.basic = cmpOrEnv(f.basic, envHTTPBasic)
	f.metricsToken = cmpOrEnv(f.metricsToken, envHTTPMetricsToken)
	if f.basic != "" && !strings.Contains(f.basic, ":") {
		return usagef("--http-basic: expected USER:PASSWORD")
	}
	if f.metricsOpen && f.metricsToken != "" {
		return usagef("--http-metrics-open and --http-metrics-token contradict each other: give one")
	}
	if listen == "" {
		return nil
	}
	auth := f.auth()
	if err := httpapi.CheckBind(listen, auth.Enabled(), f.insecureBind); errors.Is(err, httpapi.ErrInsecureBind) {
		return usagef("--http-listen %s: other machines can reach it and there is no auth: set --http-token or --http-basic, or pass --http-insecure-bind", listen)
	}
	return nil
}

func cmpOrEnv(v, env string) string {
	if v != "" {
		return v
	}
	return os.Getenv(env)
}

func (f *httpFlags) auth() httpapi.Auth {
	user, pass, _ := strings.Cut(f.basic, ":")
	return httpapi.Auth{Token: f.token, User: user, Password: pass}
}

// metricsAuth is what /metrics requires: its own token, nothing, or (nil)
// the API's credentials.
func (f *httpFlags) metricsAuth() *httpapi.Auth {
	switch {
	case f.metricsToken != "":
		return &httpapi.Auth{Token: f.metricsToken}
	case f.metricsOpen:
		return &httpapi.Auth{}
	}
	return nil
}

// devHTTP is the HTTP API of `kuebus dev`: what startHTTP started, for
// stopHTTP to stop.
type devHTTP struct {
	stop context.CancelFunc
	done sync.WaitGroup // owns the serving goroutine
	err  error          // set by that goroutine before it ends
}

// startHTTP serves the API, dashboard and metrics on --http-listen, with a
// NATS connection of its own as a separate process would have. It returns
// the URL it serves, "" when --http-listen is empty.
func (d *dev) startHTTP(natsURL string, failed context.CancelFunc) (string, error) {
	if d.cfg.httpListen == "" {
		return "", nil
	}
	conn, err := d.connect(natsURL, "kuebus-dev-http", d.nats.InProcess())
	if err != nil {
		return "", err
	}
	d.httpConn = conn
	client, err := core.NewClient(conn, &core.ClientOptions{Prefix: d.cfg.subjects.Prefix()})
	if err != nil {
		return "", fmt.Errorf("dev: %w", err)
	}
	// dev runs the only promoter, so it is always the leader.
	metrics, err := prom.New(prom.Config{Stats: client, Node: "dev", Leader: true})
	if err != nil {
		return "", fmt.Errorf("dev: %w", err)
	}
	srv, err := httpapi.New(httpapi.Config{
		Conn: conn, Prefix: d.cfg.subjects.Prefix(), Addr: d.cfg.httpListen,
		Auth: d.cfg.http.auth(), MetricsAuth: d.cfg.http.metricsAuth(), InsecureBind: d.cfg.http.insecureBind,
		Metrics: metrics, MetricsHandler: metrics.Handler(),
		Logger: d.log, ShutdownTimeout: d.cfg.shutdownTimeout,
	})
	if err != nil {
		return "", fmt.Errorf("dev: %w", err)
	}
	ln, err := srv.Listen()
	if err != nil {
		return "", fmt.Errorf("dev: %w (choose another --http-listen, or --http-listen '' for no HTTP)", err)
	}
	// Not the run context: shutdown stops HTTP first, in its order.
	ctx, stop := context.WithCancel(context.Background())
	d.web.stop = stop
	d.web.done.Go(func() {
		if err := srv.Serve(ctx, ln); err != nil {
			d.web.err = err
			failed()
		}
	})
	return "http://" + ln.Addr().String() + "/", nil
}

// stopHTTP stops serving: requests in flight get --shutdown-timeout, event
// streams end at once.
func (d *dev) stopHTTP() error {
	if d.web.stop == nil {
		return nil
	}
	d.web.stop()
	d.web.done.Wait()
	return d.web.err
}
