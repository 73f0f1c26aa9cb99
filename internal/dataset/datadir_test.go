package dataset

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDataDirFindsSharedData(t *testing.T) {
	t.Setenv(EnvDataDir, "")
	want := filepath.Join("..", "..", "..", "shared", "data")
	got, ok := DataDir()
	if !isDir(want) {
		if ok {
			t.Fatalf("DataDir() = %q, true; but %s does not exist", got, want)
		}
		t.Skipf("no shared data beside the module root (%s): DataDir correctly reports false", want)
	}
	if !ok {
		t.Fatalf("DataDir() = %q, false; want %s", got, want)
	}
	absWant, _ := filepath.Abs(want)
	if got != absWant {
		t.Errorf("DataDir() = %q, want %q", got, absWant)
	}
	if _, err := os.Stat(filepath.Join(got, "MANIFEST.md")); err != nil {
		t.Errorf("no MANIFEST.md in %s: %v", got, err)
	}
}

func TestDataDirEnvOverride(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv(EnvDataDir, tmp)
	if got, ok := DataDir(); !ok || got != tmp {
		t.Errorf("DataDir() = %q, %v; want %q, true", got, ok, tmp)
	}
	missing := filepath.Join(tmp, "nope")
	t.Setenv(EnvDataDir, missing)
	if got, ok := DataDir(); ok || got != missing {
		t.Errorf("DataDir() = %q, %v; want %q, false (override to a missing dir is not papered over)", got, ok, missing)
	}
}

// TestKnownMD5MatchesManifest parses the md5 section of MANIFEST.md and
// checks that every entry of KnownMD5 is listed there with the same sum, and
// that the real files have those sums.
func TestKnownMD5MatchesManifest(t *testing.T) {
	dir := realData(t)
	f, err := os.Open(filepath.Join(dir, "MANIFEST.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	manifest := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 2 && len(fs[0]) == 32 && strings.Contains(fs[1], "/") {
			manifest[fs[1]] = fs[0]
		}
	}
	if len(manifest) < 20 {
		t.Fatalf("parsed only %d md5 lines from MANIFEST.md", len(manifest))
	}
	for rel, sum := range KnownMD5 {
		if manifest[rel] != sum {
			t.Errorf("KnownMD5[%q] = %s, MANIFEST.md says %q", rel, sum, manifest[rel])
		}
		if err := VerifyMD5(dir, rel); err != nil {
			t.Errorf("VerifyMD5: %v", err)
		}
	}
}

func TestVerifyMD5Mismatch(t *testing.T) {
	tmp := t.TempDir()
	p := filepath.Join(tmp, filepath.FromSlash(Corel5kXML))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("<labels><label name=\"x\"/></labels>"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := VerifyMD5(tmp, Corel5kXML)
	if !errors.Is(err, ErrChecksum) {
		t.Fatalf("VerifyMD5 on a changed file: %v, want ErrChecksum", err)
	}
	if !strings.Contains(err.Error(), Corel5kXMLMD5) {
		t.Errorf("error %q does not name the expected md5", err)
	}
	if err := VerifyMD5(tmp, "no/such/file"); err == nil {
		t.Error("VerifyMD5 of an unknown file: no error")
	}
	if _, err := LoadCorel5k(tmp); err == nil {
		t.Error("LoadCorel5k on a directory without the files: no error")
	}
}
