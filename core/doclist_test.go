package core_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDocFileLists keeps every package's map true (each package's doc.go names its files):
// each package of the module has a doc.go holding its one package comment,
// and that comment's Files: block names exactly the package's non-test .go
// files, so a file added, renamed or removed without its line fails here.
//
// The files a package has are go list's GoFiles plus the non-test files it
// ignores for their build constraints (procattr_other.go on Linux): the
// list describes the folder a reader opens, and the test passes on every
// OS. Lines of the block that name no .go file (redisstore's lua/) are the
// reader's and not checked.
func TestDocFileLists(t *testing.T) {
	for _, pkg := range modulePackages(t) {
		files := slices.Concat(pkg.GoFiles, pkg.CgoFiles)
		for _, f := range pkg.IgnoredGoFiles {
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, f)
			}
		}
		checkDoc(t, pkg.rel(), pkg.Name, pkg.Dir, files)
	}
}

// checkDoc reports what is wrong with the package comments of one package
// and with the file list of its doc.go.
func checkDoc(t *testing.T, rel, name, dir string, files []string) {
	t.Helper()
	if !slices.Contains(files, "doc.go") {
		t.Errorf("%s: no doc.go: its package comment and file list go there", rel)
		return
	}
	var doc *ast.CommentGroup
	fset := token.NewFileSet()
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		file, err := parser.ParseFile(fset, f, src, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		switch {
		case f == "doc.go":
			doc = file.Doc
		case file.Doc != nil:
			t.Errorf("%s: %s has a package comment too: only doc.go may, or go doc shows them run together", rel, f)
		}
	}
	if doc == nil {
		t.Errorf("%s: doc.go has no package comment (a comment right above its package clause)", rel)
		return
	}
	text := doc.Text()
	opening := "Package " + name + " "
	if name == "main" {
		opening = "Command " + path.Base(rel) + " "
	}
	if !strings.HasPrefix(text, opening) {
		t.Errorf("%s: the package comment should open with %q", rel, opening)
	}
	listed, err := fileList(text)
	if err != nil {
		t.Errorf("%s: doc.go: %v", rel, err)
		return
	}
	for _, f := range listed {
		if !slices.Contains(files, f) {
			t.Errorf("%s: doc.go lists %s, which is not a file of the package", rel, f)
		}
	}
	for _, f := range files {
		if !slices.Contains(listed, f) {
			t.Errorf("%s: %s is missing from doc.go's Files: block", rel, f)
		}
	}
}

// fileList reads the .go names of the one Files: block of a package
// comment's text. The block is a line "Files:", a blank line, then
// indented lines: an entry starts right after the indent with its file
// name; a line indented further continues the entry above it. The block
// ends at the first line that is not indented.
func fileList(text string) ([]string, error) {
	lines := strings.Split(text, "\n")
	start := -1
	for i, l := range lines {
		if l == "Files:" {
			if start >= 0 {
				return nil, fmt.Errorf("two Files: blocks")
			}
			start = i
		}
	}
	if start < 0 {
		return nil, fmt.Errorf(`no "Files:" line: list the package's files under one`)
	}
	if start+2 >= len(lines) || lines[start+1] != "" || !strings.HasPrefix(lines[start+2], "\t") {
		return nil, fmt.Errorf("Files: must be followed by a blank line and the tab-indented list")
	}
	var names []string
	for _, l := range lines[start+2:] {
		if l == "" {
			continue
		}
		if !strings.HasPrefix(l, "\t") {
			break
		}
		entry := l[1:]
		if entry == "" || entry[0] == ' ' || entry[0] == '\t' {
			continue // a continuation of the entry above
		}
		name := strings.Fields(entry)[0]
		if !strings.HasSuffix(name, ".go") {
			continue // not Go: a folder of scripts, say
		}
		if slices.Contains(names, name) {
			return nil, fmt.Errorf("%s is listed twice", name)
		}
		names = append(names, name)
	}
	return names, nil
}
