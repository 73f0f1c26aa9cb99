package internal

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/kernelrank/kernelrank/"

var (
	ground = []string{"admission", "changelog", "dataset", "demo", "cputime", "feedback", "jobs", "metrics", "redistest", "socialtest", "vecmath"}
	top    = []string{"bench", "deploy", "eval", "retrain"}
	// above are the packages a ground-floor package may not import besides
	// the top of the house.
	above = []string{"search", "recommend", "server", "cmd"}
)

// imports returns every package of the module (its directory from the
// module root) with the module's packages its non-test files import.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		dir, err := filepath.Rel("..", filepath.Dir(path))
		if err != nil {
			return err
		}
		af, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if sub, ok := strings.CutPrefix(p, module); ok {
				out[filepath.ToSlash(dir)] = append(out[filepath.ToSlash(dir)], sub)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// floor returns the floor of pkg's top directory under internal/ ("" when
// pkg is not under internal/).
func floor(pkg string) string {
	sub, ok := strings.CutPrefix(pkg, "internal/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(sub, "/")
	switch {
	case slices.Contains(ground, name):
		return "ground"
	case slices.Contains(top, name):
		return "top"
	}
	return "none"
}

// The floors hold: a ground-floor package imports nothing above it, only
// commands and the top of the house import the top, and every package
// under internal/ is on one floor.
func TestFloors(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && floor("internal/"+e.Name()) == "none" {
			t.Errorf("internal/%s is on no floor: add it to ground or top here and to docs/architecture.md", e.Name())
		}
	}
	for pkg, ims := range imports(t) {
		for _, im := range ims {
			name, _, _ := strings.Cut(im, "/")
			switch {
			case floor(pkg) == "ground" && (slices.Contains(above, name) || floor(im) == "top"):
				t.Errorf("%s imports %s: a ground-floor package imports nothing above the facades' floor", pkg, im)
			case floor(im) == "top" && floor(pkg) != "top" && !strings.HasPrefix(pkg, "cmd/"):
				t.Errorf("%s imports %s: only commands and the top of the house import it", pkg, im)
			}
		}
	}
}
