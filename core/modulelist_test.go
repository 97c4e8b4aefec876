package core_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// goPackage is what the module tests read of one package from go list.
type goPackage struct {
	ImportPath     string
	Name           string
	Dir            string
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string
	Imports        []string
	Deps           []string
}

// rel is the package's path inside the module ("" for the root).
func (p goPackage) rel() string {
	return strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
}

// modulePackages lists every package of the module, as go list sees it.
func modulePackages(t *testing.T) []goPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []goPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list gave %d packages: the module's listing failed", len(pkgs))
	}
	return pkgs
}
