package main

import (
	"flag"
	"os"
	"strings"

	"github.com/kuebus/kuebus/bus"
)

// Variables that give the credential flags their defaults: a password in
// a variable stays out of `ps`.
const (
	envNATSToken    = "KUEBUS_NATS_TOKEN"
	envNATSUser     = "KUEBUS_NATS_USER"
	envNATSPassword = "KUEBUS_NATS_PASSWORD"
	envNATSNkey     = "KUEBUS_NATS_NKEY"
	envNATSCreds    = "KUEBUS_NATS_CREDS"
	envNATSTLSCA    = "KUEBUS_NATS_TLS_CA"
	envNATSTLSCert  = "KUEBUS_NATS_TLS_CERT"
	envNATSTLSKey   = "KUEBUS_NATS_TLS_KEY"
)

// authFlags are the credential and TLS flags of every command that
// connects to NATS as a client.
type authFlags struct{ auth bus.Auth }

func (a *authFlags) register(fs *flag.FlagSet) {
	for _, f := range []struct {
		to          *string
		name, env   string
		placeholder string
		usage       string
	}{
		{&a.auth.Token, "nats-token", envNATSToken, "TOKEN", "authenticate to NATS with this"},
		{&a.auth.User, "nats-user", envNATSUser, "USER", "authenticate to NATS as this user (its inbox prefix is [prefix.]_INBOX.USER)"},
		{&a.auth.Password, "nats-password", envNATSPassword, "PASSWORD", "the password of --nats-user (prefer the variable: a flag shows in ps)"},
		{&a.auth.NkeySeedFile, "nats-nkey", envNATSNkey, "FILE", "authenticate with the nkey seed in this"},
		{&a.auth.CredsFile, "nats-creds", envNATSCreds, "FILE", "authenticate with this .creds file (JWT and nkey)"},
		{&a.auth.TLSCA, "nats-tls-ca", envNATSTLSCA, "FILE", "trust the NATS servers whose certificates this CA signed"},
		{&a.auth.TLSCert, "nats-tls-cert", envNATSTLSCert, "FILE", "client certificate, for servers that ask for one"},
		{&a.auth.TLSKey, "nats-tls-key", envNATSTLSKey, "FILE", "the key of --nats-tls-cert"},
	} {
		// The default is not shown in --help: it may be a secret.
		fs.StringVar(f.to, f.name, "", "`"+f.placeholder+"`: "+f.usage+" (default $"+f.env+")")
		if v := strings.TrimSpace(os.Getenv(f.env)); v != "" {
			*f.to = v
		}
	}
}

// options checks the flags and turns them into connection options with
// the user's inbox prefix under subj.
func (a *authFlags) options(subj bus.Subjects) ([]bus.Option, error) {
	opts, err := a.auth.Options(subj)
	if err != nil {
		return nil, usagef("%s", strings.TrimPrefix(err.Error(), "bus: "))
	}
	return opts, nil
}
