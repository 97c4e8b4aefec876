package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"text/tabwriter"

	"go.yaml.in/yaml/v3"

	"github.com/kuebus/kuebus/bus"
)

// envContext names the context a client command uses, as --context does,
// when neither --nats-url nor $KUEBUS_NATS_URL is given.
const envContext = "KUEBUS_CONTEXT"

// contextsFileName is the contexts file under the user's configuration
// directory ($XDG_CONFIG_HOME, else ~/.config, on Linux).
const contextsFileName = "kuebus/contexts.yaml"

// contextFile is the contexts file: named deployments and the current one.
type contextFile struct {
	// Current is the context a client command uses when nothing else
	// chooses one; "" for none.
	Current  string                   `yaml:"current,omitempty"`
	Contexts map[string]*namedContext `yaml:"contexts,omitempty"`
}

// namedContext is one named deployment: where its NATS is, its subject
// prefix, and the files of its credentials. Secrets themselves (a token,
// a password) are not kept here: they stay in the variables
// ($KUEBUS_NATS_TOKEN, $KUEBUS_NATS_PASSWORD).
type namedContext struct {
	NATSURL     string `yaml:"nats_url"`
	Prefix      string `yaml:"prefix,omitempty"`
	NATSUser    string `yaml:"nats_user,omitempty"`
	NATSNkey    string `yaml:"nats_nkey,omitempty"`
	NATSCreds   string `yaml:"nats_creds,omitempty"`
	NATSTLSCA   string `yaml:"nats_tls_ca,omitempty"`
	NATSTLSCert string `yaml:"nats_tls_cert,omitempty"`
	NATSTLSKey  string `yaml:"nats_tls_key,omitempty"`
}

// contextName is what a context may be called: one word a shell needs no
// quotes for.
var contextName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

func checkContextName(what, name string) error {
	if !contextName.MatchString(name) {
		return usagef("%s %q is not a context name (letters, digits, and . _ - after the first; at most 64)", what, name)
	}
	return nil
}

// check validates a context as the file holds it; where is its place in
// the file ("contexts.prod").
func (k *namedContext) check(where string) error {
	if k == nil || k.NATSURL == "" {
		return fmt.Errorf("%s.nats_url: missing", where)
	}
	if err := bus.CheckURL(k.NATSURL); err != nil {
		return fmt.Errorf("%s.nats_url: %v", where, err)
	}
	if _, err := bus.NewSubjects(k.Prefix); err != nil {
		return fmt.Errorf("%s.prefix: %v", where, err)
	}
	return nil
}

// contextsPath is where the contexts file is.
func contextsPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("contexts: no configuration directory: %v", err)
	}
	return filepath.Join(dir, contextsFileName), nil
}

