package core_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestImportRules enforces who may import what (STYLE §1): go-redis only in
// core/redisstore (and the test helpers built on it), nothing imports cmd, bus imports none of
// the queue's packages, and the worker and promoter reach Redis only
// through core over the bus.
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps=false", "-json", "github.com/kuebus/kuebus/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/kuebus/kuebus/"
	forbidden := map[string][]string{
		"bus":      {mod + "core", mod + "worker", mod + "promoter", "github.com/redis/go-redis"},
		"core":     {"github.com/redis/go-redis", mod + "core/redisstore", mod + "worker", mod + "promoter"},
		"worker":   {"github.com/redis/go-redis", mod + "core/redisstore", mod + "promoter"},
		"promoter": {"github.com/redis/go-redis", mod + "core/redisstore", mod + "worker"},
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var pkg struct {
			ImportPath string
			Imports    []string
			Deps       []string
		}
		if err := dec.Decode(&pkg); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(pkg.ImportPath, mod)
		if strings.HasSuffix(rel, "test") { // bustest, coretest: test helpers
			continue
		}
		// go-redis only in redisstore: the others that reach Redis (node,
		// bench, cmd) do it through redisstore's functions.
		if rel != "core/redisstore" {
			for _, imp := range pkg.Imports {
				if strings.HasPrefix(imp, "github.com/redis/go-redis") {
					t.Errorf("%s imports %s: only core/redisstore may", rel, imp)
				}
			}
		}
		rules, ok := forbidden[rel]
		if !ok {
			rules = forbidden[strings.SplitN(rel, "/", 2)[0]]
		}
		if rel == "core/redisstore" { // it owns Redis
			continue
		}
		for _, dep := range pkg.Deps {
			for _, bad := range rules {
				if dep == bad || strings.HasPrefix(dep, bad+"/") {
					t.Errorf("%s imports %s (directly or not), which STYLE §1 forbids", rel, dep)
				}
			}
			if strings.HasPrefix(dep, mod+"cmd") {
				t.Errorf("%s imports %s: nothing imports cmd", rel, dep)
			}
		}
	}
}
