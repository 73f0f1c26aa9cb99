package index

import (
	"testing"
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