// loadContexts reads the contexts file; a file that does not exist is an
// empty one. A file with an unknown key or a bad value is refused whole,
// naming the file and the key.
func loadContexts() (*contextFile, string, error) {
	path, err := contextsPath()
	if err != nil {
		return nil, "", err
	}
	f := &contextFile{Contexts: map[string]*namedContext{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, path, nil
	}
	if err != nil {
		return nil, path, fmt.Errorf("contexts file: %v", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(f); err != nil && !errors.Is(err, io.EOF) {
		return nil, path, usagef("contexts file %s: %v", path, err)
	}
	if f.Contexts == nil {
		f.Contexts = map[string]*namedContext{}
	}
	for _, name := range slices.Sorted(maps.Keys(f.Contexts)) {
		if err := checkContextName("contexts:", name); err != nil {
			return nil, path, usagef("contexts file %s: %v", path, err)
		}
		if err := f.Contexts[name].check("contexts." + name); err != nil {
			return nil, path, usagef("contexts file %s: %v", path, err)
		}
	}
	if f.Current != "" && f.Contexts[f.Current] == nil {
		return nil, path, usagef("contexts file %s: current: no context %q", path, f.Current)
	}
	return f, path, nil
}

// save writes the file whole, readable by its owner only: it names
// credential files and servers.
func (f *contextFile) save(path string) error {
	b, err := yaml.Marshal(f)
	if err != nil {
		return fmt.Errorf("contexts file %s: %v", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("contexts file: %v", err)
	}
	// Written beside it and renamed over it, so that a crash leaves the
	// old file or the new one, never half of one.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".contexts-*.yaml")
	if err != nil {
		return fmt.Errorf("contexts file: %v", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("contexts file: %v", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("contexts file: %v", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("contexts file: %v", err)
	}
	return nil
}

// lookup returns the context named name, or an error that says where the
// name came from (by: "--context", "$KUEBUS_CONTEXT") and suggests the
// nearest name.
func (f *contextFile) lookup(by, name, path string) (*namedContext, error) {
	if k := f.Contexts[name]; k != nil {
		return k, nil
	}
	msg := fmt.Sprintf("%s: no context %q in %s", by, name, path)
	if near := nearest(name, slices.Collect(maps.Keys(f.Contexts))); near != "" {
		msg += fmt.Sprintf(": did you mean %q?", near)
	}
	return nil, usagef("%s (see 'kuebus context ls')", msg)
}

func runContextSet(_ context.Context, e *env, args []string) error {
	fs := e.flags()
	var k namedContext
	fs.StringVar(&k.NATSURL, "nats-url", "", "NATS `URL` of the deployment (required): one URL or a comma-separated list")
	fs.StringVar(&k.Prefix, "prefix", "", "subject `PREFIX` of the deployment, e.g. acme")
	fs.StringVar(&k.NATSUser, "nats-user", "", "authenticate to NATS as this `USER`; its password stays in $"+envNATSPassword)
	fs.StringVar(&k.NATSNkey, "nats-nkey", "", "authenticate with the nkey seed in this `FILE`")
	fs.StringVar(&k.NATSCreds, "nats-creds", "", "authenticate with this .creds `FILE` (JWT and nkey)")
	fs.StringVar(&k.NATSTLSCA, "nats-tls-ca", "", "trust the NATS servers whose certificates the CA in this `FILE` signed")
	fs.StringVar(&k.NATSTLSCert, "nats-tls-cert", "", "client certificate `FILE`, for servers that ask for one")
	fs.StringVar(&k.NATSTLSKey, "nats-tls-key", "", "the key `FILE` of --nats-tls-cert")
	pos, err := e.parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	name := pos[0]
	if err := checkContextName("context set: NAME", name); err != nil {
		return err
	}
	switch {
	case k.NATSURL == "":
		return usagef("context set: --nats-url: missing: a context is a deployment's NATS URL first")
	}
	if err := bus.CheckURL(k.NATSURL); err != nil {
		return usagef("--nats-url: %v", err)
	}
	if _, err := bus.NewSubjects(k.Prefix); err != nil {
		return usagef("--prefix: %v", err)
	}
	// A relative file name would mean another file in another directory.
	for _, p := range []*string{&k.NATSNkey, &k.NATSCreds, &k.NATSTLSCA, &k.NATSTLSCert, &k.NATSTLSKey} {
		if *p != "" {
			abs, err := filepath.Abs(*p)
			if err != nil {
				return fmt.Errorf("context set: %v", err)
			}
			*p = abs
		}
	}
	f, path, err := loadContexts()
	if err != nil {
		return err
	}
	f.Contexts[name] = &k
	if err := f.save(path); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "context %s: %s\n", name, describeContext(&k))
	return err
}

func runContextUse(_ context.Context, e *env, args []string) error {
	pos, err := e.parse(e.flags(), args, 1, 1)
	if err != nil {
		return err
	}
	f, path, err := loadContexts()
	if err != nil {
		return err
	}
	k, err := f.lookup("context use: NAME", pos[0], path)
	if err != nil {
		return err
	}
	f.Current = pos[0]
	if err := f.save(path); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "current context: %s (%s)\n", pos[0], describeContext(k))
	return err
}

func runContextList(_ context.Context, e *env, args []string) error {
	if _, err := e.parse(e.flags(), args, 0, 0); err != nil {
		return err
	}
	f, _, err := loadContexts()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CURRENT\tNAME\tNATS URL\tPREFIX")
	for _, name := range slices.Sorted(maps.Keys(f.Contexts)) {
		mark := ""
		if name == f.Current {
			mark = "*"
		}
		k := f.Contexts[name]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", mark, name, redactURL(k.NATSURL), k.Prefix)
	}
	return tw.Flush()
}

func runContextRemove(_ context.Context, e *env, args []string) error {
	pos, err := e.parse(e.flags(), args, 1, 1)
	if err != nil {
		return err
	}
	f, path, err := loadContexts()
	if err != nil {
		return err
	}
	if _, err := f.lookup("context rm: NAME", pos[0], path); err != nil {
		return err
	}
	delete(f.Contexts, pos[0])
	if f.Current == pos[0] {
		f.Current = ""
	}
	if err := f.save(path); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "removed context %s\n", pos[0])
	return err
}

// runContextShow resolves the connection flags as a client command would,
// without connecting.
func runContextShow(_ context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	if _, err := e.parse(fs, args, 0, 0); err != nil {
		return err
	}
	d, err := cf.resolve()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(e.stdout, d)
	return err
}

func describeContext(k *namedContext) string {
	s := redactURL(k.NATSURL)
	if k.Prefix != "" {
		s += ", prefix " + k.Prefix
	}
	return s
}
