package bus

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Auth is how a client authenticates to NATS: at most one of Token,
// User with Password, NkeySeedFile and CredsFile, plus TLS files. The zero
// value connects anonymously, which only an unlocked server (loopback
// `kuebus dev`) accepts.
//
//	opts, err := bus.Auth{User: "w1", Password: pw}.Options(subj)
//	nc, err := bus.Connect(url, "my-worker", opts...)
//	w, err := worker.New(worker.Config{Conn: nc, Prefix: subj.Prefix()})
type Auth struct {
	// Token is a bearer token (an embedded server locked with one token
	// makes every holder an admin).
	Token string
	// User and Password are a user of the server; the user's inbox prefix
	// is Subjects.Inbox(User).
	User     string
	Password string
	// NkeySeedFile is the file holding an nkey seed (SU...); the user's
	// inbox prefix is Subjects.Inbox(its public key).
	NkeySeedFile string
	// CredsFile is a JWT .creds file, for a NATS run in operator mode;
	// its inbox prefix is the operator's choice: set Inbox.
	CredsFile string
	// Inbox overrides the inbox prefix. Default: derived as above, and
	// NATS's own "_INBOX" for a token, creds or no credentials.
	Inbox string
	// TLSCA is a PEM file of the CA that signed the servers' certificates;
	// TLSCert and TLSKey are the client's certificate for servers that ask
	// for one. Default: the system's roots, no client certificate.
	TLSCA   string
	TLSCert string
	TLSKey  string
}

// IsZero reports whether a carries no credentials and no TLS files.
func (a Auth) IsZero() bool { return a == Auth{} }

// Check reports every mistake in a, naming fields by their flag form
// (--nats-user): more than one way to authenticate, a password without a
// user, a certificate without its key, a file that cannot be read.
func (a Auth) Check() error {
	var errs []error
	var ways []string
	for _, w := range []struct {
		set  bool
		name string
	}{{a.Token != "", "token"}, {a.User != "", "user"}, {a.NkeySeedFile != "", "nkey"}, {a.CredsFile != "", "creds"}} {
		if w.set {
			ways = append(ways, "--nats-"+w.name)
		}
	}
	if len(ways) > 1 {
		errs = append(errs, fmt.Errorf("%s: give one way to authenticate", strings.Join(ways, " and ")))
	}
	if a.Password != "" && a.User == "" {
		errs = append(errs, errors.New("--nats-password needs --nats-user"))
	}
	if (a.TLSCert == "") != (a.TLSKey == "") {
		errs = append(errs, errors.New("--nats-tls-cert and --nats-tls-key go together (a client certificate); to verify the server alone give --nats-tls-ca"))
	}
	for _, f := range []struct{ flag, path string }{
		{"nkey", a.NkeySeedFile}, {"creds", a.CredsFile}, {"tls-ca", a.TLSCA}, {"tls-cert", a.TLSCert}, {"tls-key", a.TLSKey},
	} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			errs = append(errs, fmt.Errorf("--nats-%s: %v", f.flag, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bus: NATS credentials: %w", err)
	}
	return nil
}

// InboxPrefix is the inbox prefix a's user must use under subj: Inbox when
// set, the user's or nkey's inbox, or "" for NATS's default.
func (a Auth) InboxPrefix(subj Subjects) (string, error) {
	switch {
	case a.Inbox != "":
		return a.Inbox, nil
	case a.User != "":
		return subj.Inbox(a.User)
	case a.NkeySeedFile != "":
		pub, err := nkeyPublic(a.NkeySeedFile)
		if err != nil {
			return "", err
		}
		return subj.Inbox(pub)
	}
	return "", nil
}

// Options turns a into connection options for bus.Connect: credentials,
// TLS and the user's inbox prefix under subj. It checks a first.
func (a Auth) Options(subj Subjects) ([]Option, error) {
	if err := a.Check(); err != nil {
		return nil, err
	}
	var opts []Option
	switch {
	case a.Token != "":
		opts = append(opts, nats.Token(a.Token))
	case a.User != "":
		opts = append(opts, nats.UserInfo(a.User, a.Password))
	case a.NkeySeedFile != "":
		opt, err := nats.NkeyOptionFromSeed(a.NkeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("bus: NATS credentials: --nats-nkey: %w", err)
		}
		opts = append(opts, opt)
	case a.CredsFile != "":
		opts = append(opts, nats.UserCredentials(a.CredsFile))
	}
	if a.TLSCA != "" {
		opts = append(opts, nats.RootCAs(a.TLSCA))
	}
	if a.TLSCert != "" {
		opts = append(opts, nats.ClientCert(a.TLSCert, a.TLSKey))
	}
	inbox, err := a.InboxPrefix(subj)
	if err != nil {
		return nil, err
	}
	if inbox != "" {
		opts = append(opts, nats.CustomInboxPrefix(inbox))
	}
	return opts, nil
}

// nkeyPublic reads the public key of the seed in file.
func nkeyPublic(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("bus: NATS credentials: --nats-nkey: %w", err)
	}
	kp, err := nkeys.ParseDecoratedNKey(data)
	if err != nil {
		return "", fmt.Errorf("bus: NATS credentials: --nats-nkey: %s holds no nkey seed: %w", file, err)
	}
	defer kp.Wipe()
	pub, err := kp.PublicKey()
	if err != nil {
		return "", fmt.Errorf("bus: NATS credentials: --nats-nkey: %s: %w", file, err)
	}
	return pub, nil
}
