package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"os"
	"strings"
	"time"

	"github.com/kuebus/kuebus/httpapi"
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
	tlsCert, tlsKey            string
	sessionTTL                 time.Duration
}

func (f *httpFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.token, "http-token", "", "bearer `TOKEN` the HTTP API and dashboard require (default $"+envHTTPToken+")")
	fs.StringVar(&f.basic, "http-basic", "", "`USER:PASSWORD` of basic auth for the HTTP API and dashboard (default $"+envHTTPBasic+")")
	fs.StringVar(&f.metricsToken, "http-metrics-token", "", "bearer `TOKEN` /metrics requires instead of the API's credentials (default $"+envHTTPMetricsToken+")")
	fs.BoolVar(&f.metricsOpen, "http-metrics-open", false, "serve /metrics without credentials even when the API needs them")
	fs.BoolVar(&f.insecureBind, "http-insecure-bind", false, "allow --http-listen on a non-loopback address without --http-token or --http-basic")
	fs.StringVar(&f.tlsCert, "http-tls-cert", "", "PEM certificate `FILE` (with its chain): with --http-tls-key, serve HTTPS only")
	fs.StringVar(&f.tlsKey, "http-tls-key", "", "PEM key `FILE` of --http-tls-cert")
	fs.DurationVar(&f.sessionTTL, "http-session-ttl", httpapi.SessionTTLDefault, "how long a dashboard login lasts, a `DURATION`")
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
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usagef("--http-tls-cert and --http-tls-key go together: give both files or neither")
	}
	for _, file := range []struct{ flag, path string }{{"http-tls-cert", f.tlsCert}, {"http-tls-key", f.tlsKey}} {
		if file.path == "" {
			continue
		}
		if _, err := os.Stat(file.path); err != nil {
			return usagef("--%s: %v", file.flag, err)
		}
	}
	if f.tlsCert != "" {
		// Loaded here too so that a file that is no PEM pair is refused
		// before NATS and Redis start, not after.
		if _, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey); err != nil {
			return usagef("--http-tls-cert, --http-tls-key: %v", err)
		}
	}
	if f.sessionTTL < time.Second {
		return usagef("--http-session-ttl: %s is shorter than 1s", f.sessionTTL)
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
