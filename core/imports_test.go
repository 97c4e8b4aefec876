package core_test

import (
	"os/exec"
	"strings"
	"testing"
)

const (
	module  = "github.com/kuebus/kuebus"
	goRedis = "github.com/redis/go-redis"
	// otel is OpenTelemetry: only the packages that integrate it
	// (core/coreotel, worker/workerotel) import it, so that a producer or
	// worker that does not trace compiles none of it.
	otel = "go.opentelemetry.io"
	// natsServer is the NATS server: only bus/embedded imports it, and
	// only a node (node, the commands, the test helpers) imports
	// bus/embedded, so that a producer, a worker or core's service
	// compiles no NATS server.
	natsServer = "github.com/nats-io/nats-server"
)

// room is what one package of the module may not depend on, directly or
// through others.
type room struct {
	// never lists module-relative paths (a path also forbids the packages
	// below it) and outside modules the package must not depend on.
	never []string
	// redis allows the package to import go-redis itself. Only the store
	// has it; test helpers (names ending in "test") may seed and inspect
	// Redis in tests.
	redis bool
}

// noServer is what only a node may compile: the embedded NATS server.
var noServer = []string{"bus/embedded", natsServer}

// client is what every package that speaks to core over the bus may not
// reach: the service, the store, Redis, the embedded NATS server.
var client = append([]string{"core/service", "core/redisstore", goRedis}, noServer...)

// rooms gives every package of the module its rule, by path or by the
// nearest parent path. A package with no rule fails the test: whoever adds
// a package decides what it may import.
var rooms = map[string]room{
	"bus":               {never: append([]string{"core", "worker", "promoter", "httpapi", "node", goRedis, otel}, noServer...)},
	"bus/embedded":      {never: []string{"core", "worker", "promoter", "httpapi", "node", goRedis, otel}},
	"bus/bustest":       {never: []string{"core", "worker", "promoter", "httpapi", "node", goRedis}},
	"bus/batch":         {never: append([]string{"core", "worker", "promoter", "httpapi", "node", goRedis, otel}, noServer...)},
	"bus/runner":        {never: []string{"bus", "core", "worker", "promoter", "httpapi", "node", goRedis, otel, natsServer}},
	"core":              {never: append([]string{"worker", "promoter", "httpapi", "node", otel}, client...)},
	"core/coreotel":     {never: append([]string{"worker", "promoter", "httpapi", "node"}, client...)},
	"core/service":      {never: append([]string{"core/redisstore", "worker", "promoter", "httpapi", "node", goRedis}, noServer...)},
	"core/redisstore":   {never: append([]string{"worker", "promoter", "httpapi", "node"}, noServer...), redis: true},
	"node/nodetest":     {redis: true},
	"worker":            {never: append([]string{"promoter", "httpapi", "node", otel}, client...)},
	"worker/workerotel": {never: append([]string{"promoter", "httpapi", "node"}, client...)},
	"promoter":          {never: append([]string{"worker", "httpapi", "node"}, client...)},
	"httpapi":           {never: append([]string{"worker", "promoter", "node"}, client...)},
	"node":              {},
	"bench":             {},
	"cluster-config":    {never: append([]string{"core/redisstore", "core/service", "node", "worker", "promoter", "httpapi", goRedis}, noServer...)},
	"internal/httprule": {never: append([]string{"core", "worker", "promoter", "httpapi", "node", "cluster-config", goRedis, otel}, noServer...)},
	"cmd":               {},
	"examples":          {never: append([]string{"node", "worker", "promoter", "httpapi"}, client...)},
	// kuebustest is a test helper: it starts a whole queue for tests (a
	// node, so all of a node's parts), and runs handlers inline; it imports
	// no go-redis itself.
	"kuebustest": {},
}

// TestImportRules enforces who may import what (the layout of docs/architecture.md): only
// core/redisstore imports go-redis; a client (core, worker, promoter,
// httpapi) compiles neither the service nor the store nor go-redis nor a
// NATS server; only a node compiles the NATS server (bus/embedded);
// checking a config (cluster-config) compiles neither the HTTP API nor a
// NATS server; bus knows nothing of the queue; nothing imports cmd.
func TestImportRules(t *testing.T) {
	for _, pkg := range modulePackages(t) {
		rel := pkg.rel()
		rule, ok := ruleOf(rel)
		if !ok {
			t.Errorf("%s has no rule in rooms: say what it may import", rel)
			continue
		}
		helper := strings.HasSuffix(rel, "test")
		for _, imp := range pkg.Imports {
			if under(imp, goRedis) && !rule.redis && !helper {
				t.Errorf("%s imports %s: only core/redisstore talks to Redis", rel, imp)
			}
		}
		for _, dep := range pkg.Deps {
			if under(dep, module+"/cmd") {
				t.Errorf("%s depends on %s: nothing imports cmd", rel, dep)
			}
			for _, bad := range rule.never {
				if !strings.HasPrefix(bad, "github.com/") {
					bad = module + "/" + bad
				}
				if under(dep, bad) {
					t.Errorf("%s depends on %s (directly or not), which its room forbids", rel, dep)
				}
			}
		}
	}
}

// ruleOf finds the rule of a package: its own or its nearest parent's.
func ruleOf(rel string) (room, bool) {
	for p := rel; ; {
		if r, ok := rooms[p]; ok {
			return r, true
		}
		i := strings.LastIndex(p, "/")
		if i < 0 {
			return room{}, false
		}
		p = p[:i]
	}
}

// under says whether path is pkg or a package below it.
func under(path, pkg string) bool {
	return path == pkg || strings.HasPrefix(path, pkg+"/")
}

// TestAClientCompilesNoServer is the issues' check, as a user would run it:
// go list -deps of a client holds neither the service nor go-redis nor a
// NATS server, and that of cluster-config neither the HTTP API nor a NATS
// server.
func TestAClientCompilesNoServer(t *testing.T) {
	clientBad := []string{module + "/core/service", module + "/core/redisstore", goRedis, natsServer}
	for pkg, bad := range map[string][]string{
		"worker":         clientBad,
		"core":           clientBad,
		"promoter":       clientBad,
		"httpapi":        clientBad,
		"cluster-config": {module + "/httpapi", natsServer},
	} {
		out, err := exec.Command("go", "list", "-deps", module+"/"+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for dep := range strings.FieldsSeq(string(out)) {
			for _, b := range bad {
				if under(dep, b) {
					t.Errorf("go list -deps ./%s holds %s", pkg, dep)
				}
			}
		}
	}
}
