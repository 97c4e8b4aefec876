package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// envNATSURL overrides the default of --nats-url.
const envNATSURL = "KUEBUS_NATS_URL"

// cliTimeoutDefault bounds each call to core.
const cliTimeoutDefault = 5 * time.Second

// connFlags are the flags of every command that talks to a running queue.
type connFlags struct {
	url     string
	prefix  string
	context string
	timeout time.Duration
	authFlags
	// fs is the command's flag set, for which flags the command line gave,
	// and for its writer (helpWriter): the command's stderr.
	fs *flag.FlagSet
	// at is where the settings came from, once resolve has run.
	at *deployment
}

func (c *connFlags) register(fs *flag.FlagSet) {
	c.fs = fs
	// No default from the variable here: resolve applies it under a
	// context, and --help must not show a URL's password.
	fs.StringVar(&c.url, "nats-url", "",
		"NATS `URL` of the queue (default: --context's, else $"+envNATSURL+", else the current context's, else "+bus.URLDefault+" with a warning)")
	fs.StringVar(&c.prefix, "prefix", "", "subject `PREFIX` of the deployment, e.g. acme (default: the context's)")
	fs.StringVar(&c.context, "context", "", "talk to the deployment of the context `NAME` (see 'kuebus context'; default $"+envContext+", else the current one)")
	fs.DurationVar(&c.timeout, "timeout", cliTimeoutDefault, "how long to wait for each answer from core, a `DURATION`")
	c.authFlags.register(fs)
}

// deployment is what a client command talks to, and what chose it.
type deployment struct {
	url, prefix string
	// context is the name of the context in force, "" for none; by says
	// what chose it: "--context", "$KUEBUS_CONTEXT" or "current".
	context, by string
	// urlFrom says where the URL came from: "--nats-url", "context",
	// "$KUEBUS_NATS_URL" or "" for the built-in default.
	urlFrom string
}

// String is the one line a person reads: "nats://h:4222, prefix acme
// (context prod, the current one)".
func (d *deployment) String() string {
	s := redactURL(d.url)
	if d.prefix != "" {
		s += ", prefix " + d.prefix
	}
	switch {
	case d.urlFrom == "":
		return s + " (the default: no --nats-url, $" + envNATSURL + " or context chose one)"
	case d.urlFrom == "context" && d.by == "current":
		return s + " (context " + d.context + ", the current one)"
	case d.urlFrom == "context":
		return s + " (context " + d.context + ", from " + d.by + ")"
	case d.context != "":
		return s + " (" + d.urlFrom + "; context " + d.context + ")"
	}
	return s + " (" + d.urlFrom + ")"
}

// resolve settles the connection settings; each comes from, first found:
// its flag; the context --context names; its variable; the current
// context ($KUEBUS_CONTEXT names it, else 'kuebus context use' chose it);
// the default. The current context applies only when neither --nats-url
// nor $KUEBUS_NATS_URL gives a URL, so a URL given on its own is never
// mixed with a context's prefix.
func (c *connFlags) resolve() (*deployment, error) {
	if c.at != nil {
		return c.at, nil
	}
	d := &deployment{context: c.context, by: "--context"}
	envURL := os.Getenv(envNATSURL)
	if d.context == "" && c.url == "" && envURL == "" {
		d.context, d.by = os.Getenv(envContext), "$"+envContext
	}
	var named *namedContext
	if d.context != "" || (c.url == "" && envURL == "") {
		f, path, err := loadContexts()
		if err != nil {
			return nil, err
		}
		if d.context == "" {
			d.context, d.by = f.Current, "current"
		}
		if d.context != "" {
			if named, err = f.lookup(d.by, d.context, path); err != nil {
				return nil, err
			}
		}
	}
	if named == nil {
		d.context, d.by = "", ""
		named = &namedContext{}
	}
	// A context --context names wins over the variables; the current one
	// gives only what no variable does.
	overVariables := d.by == "--context"
	switch {
	case c.url != "":
		d.url, d.urlFrom = c.url, "--nats-url"
	case named.NATSURL != "" && (overVariables || envURL == ""):
		d.url, d.urlFrom = named.NATSURL, "context"
	case envURL != "":
		d.url, d.urlFrom = envURL, "$"+envNATSURL
	default:
		d.url = bus.URLDefault
	}
	d.prefix = c.prefix
	if !flagGiven(c.fs, "prefix") {
		d.prefix = named.Prefix
	}
	// The credential flags hold their variables' values already.
	for _, f := range []struct {
		to        *string
		flag, env string
		from      string
	}{
		{&c.auth.User, "nats-user", envNATSUser, named.NATSUser},
		{&c.auth.NkeySeedFile, "nats-nkey", envNATSNkey, named.NATSNkey},
		{&c.auth.CredsFile, "nats-creds", envNATSCreds, named.NATSCreds},
		{&c.auth.TLSCA, "nats-tls-ca", envNATSTLSCA, named.NATSTLSCA},
		{&c.auth.TLSCert, "nats-tls-cert", envNATSTLSCert, named.NATSTLSCert},
		{&c.auth.TLSKey, "nats-tls-key", envNATSTLSKey, named.NATSTLSKey},
	} {
		if f.from != "" && !flagGiven(c.fs, f.flag) && (overVariables || strings.TrimSpace(os.Getenv(f.env)) == "") {
			*f.to = f.from
		}
	}
	c.url, c.prefix, c.at = d.url, d.prefix, d
	return d, nil
}

