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

// The seam of the package: every directory directly under learners/ but
// kit is a plug-in package (its code registers), no package under kit/
// registers, and no plug-in imports another: what they share lives in kit.
func TestPluginsAndKit(t *testing.T) {
	const module = "github.com/kernelrank/kernelrank/learners/"
	imports := map[string][]string{} // package dir under learners/ -> its non-test imports under learners/
	registers := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if dir == "." {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// A plug-in registers from init; a kit package may register on request
		// (learnertest's panicking learner, for tests).
		registers[dir] = registers[dir] || strings.Contains(string(src), "func init()") && strings.Contains(string(src), "learners.Register(")
		af, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if sub, ok := strings.CutPrefix(p, module); ok {
				imports[dir] = append(imports[dir], sub)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	plugins := 0
	for dir, reg := range registers {
		kit := strings.HasPrefix(dir, "kit/")
		switch {
		case kit && reg:
			t.Errorf("%s registers a plug-in: plug-ins live directly under learners/, kit/ is what they share", dir)
		case !kit && !reg:
			t.Errorf("%s is directly under learners/ but registers nothing: move it under kit/", dir)
		case !kit:
			plugins++
		}
	}
	if plugins < 9 {
		t.Fatalf("found %d plug-in packages, want at least 9: is the test run from learners/?", plugins)
	}
	for dir, subs := range imports {
		if !registers[dir] {
			continue
		}
		for _, sub := range subs {
			if registers[sub] {
				t.Errorf("plug-in %s imports plug-in %s: move what they share under kit/", dir, sub)
			}
		}
	}
}
