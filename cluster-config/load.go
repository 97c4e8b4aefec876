package clusterconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Load reads the YAML file at path (none when path is ""), applies the
// KUEBUS_* variables that lookupEnv finds over it (os.LookupEnv in
// production; an empty variable counts as unset), fills in defaults and
// validates. A field the file or a variable gets wrong is named in the
// error, with the line or the variable.
func Load(path string, lookupEnv func(string) (string, bool)) (*Config, error) {
	var data []byte
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
	}
	return Parse(data, path, lookupEnv)
}

// Parse is Load on the file's contents; name is the file's name in
// errors.
func Parse(data []byte, name string, lookupEnv func(string) (string, bool)) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(name, err)
	}
	if lookupEnv != nil {
		if err := c.applyEnv(lookupEnv); err != nil {
			return nil, err
		}
	}
	c.withDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// EnvVar is one environment variable and the field it sets.
type EnvVar struct {
	Name string // KUEBUS_REDIS_URL
	Path string // redis.url
}

// EnvVars lists every variable Load reads, in the order of the fields.
func EnvVars() []EnvVar {
	var out []EnvVar
	walkFields(reflect.TypeFor[Config](), "", func(path, env string, _ []int) {
		out = append(out, EnvVar{Name: env, Path: path})
	}, nil)
	return out
}

// walkFields calls leaf for every leaf field under t (strings, lists,
// durations, numbers) with its YAML path, its variable and its index path,
// and section, when not nil, for every struct type with its path.
func walkFields(t reflect.Type, prefix string, leaf func(path, env string, index []int), section func(t reflect.Type, path string), index ...int) {
	if section != nil {
		section(t, prefix)
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || tag == "" || tag == "-" {
			continue
		}
		path := tag
		if prefix != "" {
			path = prefix + "." + tag
		}
		idx := append(append([]int(nil), index...), i)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			walkFields(ft, path, leaf, section, idx...)
			continue
		}
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && section != nil {
			// A list of sections (nats.embedded.users): its fields are
			// named in errors; the list itself is one leaf.
			walkFields(ft.Elem(), path+"[]", func(string, string, []int) {}, section)
		}
		env := f.Tag.Get("env")
		if env == "" {
			env = "KUEBUS_" + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
		}
		leaf(path, env, idx)
	}
}

// applyEnv sets every field whose variable is set and not empty,
// allocating the sections on the way (KUEBUS_REDIS_SENTINEL_MASTER makes
// a redis.sentinel section).
func (c *Config) applyEnv(lookupEnv func(string) (string, bool)) error {
	var errs []error
	walkFields(reflect.TypeFor[Config](), "", func(path, env string, index []int) {
		raw, ok := lookupEnv(env)
		if !ok || strings.TrimSpace(raw) == "" {
			return
		}
		v := reflect.ValueOf(c).Elem()
		for _, i := range index {
			if v.Kind() == reflect.Pointer {
				if v.IsNil() {
					v.Set(reflect.New(v.Type().Elem()))
				}
				v = v.Elem()
			}
			v = v.Field(i)
		}
		if err := setFromEnv(v, raw); err != nil {
			errs = append(errs, fmt.Errorf("config: $%s (%s): %v", env, path, err))
			return
		}
		if c.envSet == nil {
			c.envSet = make(map[string]string)
		}
		c.envSet[path] = env
	}, nil)
	return errors.Join(errs...)
}