// check resolves and validates the flags before anything is dialled.
func (c *connFlags) check() (bus.Subjects, error) {
	d, err := c.resolve()
	if err != nil {
		return bus.Subjects{}, err
	}
	subj, err := bus.NewSubjects(c.prefix)
	if err != nil {
		return subj, usagef("--prefix: %v", err)
	}
	if c.timeout <= 0 {
		return subj, usagef("--timeout: %s is not positive", c.timeout)
	}
	if err := c.checkURL(d); err != nil {
		return subj, err
	}
	return subj, nil
}

// checkURL checks the URL, naming where it came from.
func (c *connFlags) checkURL(d *deployment) error {
	if err := bus.CheckURL(d.url); err != nil {
		switch d.urlFrom {
		case "context":
			return usagef("--nats-url (context %s): %v", d.context, err)
		case "$" + envNATSURL:
			return usagef("--nats-url ($%s): %v", envNATSURL, err)
		}
		return usagef("--nats-url: %v", err)
	}
	return nil
}

// withClient connects to NATS, runs fn with a core client, closes the
// connection and turns what went wrong into a message for a person.
func (c *connFlags) withClient(ctx context.Context, fn func(*core.Client) error) error {
	if _, err := c.check(); err != nil {
		return err
	}
	nc, err := c.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	client, err := core.NewClient(nc, &core.ClientOptions{Prefix: c.prefix, Timeout: c.timeout})
	if err != nil {
		return usagef("--prefix: %v", err)
	}
	return c.explain(fn(client))
}

func (c *connFlags) connect() (*nats.Conn, error) {
	subj, err := c.check()
	if err != nil {
		return nil, err
	}
	opts, err := c.options(subj)
	if err != nil {
		return nil, err
	}
	// When nothing chose the URL, say which one is dialled: a queue
	// listening on the default port may not be the one the user meant.
	if c.at.urlFrom == "" {
		if w, ok := c.fs.Output().(helpWriter); ok {
			fmt.Fprintf(w.stderr, "kuebus: no deployment chosen (--nats-url, $%s, --context or 'kuebus context use'): talking to %s\n", envNATSURL, redactURL(c.url))
		}
	}
	nc, err := bus.Connect(c.url, "kuebus-cli", append(opts, nats.Timeout(c.timeout))...)
	if err != nil {
		return nil, c.explain(err)
	}
	return nc, nil
}

// explain rewrites the errors a person meets most (nothing running, a typo
// in an id) as one readable sentence; the server's own message for the ones
// core explains (invalid, not_found, conflict).
func (c *connFlags) explain(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*usageError](err); ok {
		return err
	}
	at := redactURL(c.url)
	if errors.Is(err, nats.ErrNoServers) {
		return fmt.Errorf("cannot reach NATS at %s: is `kuebus dev` running?", at)
	}
	if be, ok := errors.AsType[*bus.Error](err); ok {
		switch be.Code {
		case bus.CodeInvalid, bus.CodeNotFound:
			return errors.New(be.Message)
		case bus.CodeConflict:
			return fmt.Errorf("conflict: %s", be.Message)
		case bus.CodeUnavailable:
			if errors.Is(be, nats.ErrNoResponders) {
				return fmt.Errorf("no core service answers at %s: is `kuebus dev` running?", at)
			}
			return fmt.Errorf("core at %s is unavailable: %s", at, be.Message)
		default:
			return fmt.Errorf("core at %s failed: %s", at, be.Message)
		}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return fmt.Errorf("no answer from core at %s within %s (--timeout)", at, c.timeout)
	case errors.Is(err, context.Canceled):
		return errors.New("interrupted")
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired):
		// The sentinel, not err: err's text repeats the URL.
		refusal := nats.ErrAuthorization
		if errors.Is(err, nats.ErrAuthExpired) {
			refusal = nats.ErrAuthExpired
		}
		return fmt.Errorf("NATS at %s refused the connection: %v (give --nats-token, or --nats-user with $%s, ...: see --help)", at, refusal, envNATSPassword)
	case errors.Is(err, bus.ErrPermissionDenied):
		return fmt.Errorf("NATS at %s refused the request: %v", at, err)
	}
	return err
}
