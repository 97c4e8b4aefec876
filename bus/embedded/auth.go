package embedded

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/kuebus/kuebus/bus"
)

// Locked reports whether cfg authenticates clients (a token or users).
func (cfg Config) Locked() bool { return cfg.Token != "" || len(cfg.Users) > 0 }

// configureAuth sets the server's users (or token), its route
// credentials, and this process's own in-process users.
func (e *Server) configureAuth(cfg Config, opts *server.Options) error {
	if cfg.RouteUser != "" || cfg.RoutePassword != "" {
		if cfg.RouteUser == "" || cfg.RoutePassword == "" {
			return errors.New("bus: embedded NATS: route user and route password go together")
		}
		opts.Cluster.Username, opts.Cluster.Password = cfg.RouteUser, cfg.RoutePassword
		// The routes this server dials present the same credentials.
		for _, u := range opts.Routes {
			u.User = url.UserPassword(cfg.RouteUser, cfg.RoutePassword)
		}
	}
	switch {
	case cfg.Token != "" && len(cfg.Users) > 0:
		return errors.New("bus: embedded NATS: a token and users exclude each other: give the token's holders an admin user instead")
	case cfg.Token != "":
		opts.Authorization = cfg.Token
		e.token = cfg.Token
		return nil
	case len(cfg.Users) == 0:
		return nil
	}
	seen := make(map[string]bool)
	for i, u := range cfg.Users {
		id, err := checkUser(u)
		if err != nil {
			return fmt.Errorf("bus: embedded NATS: user %d (%q): %w", i+1, u.Name, err)
		}
		if seen[id] {
			return fmt.Errorf("bus: embedded NATS: user %d (%q): listed twice", i+1, u.Name)
		}
		seen[id] = true
		inbox, err := cfg.Subjects.Inbox(id)
		if err != nil {
			return fmt.Errorf("bus: embedded NATS: user %d (%q): %w", i+1, u.Name, err)
		}
		perms := Permissions(cfg.Subjects, u.Role, inbox)
		if u.Nkey != "" {
			opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: u.Nkey, Permissions: perms})
		} else {
			opts.Users = append(opts.Users, &server.User{Username: u.Name, Password: u.Password, Permissions: perms})
		}
	}
	return e.addLocalUsers(cfg.Subjects, opts)
}

// checkUser checks one configured user and returns the id its inbox is
// named by: its name, or its public key.
func checkUser(u User) (string, error) {
	if _, err := bus.ParseRole(string(u.Role)); err != nil {
		return "", fmt.Errorf("role: %w", err)
	}
	if u.Nkey != "" {
		if u.Password != "" {
			return "", errors.New("give a password or an nkey, not both")
		}
		if !nkeys.IsValidPublicUserKey(u.Nkey) {
			return "", fmt.Errorf("nkey %q is not a public user key (U...): generate one with nk -gen user -pubout", u.Nkey)
		}
		return u.Nkey, nil
	}
	if err := bus.ValidToken(u.Name); err != nil {
		return "", fmt.Errorf("name: %v", err)
	}
	if strings.HasPrefix(u.Name, bus.LocalUserPrefix) {
		return "", fmt.Errorf("name: %s is reserved for the server's own in-process users", bus.LocalUserPrefix)
	}
	if u.Password == "" {
		return "", errors.New("needs a password or an nkey")
	}
	return u.Name, nil
}

// addLocalUsers adds one user per role that only in-process connections
// may log in as, with a random password: the node's own parts (core,
// promoter, HTTP) then authenticate without a configured secret, each
// with its role's permissions.
func (e *Server) addLocalUsers(subj bus.Subjects, opts *server.Options) error {
	e.local = make(map[bus.Role]localUser, len(bus.Roles))
	for _, role := range bus.Roles {
		var b [24]byte
		if _, err := rand.Read(b[:]); err != nil {
			return fmt.Errorf("bus: embedded NATS: in-process user: %w", err)
		}
		name := bus.LocalUserPrefix + string(role)
		inbox, err := subj.Inbox(name)
		if err != nil {
			return fmt.Errorf("bus: embedded NATS: in-process user: %w", err)
		}
		u := localUser{name: name, password: hex.EncodeToString(b[:]), inbox: inbox}
		e.local[role] = u
		opts.Users = append(opts.Users, &server.User{
			Username:               u.name,
			Password:               u.password,
			Permissions:            Permissions(subj, role, inbox),
			AllowedConnectionTypes: map[string]struct{}{jwt.ConnectionTypeInProcess: {}},
		})
	}
	return nil
}

// configureTLS loads the client and route certificates.
func configureTLS(cfg Config, opts *server.Options) error {
	if t := cfg.TLS; t != nil {
		tc, err := tlsConfig(t, t.Verify)
		if err != nil {
			return fmt.Errorf("bus: embedded NATS: TLS: %w", err)
		}
		opts.TLSConfig, opts.TLS, opts.TLSVerify = tc, true, t.Verify
		opts.TLSTimeout = 2 // seconds, nats-server's own default
	}
	if t := cfg.ClusterTLS; t != nil {
		if cfg.ClusterListen == "" {
			return errors.New("bus: embedded NATS: cluster TLS needs a cluster listen address")
		}
		tc, err := tlsConfig(t, t.CA != "")
		if err != nil {
			return fmt.Errorf("bus: embedded NATS: cluster TLS: %w", err)
		}
		// A server dials routes as well as taking them: the CA that
		// verifies the routes' certificates verifies the servers' too, as
		// nats-server's own config does.
		tc.RootCAs = tc.ClientCAs
		opts.Cluster.TLSConfig, opts.Cluster.TLSTimeout = tc, 2
	}
	return nil
}

// tlsConfig loads t's files; verify asks the other side for a certificate
// signed by t.CA.
func tlsConfig(t *TLSFiles, verify bool) (*tls.Config, error) {
	switch {
	case t.Cert == "" || t.Key == "":
		return nil, errors.New("cert and key are required")
	case verify && t.CA == "":
		return nil, errors.New("verifying certificates needs ca, the CA that signed them")
	}
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: t.Cert, KeyFile: t.Key, CaFile: t.CA, Verify: verify})
	if err != nil {
		return nil, err
	}
	return tc, nil
}
