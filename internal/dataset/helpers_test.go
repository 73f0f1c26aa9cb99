package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// realData returns the shared data directory or skips the test. The default
// location is computed relative to this package directory (the working
// directory of `go test`): ../../../shared/data, i.e. shared/data beside the
// module root; $KERNELRANK_SHARED_DATA overrides it.
func realData(t testing.TB) string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "shared", "data")
	if env := os.Getenv(EnvDataDir); env != "" {
		dir = env
	}
	if !isDir(dir) {
		abs, _ := filepath.Abs(dir)
		t.Skipf("real data not found at %s (set %s to the shared data directory): skipping test on real data", abs, EnvDataDir)
	}
	return dir
}

var corel5k = sync.OnceValues(func() (*MultiLabel, error) {
	dir, ok := DataDir()
	if !ok {
		return nil, errors.New("no data dir")
	}
	return LoadCorel5k(dir)
})

// realCorel5k loads Corel5k once per test binary, or skips without data.
func realCorel5k(t *testing.T) *MultiLabel {
	t.Helper()
	realData(t)
	ml, err := corel5k()
	if err != nil {
		t.Fatalf("LoadCorel5k: %v", err)
	}
	return ml
}

// wantParseErr checks that err is a *ParseError at the given line whose
// message contains substr.
func wantParseErr(t *testing.T, err error, line int, substr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want a parse error at line %d containing %q", line, substr)
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *ParseError", err, err)
	}
	if pe.Line != line {
		t.Errorf("error %q at line %d, want line %d", err, pe.Line, line)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Errorf("error %q does not contain %q", err, substr)
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
