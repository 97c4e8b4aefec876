package node

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/httpapi"
	"github.com/kuebus/kuebus/node/redisproc"
	"github.com/kuebus/kuebus/promoter"
)

// Config is what Start needs: the node's deployment, as a file says it,
// and what only code can say.
type Config struct {
	// Node is the node's deployment: its name, roles, NATS, Redis,
	// memberlist and HTTP sections, as cluster-config loads them from a
	// file (`kuebus node`) or a command builds them (`kuebus dev`, the
	// bench, tests). Start works on a copy with cluster-config's defaults
	// filled in, and refuses one that Check refuses. Required.
	Node *clusterconfig.Config
	// ManagedRedis, when set, makes the node start a redis-server child of
	// its own with these options before anything else, serve core from it
	// (Node.Redis must then be empty), and stop it after everything else.
	// Default: none, Node.Redis says where Redis is.
	ManagedRedis *redisproc.Options
	// Logger gets the node's lines and its parts'. Default: discard.
	Logger *slog.Logger
	// Alone says the node is its ring's only member for good (`kuebus
	// dev`, the bench): it leads from the start, so its metrics say so
	// before its queue.leader announcement reaches them. Default false.
	Alone bool

	// Service, Promoter and HTTP, when set, adjust a part's config just
	// before the part is built: a test's clock, hooks and limits. Test
	// hooks: nil in production.
	Service  func(*service.Config)
	Promoter func(*promoter.NodeConfig)
	HTTP     func(*httpapi.Config)
}

// ConfigError is a failure the config caused: a field cluster-config's
// Validate refuses, or one only the node can judge (a file external NATS
// needs that is not there, a URL go-redis cannot read). `kuebus node` exits
// with a usage error for it.
type ConfigError struct {
	// Err names the field: "config: http.listen ...".
	Err error
}

func (e *ConfigError) Error() string { return "node: " + e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Check checks cfg, a config with cluster-config's defaults filled in
// (Load's), as Start does before it starts anything: cluster-config's
// Validate (which applies the HTTP rules, bind rule included), and the
// files external NATS needs.
// Every error is a *ConfigError.
func Check(cfg *clusterconfig.Config) error {
	if err := cfg.Validate(); err != nil {
		return &ConfigError{Err: err}
	}
	if x := cfg.NATS.External; x != nil && cfg.NeedsConn() {
		subj, _ := bus.NewSubjects(cfg.Prefix) // validated above
		if _, err := externalNATSOptions(x, subj); err != nil {
			return err
		}
	}
	return nil
}

// httpAuth is who may use the node's HTTP API: http.token (or the token
// of its locked embedded NATS) and http.basic as admins, and the HTTP
// users (the locked NATS's password users, then http.users) with their
// roles. A node whose NATS is locked has its HTTP API locked too (Validate
// refuses one that would not be).
func httpAuth(c *clusterconfig.Config) httpapi.Auth {
	user, pass, _ := strings.Cut(c.HTTP.Basic, ":")
	a := httpapi.Auth{Token: c.HTTPToken(), User: user, Password: pass}
	for _, u := range c.HTTPUsers() {
		a.Users = append(a.Users, httpapi.User{Name: u.Name, Password: u.Password, Role: bus.Role(u.Role)})
	}
	return a
}

// externalNATSOptions turns the credentials and TLS files into connection
// options with the user's inbox prefix, checking first that each file is
// there, by field.
func externalNATSOptions(x *clusterconfig.ExternalNATS, subj bus.Subjects) ([]nats.Option, error) {
	files := map[string]string{"nats.external.nkey_seed_file": x.NkeySeedFile, "nats.external.creds_file": x.CredsFile}
	if x.TLS != nil {
		files["nats.external.tls.ca"], files["nats.external.tls.cert"], files["nats.external.tls.key"] = x.TLS.CA, x.TLS.Cert, x.TLS.Key
	}
	for field, f := range files {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return nil, configErrorf("config: %s: %v", field, err)
		}
	}
	auth := bus.Auth{User: x.User, Password: x.Password, Token: x.Token, NkeySeedFile: x.NkeySeedFile, CredsFile: x.CredsFile}
	if t := x.TLS; t != nil {
		auth.TLSCA, auth.TLSCert, auth.TLSKey = t.CA, t.Cert, t.Key
	}
	opts, err := auth.Options(subj)
	if err != nil {
		return nil, configErrorf("config: nats.external: %v", strings.TrimPrefix(err.Error(), "bus: "))
	}
	return opts, nil
}

func configErrorf(format string, args ...any) error {
	return &ConfigError{Err: fmt.Errorf(format, args...)}
}
