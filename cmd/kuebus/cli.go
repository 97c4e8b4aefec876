package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
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
	timeout time.Duration
	authFlags
}

func (c *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.url, "nats-url", cmp.Or(os.Getenv(envNATSURL), bus.URLDefault),
		"NATS `URL` of the queue ($"+envNATSURL+" overrides the default)")
	fs.StringVar(&c.prefix, "prefix", "", "subject `PREFIX` of the deployment, e.g. acme")
	fs.DurationVar(&c.timeout, "timeout", cliTimeoutDefault, "how long to wait for each answer from core, a `DURATION`")
	c.authFlags.register(fs)
}

// check validates the flags before anything is dialled.
func (c *connFlags) check() (bus.Subjects, error) {
	subj, err := bus.NewSubjects(c.prefix)
	if err != nil {
		return subj, usagef("--prefix: %v", err)
	}
	if c.timeout <= 0 {
		return subj, usagef("--timeout: %s is not positive", c.timeout)
	}
	if err := checkNATSURL(c.url); err != nil {
		return subj, err
	}
	return subj, nil
}

// checkNATSURL checks --nats-url, naming $KUEBUS_NATS_URL when the value
// is the variable's.
func checkNATSURL(u string) error {
	if err := bus.CheckURL(u); err != nil {
		flag := "--nats-url"
		if v := os.Getenv(envNATSURL); v != "" && v == u {
			flag += " ($" + envNATSURL + ")"
		}
		return usagef("%s: %v", flag, err)
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
