package main

import (
	"flag"
	"os"
	"strings"
	"time"

	clusterconfig "github.com/kuebus/kuebus/cluster-config"
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
	basePath                   string
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
	fs.StringVar(&f.basePath, "http-base-path", "", "serve the API, dashboard and /metrics under this `PATH`, e.g. /admin/queues")
}

// check fills secrets from the environment and applies the HTTP rules
// (clusterconfig.HTTP.Check, the bind rule included unless listen is "")
// to the section the flags describe, naming the flags.
func (f *httpFlags) check(listen string) error {
	f.token = cmpOrEnv(f.token, envHTTPToken)
	f.basic = cmpOrEnv(f.basic, envHTTPBasic)
	f.metricsToken = cmpOrEnv(f.metricsToken, envHTTPMetricsToken)
	var first error
	f.section(listen).Check(httpFlag, func(field, msg string) {
		if first == nil {
			first = usagef("%s: %s", httpFlag(field), msg)
		}
	})
	return first
}

// httpFlag is the flag of an HTTP section's field: tls_cert is
// --http-tls-cert.
func httpFlag(field string) string { return "--http-" + strings.ReplaceAll(field, "_", "-") }

// section is the node config's HTTP section the flags describe.
func (f *httpFlags) section(listen string) clusterconfig.HTTP {
	return clusterconfig.HTTP{
		Listen:       listen,
		Token:        f.token,
		Basic:        f.basic,
		MetricsToken: f.metricsToken,
		MetricsOpen:  f.metricsOpen,
		InsecureBind: f.insecureBind,
		TLSCert:      f.tlsCert,
		TLSKey:       f.tlsKey,
		SessionTTL:   f.sessionTTL,
		BasePath:     f.basePath,
	}
}

func cmpOrEnv(v, env string) string {
	if v != "" {
		return v
	}
	return os.Getenv(env)
}