func setFromEnv(v reflect.Value, raw string) error {
	raw = strings.TrimSpace(raw)
	switch {
	case v.Type() == reflect.TypeFor[time.Duration]():
		d, err := time.ParseDuration(raw)
		if err != nil {
			return fmt.Errorf("%q is not a duration like 500ms or 10s", raw)
		}
		v.SetInt(int64(d))
	case v.Kind() == reflect.String:
		v.SetString(raw)
	case v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return fmt.Errorf("%q is not true or false", raw)
		}
		v.SetBool(b)
	case v.Kind() == reflect.Int:
		n, err := strconv.Atoi(raw)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", raw)
		}
		v.SetInt(int64(n))
	case v.Type() == reflect.TypeFor[Retention]():
		r, err := parseRetention(raw)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(r))
	case v.Type() == reflect.TypeFor[Types]():
		// The variable holds the section as YAML's one-line form:
		// KUEBUS_TYPES='{email: {concurrency: 5, rate: {limit: 100, per: 1s}}}'.
		var t Types
		dec := yaml.NewDecoder(strings.NewReader(raw))
		dec.KnownFields(true)
		if err := dec.Decode(&t); err != nil {
			return fmt.Errorf("not a types section in YAML's one-line form ({email: {concurrency: 5}}): %v", err)
		}
		v.Set(reflect.ValueOf(t))
	case v.Type() == reflect.TypeFor[[]NATSUser]():
		users, err := parseUsers(raw)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(users))
	case v.Type() == reflect.TypeFor[[]HTTPUser]():
		users, err := parseUsers(raw)
		if err != nil {
			return err
		}
		list := make([]HTTPUser, len(users))
		for i, u := range users {
			list[i] = HTTPUser{Name: u.Name, Role: u.Role, Password: u.Password}
		}
		v.Set(reflect.ValueOf(list))
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		var list []string
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				list = append(list, s)
			}
		}
		v.Set(reflect.ValueOf(list))
	default:
		panic("clusterconfig: no environment parser for " + v.Type().String())
	}
	return nil
}

// parseUsers reads the variable form of nats.embedded.users (and
// http.users): NAME:ROLE:PASSWORD,
// comma-separated (a password may hold colons, not commas). Nkey users,
// whose public keys are no secret, go in the file.
func parseUsers(raw string) ([]NATSUser, error) {
	var users []NATSUser
	for i, item := range strings.Split(raw, ",") {
		name, rest, ok1 := strings.Cut(strings.TrimSpace(item), ":")
		role, password, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 || name == "" || role == "" || password == "" {
			return nil, fmt.Errorf("user %d is not NAME:ROLE:PASSWORD", i+1)
		}
		users = append(users, NATSUser{Name: name, Role: role, Password: password})
	}
	return users, nil
}

// yamlFieldError matches yaml.v3's line for an unknown field.
var yamlFieldError = regexp.MustCompile(`^line (\d+): field (\S+) not found in type (\S+)$`)

// yamlLine matches yaml.v3's "line N: message".
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlError rewrites yaml.v3's errors as FILE:LINE: message, naming an
// unknown field by its section and listing the section's known fields.
func yamlError(name string, err error) error {
	if name == "" {
		name = "config"
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			return fmt.Errorf("%s:%s: %s", name, m[1], m[2])
		}
		return fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	sections := map[string]string{}
	known := map[string][]string{}
	walkFields(reflect.TypeFor[Config](), "", func(string, string, []int) {}, func(t reflect.Type, path string) {
		sections[t.String()] = path
		for i := range t.NumField() {
			if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
				known[path] = append(known[path], tag)
			}
		}
	})
	var errs []error
	for _, line := range te.Errors {
		if m := yamlFieldError.FindStringSubmatch(line); m != nil {
			where, ok := sections[m[3]]
			switch {
			case !ok:
				where = "in " + m[3]
			case where == "":
				where = "at the top level"
			default:
				where = "in " + where
			}
			errs = append(errs, fmt.Errorf("%s:%s: unknown field %q %s (known: %s)", name, m[1], m[2], where, strings.Join(known[sections[m[3]]], ", ")))
			continue
		}
		if m := yamlLine.FindStringSubmatch(line); m != nil {
			errs = append(errs, fmt.Errorf("%s:%s: %s", name, m[1], m[2]))
			continue
		}
		errs = append(errs, fmt.Errorf("%s: %s", name, line))
	}
	return errors.Join(errs...)
}
