package learners_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// No learner imports another learner: shared maths lives in this package
// or a shared one (npkl). A learner package is one whose code registers a
// learner.
func TestNoLearnerImportsALearner(t *testing.T) {
	const module = "github.com/kernelrank/kernelrank/learners/"
	dirs, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string][]string{} // package -> its non-test imports under learners/
	registers := map[string]bool{}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(d.Name(), "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			registers[d.Name()] = registers[d.Name()] || strings.Contains(string(src), "learners.Register(")
			af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range af.Imports {
				path, _ := strconv.Unquote(im.Path.Value)
				if sub, ok := strings.CutPrefix(path, module); ok {
					imports[d.Name()] = append(imports[d.Name()], sub)
				}
			}
		}
	}
	if len(registers) < 9 {
		t.Fatalf("found the code of %d learner packages, want at least 9: is the test run from learners/?", len(registers))
	}
	for pkg, subs := range imports {
		if !registers[pkg] || pkg == "all" {
			continue
		}
		for _, sub := range subs {
			if registers[sub] {
				t.Errorf("learner %s imports learner %s: move what they share to a shared package", pkg, sub)
			}
		}
	}
}
