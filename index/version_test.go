package index

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/internal/demo"
)

func TestVersionFollowsTheDocs(t *testing.T) {
	a := Doc{ID: "a", Tags: []string{"sky"}, Title: "A", Features: []float32{1, 2}}
	b := Doc{ID: "b", Tags: []string{"sea"}, Features: []float32{3, 4}}
	c := Doc{ID: "c", Tags: []string{"sky", "sea"}}
	a2 := a
	a2.Features = []float32{1, 2.5}

	ix := openTemp(t)
	empty := ix.Version()
	if len(empty) != 32 || empty != "00000000000000000000000000000000" {
		t.Fatalf("empty index version %q, want 32 zero digits", empty)
	}
	seen := map[string]string{empty: "empty"}
	step := func(name string, change func() error) string {
		t.Helper()
		if err := change(); err != nil {
			t.Fatal(err)
		}
		v := ix.Version()
		if prev, ok := seen[v]; ok {
			t.Fatalf("%s: version %s already seen after %s", name, v, prev)
		}
		seen[v] = name
		return v
	}
	step("add a, b", func() error { return ix.Add([]Doc{a, b}) })
	ab := ix.Version()
	step("add c", func() error { return ix.Add([]Doc{c}) })
	abc := ix.Version()
	step("replace a", func() error { return ix.Add([]Doc{a2}) })
	step("retitle b", func() error {
		b2 := b
		b2.Title = "B"
		return ix.Add([]Doc{b2})
	})
	// Restoring the docs restores the version.
	if err := ix.Add([]Doc{a, b}); err != nil {
		t.Fatal(err)
	}
	if v := ix.Version(); v != abc {
		t.Errorf("after restoring a and b: %s, want %s", v, abc)
	}
	if err := ix.Add([]Doc{c}); err != nil { // the same doc again
		t.Fatal(err)
	}
	if v := ix.Version(); v != abc {
		t.Errorf("re-adding c unchanged: %s, want %s", v, abc)
	}
	if err := ix.Delete([]string{"c", "no-such-doc"}); err != nil {
		t.Fatal(err)
	}
	if v := ix.Version(); v != ab {
		t.Errorf("after deleting c: %s, want %s", v, ab)
	}
	if err := ix.Delete([]string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if v := ix.Version(); v != empty {
		t.Errorf("after deleting everything: %s, want %s", v, empty)
	}

	// Another index with the same docs, added in another order and batches.
	other := openTemp(t)
	mustAdd(t, other, c)
	mustAdd(t, other, b, a2)
	mustAdd(t, other, a)
	if err := ix.Add([]Doc{a, b, c}); err != nil {
		t.Fatal(err)
	}
	if v, w := other.Version(), ix.Version(); v != w || v != abc {
		t.Errorf("same docs, other order: %s and %s, want %s", v, w, abc)
	}
}

func TestVersionSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, ix, Doc{ID: "a", Tags: []string{"sky"}, Features: []float32{1}}, tagged("b", "sea"))
	want := ix.Version()
	ix.Close()

	ix = openAt(t, dir)
	if v := ix.Version(); v != want {
		t.Fatalf("after reopening: %s, want %s", v, want)
	}
	// An index from before the corpus version: the key is missing and Open
	// recomputes it from the stored docs, then keeps it.
	if err := ix.bi.DeleteInternal([]byte(keyCorpus)); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	ix = openAt(t, dir)
	if v := ix.Version(); v != want {
		t.Fatalf("recomputed on open: %s, want %s", v, want)
	}
	if b, err := ix.bi.GetInternal([]byte(keyCorpus)); err != nil || len(b) != 16 {
		t.Fatalf("recomputed version not stored: %x, %v", b, err)
	}
}

// demoPart writes the first n records of the demo corpus, with their
// images, into a new directory and returns it.
func demoPart(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := demo.ExtractFirst(dir, n); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestVersionIsTheContentsNotWhereTheyLie(t *testing.T) {
	ingestDir := func(dir string) *Index {
		t.Helper()
		ix := openTemp(t)
		if rep, err := IngestDir(t.Context(), ix, dir, IngestOptions{StopOnError: true}); err != nil || rep.Added != 100 {
			t.Fatalf("ingest %s: %+v, %v", dir, rep, err)
		}
		return ix
	}
	// The demo extracted into two directories: other paths, same bytes.
	a, b := demoPart(t, 100), demoPart(t, 100)
	ixA, ixB := ingestDir(a), ingestDir(b)
	if va, vb := ixA.Version(), ixB.Version(); va != vb || va == strings.Repeat("0", 32) {
		t.Fatalf("the same 100 demo images in two directories: versions %s and %s", va, vb)
	}
	// One JSONL, with relative paths, ingested into two indexes from two
	// working directories' worth of base paths.
	jsonl, err := os.ReadFile(filepath.Join(a, CorpusFile))
	if err != nil {
		t.Fatal(err)
	}
	ixC := openTemp(t)
	if _, err := IngestJSONL(t.Context(), ixC, bytes.NewReader(jsonl), b, IngestOptions{StopOnError: true}); err != nil {
		t.Fatal(err)
	}
	if vc := ixC.Version(); vc != ixA.Version() {
		t.Fatalf("one JSONL: version %s, want %s", vc, ixA.Version())
	}
	d := mustGet(t, ixA, "animals-2-dead-frogs-lumen-desig-01")
	if d.ImageSHA256 == "" || !strings.HasPrefix(d.Image, a) {
		t.Fatalf("stored doc %+v: want its image hash and its path under %s", d, a)
	}
	f, err := ixA.Features([]string{d.ID})
	if err != nil {
		t.Fatal(err)
	}
	d.Features = f[0]
	base := ixA.Version()
	changed := func(what string, edit func(d *Doc)) {
		t.Helper()
		e := d
		e.Tags = slices.Clone(d.Tags)
		e.Features = slices.Clone(d.Features)
		edit(&e)
		mustAdd(t, ixA, e)
		if v := ixA.Version(); v == base {
			t.Errorf("%s: version unchanged", what)
		}
		mustAdd(t, ixA, d)
		if v := ixA.Version(); v != base {
			t.Fatalf("%s undone: version %s, want %s", what, v, base)
		}
	}
	changed("a tag", func(e *Doc) { e.Tags[0] += "s" })
	changed("the title", func(e *Doc) { e.Title += "!" })
	changed("a feature", func(e *Doc) { e.Features[3] += 1e-3 })
	changed("the image bytes", func(e *Doc) { e.ImageSHA256 = ContentHash([]byte("other bytes")) })
	// What does not define the doc for search leaves the version alone.
	same := d
	same.Image, same.Labels = "/elsewhere/x.png", []string{"other"}
	mustAdd(t, ixA, same)
	if v := ixA.Version(); v != base {
		t.Errorf("another path and labels: version %s, want %s", v, base)
	}
}

func TestContentHash(t *testing.T) {
	// sha256sum of "abc", worked out by the FIPS 180-2 example.
	if h := ContentHash([]byte("abc")); h != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("ContentHash(abc) = %s", h)
	}
	ix := openTemp(t)
	err := ix.Add([]Doc{{ID: "a", Tags: []string{"x"}, ImageSHA256: "ABC"}})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "image_sha256") {
		t.Fatalf("a bad image_sha256: %v, want ErrInvalid naming it", err)
	}
}
