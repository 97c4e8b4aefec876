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
		to        *string
		name, env string
		usage     string
	}{
		{&a.auth.Token, "nats-token", envNATSToken, "authenticate to NATS with this `TOKEN`"},
		{&a.auth.User, "nats-user", envNATSUser, "authenticate to NATS as this `USER` (its inbox prefix is [prefix.]_INBOX.USER)"},
		{&a.auth.Password, "nats-password", envNATSPassword, "the `PASSWORD` of --nats-user (prefer the variable: a flag shows in ps)"},
		{&a.auth.NkeySeedFile, "nats-nkey", envNATSNkey, "authenticate with the nkey seed in this `FILE`"},
		{&a.auth.CredsFile, "nats-creds", envNATSCreds, "authenticate with this .creds `FILE` (JWT and nkey)"},
		{&a.auth.TLSCA, "nats-tls-ca", envNATSTLSCA, "trust the NATS servers whose certificates the CA in this `FILE` signed"},
		{&a.auth.TLSCert, "nats-tls-cert", envNATSTLSCert, "client certificate `FILE`, for servers that ask for one"},
		{&a.auth.TLSKey, "nats-tls-key", envNATSTLSKey, "the key `FILE` of --nats-tls-cert"},
	} {
		// The variable is set after registering, so that --help never
		// shows its value: it may be a secret.
		fs.StringVar(f.to, f.name, "", f.usage+" (default $"+f.env+")")
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
