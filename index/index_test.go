package index

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
)

func openTemp(t testing.TB) *Index {
	t.Helper()
	return openAt(t, t.TempDir())
}

func openAt(t testing.TB, dir string) *Index {
	t.Helper()
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func mustAdd(t testing.TB, ix *Index, docs ...Doc) {
	t.Helper()
	if err := ix.Add(docs); err != nil {
		t.Fatal(err)
	}
}

func tagged(id string, tags ...string) Doc { return Doc{ID: id, Tags: tags} }

func mustGet(t *testing.T, ix *Index, id string) Doc {
	t.Helper()
	d, ok, err := ix.Get(id)
	if err != nil || !ok {
		t.Fatalf("Get(%q) = ok %v, err %v", id, ok, err)
	}
	return d
}

func TestAddGetFeaturesRoundTrip(t *testing.T) {
	ix := openTemp(t)
	a := Doc{ID: "a", Tags: []string{"Sky", "sea"}, Title: "Blue day", Image: "/img/a.png",
		Features: []float32{0, -1.5, float32(math.SmallestNonzeroFloat32), math.MaxFloat32}, Labels: []string{"sky"}}
	b := Doc{ID: "b", Title: "only a title"}
	mustAdd(t, ix, a, b)

	if n := ix.Count(); n != 2 {
		t.Errorf("Count = %d, want 2", n)
	}
	if ix.Dim() != 4 {
		t.Errorf("Dim = %d, want 4", ix.Dim())
	}
	got := mustGet(t, ix, "a")
	want := a
	want.Features = nil // Get serves the stored fields only
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Get(a) = %+v, want %+v", got, want)
	}
	if _, ok, err := ix.Get("nope"); ok || err != nil {
		t.Errorf("Get(nope) = ok %v, err %v", ok, err)
	}

	docs, err := ix.GetMany([]string{"b", "nope", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if docs[0].ID != "b" || docs[0].Title != "only a title" || docs[0].Tags != nil || docs[1].ID != "" || docs[2].ID != "a" {
		t.Errorf("GetMany = %+v", docs)
	}

	fs, err := ix.Features([]string{"a", "b", "nope"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fs[0], a.Features) || fs[1] != nil || fs[2] != nil {
		t.Errorf("Features = %v, want [%v nil nil]", fs, a.Features)
	}
}

func TestUpdateReplacesEverything(t *testing.T) {
	ix := openTemp(t)
	mustAdd(t, ix, Doc{ID: "a", Tags: []string{"red"}, Title: "old", Features: []float32{1, 2}}, tagged("b", "red"))
	mustAdd(t, ix, Doc{ID: "a", Tags: []string{"blue"}, Labels: []string{"x"}})

	if got := mustGet(t, ix, "a"); got.Title != "" || !reflect.DeepEqual(got.Tags, []string{"blue"}) || !reflect.DeepEqual(got.Labels, []string{"x"}) {
		t.Errorf("after update Get(a) = %+v", got)
	}
	if fs, _ := ix.Features([]string{"a"}); fs[0] != nil {
		t.Errorf("features of a survived the update: %v", fs[0])
	}
	if ix.Count() != 2 {
		t.Errorf("Count = %d, want 2", ix.Count())
	}
	hits, total, err := ix.Search(t.Context(), "red", 10, 1)
	if err != nil || total != 1 || hits[0].ID != "b" {
		t.Errorf("Search(red) = %v, %d, %v; want only b", hits, total, err)
	}
}

func TestDelete(t *testing.T) {
	ix := openTemp(t)
	mustAdd(t, ix, Doc{ID: "a", Tags: []string{"red"}, Features: []float32{1}}, tagged("b", "red"))
	if err := ix.Delete([]string{"a", "never-added"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := ix.Get("a"); ok {
		t.Error("a still there")
	}
	if fs, _ := ix.Features([]string{"a"}); fs[0] != nil {
		t.Error("features of a still there")
	}
	if ix.Count() != 1 || ix.DocFreq("red") != 1 {
		t.Errorf("Count %d DocFreq(red) %d, want 1 1", ix.Count(), ix.DocFreq("red"))
	}
	if hits, _, _ := ix.Search(t.Context(), "red", 10, 1); len(hits) != 1 || hits[0].ID != "b" {
		t.Errorf("Search(red) = %v, want only b", hits)
	}
}

func TestDocFreq(t *testing.T) {
	ix := openTemp(t)
	mustAdd(t, ix,
		tagged("a", "Red", "car"),
		tagged("b", "red", "RED"), // one doc counts once
		tagged("c", "Close-Up"),
		tagged("d", "close up"),
		Doc{ID: "e", Title: "red car"}, // titles are not tags
	)
	check := func(when string, want map[string]int) {
		t.Helper()
		for tag, n := range want {
			if got := ix.DocFreq(tag); got != n {
				t.Errorf("%s: DocFreq(%q) = %d, want %d", when, tag, got, n)
			}
		}
	}
	check("after add", map[string]int{"red": 2, "RED": 2, "car": 1, "close-up": 2, "close up": 2, "close": 0, "blue": 0, "": 0})

	mustAdd(t, ix, tagged("b", "blue"), tagged("new", "car"))
	check("after update", map[string]int{"red": 1, "blue": 1, "car": 2})

	if err := ix.Delete([]string{"a", "c"}); err != nil {
		t.Fatal(err)
	}
	check("after delete", map[string]int{"red": 0, "car": 1, "blue": 1, "close-up": 1})
}

func TestReopenKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	docs := []Doc{
		{ID: "a", Tags: []string{"red", "car"}, Title: "t", Image: "i.png", Features: []float32{1, 2, 3}, Labels: []string{"l"}},
		{ID: "b", Tags: []string{"red"}, Features: []float32{4, 5, 6}},
		tagged("c", "car"),
	}
	mustAdd(t, ix, docs...)
	if err := ix.Delete([]string{"c"}); err != nil {
		t.Fatal(err)
	}
	// Deleted and replaced docs linger in segment dictionaries until a
	// merge; the frequencies rebuilt at Open must not count them.
	mustAdd(t, ix, Doc{ID: "b", Tags: []string{"Close-Up"}, Features: []float32{4, 5, 6}})
	hitsBefore, _, err := ix.Search(t.Context(), "red car", 10, 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	ix = openAt(t, dir)
	if ix.Count() != 2 || ix.Dim() != 3 || ix.DocFreq("red") != 1 || ix.DocFreq("car") != 1 || ix.DocFreq("close up") != 1 {
		t.Errorf("reopened: Count %d Dim %d DocFreq red %d car %d close-up %d; want 2 3 1 1 1",
			ix.Count(), ix.Dim(), ix.DocFreq("red"), ix.DocFreq("car"), ix.DocFreq("close up"))
	}
	want := docs[0]
	want.Features = nil
	if got := mustGet(t, ix, "a"); !reflect.DeepEqual(got, want) {
		t.Errorf("reopened Get(a) = %+v, want %+v", got, want)
	}
	if fs, _ := ix.Features([]string{"b"}); !reflect.DeepEqual(fs[0], docs[1].Features) {
		t.Errorf("reopened Features(b) = %v", fs[0])
	}
	hitsAfter, _, err := ix.Search(t.Context(), "red car", 10, 7)
	if err != nil || !reflect.DeepEqual(hitsAfter, hitsBefore) {
		t.Errorf("reopened Search = %v, %v; before %v", hitsAfter, err, hitsBefore)
	}
	// The dimension fixed before closing still holds.
	if err := ix.Add([]Doc{{ID: "d", Tags: []string{"x"}, Features: []float32{1}}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Add with a 1-d vector to a 3-d index: %v", err)
	}
}

func TestOpenRefuses(t *testing.T) {
	t.Run("non-empty directory", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hi"), 0o644)
		if _, err := Open(dir); err == nil {
			t.Error("opened a directory holding other files")
		}
	})
	t.Run("foreign bleve index", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "x")
		bi, err := bleve.New(dir, bleve.NewIndexMapping())
		if err != nil {
			t.Fatal(err)
		}
		bi.Close()
		if _, err := Open(dir); !errors.Is(err, ErrIncompatible) {
			t.Errorf("Open(foreign index) = %v, want ErrIncompatible", err)
		}
	})
	t.Run("other format version", func(t *testing.T) {
		dir := t.TempDir()
		ix, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		ix.bi.SetInternal([]byte(keyVersion), []byte("kernelrank-index/0"))
		ix.Close()
		if _, err := Open(dir); !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "kernelrank-index/0") {
			t.Errorf("Open(old format) = %v, want ErrIncompatible naming the format", err)
		}
	})
	t.Run("already open", func(t *testing.T) {
		dir := t.TempDir()
		openAt(t, dir)
		if ix, err := Open(dir); err == nil {
			ix.Close()
			t.Error("opened an index that is already open")
		}
	})
}

func TestAddValidation(t *testing.T) {
	ix := openTemp(t)
	mustAdd(t, ix, Doc{ID: "seed", Tags: []string{"x"}, Features: []float32{1, 2, 3}})
	ok := func(id string) Doc { return Doc{ID: id, Tags: []string{"ok"}} }
	with := func(d Doc, f func(*Doc)) Doc { f(&d); return d }
	cases := []struct {
		name, wantMsg string
		doc           Doc
	}{
		{"empty id", "empty id", ok("")},
		{"slash", "'/'", ok("a/b")},
		{"NUL", "byte 1", ok("a\x00b")},
		{"newline", "byte 1", ok("a\nb")},
		{"DEL", "byte 1", ok("a\x7fb")},
		{"space", "' ' at byte 1", ok("a b")},
		{"non-ASCII", "byte 1", ok("aéb")},
		{"dot", "starts with '.'", ok(".")},
		{"dot dot", "starts with '.'", ok("..")},
		{"hidden", "starts with '.'", ok(".thumbs")},
		{"long id", "129 bytes", ok(strings.Repeat("x", 129))},
		{"bad UTF-8", "byte 1", ok("a\xffb")},
		{"no tags no title", "no tags and no title", Doc{ID: "n", Title: "  "}},
		{"unsearchable tag", "no searchable term", Doc{ID: "p", Tags: []string{"ok", "!!!"}}},
		{"NaN", "features[1] is NaN", with(ok("nan"), func(d *Doc) { d.Features = []float32{0, float32(math.NaN()), 0} })},
		{"Inf", "features[2] is -Inf", with(ok("inf"), func(d *Doc) { d.Features = []float32{0, 0, float32(math.Inf(-1))} })},
		{"wrong dim", "length 2, the index dimension is 3", with(ok("dim"), func(d *Doc) { d.Features = []float32{1, 2} })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A valid doc first: nothing of the batch may be written.
			err := ix.Add([]Doc{ok("good"), c.doc})
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.wantMsg) ||
				!strings.Contains(err.Error(), "docs[1]") {
				t.Fatalf("Add = %v, want ErrInvalid about docs[1] mentioning %q", err, c.wantMsg)
			}
			if !strings.Contains(err.Error(), strconv.Quote(c.doc.ID)) {
				t.Errorf("error %q does not name the doc", err)
			}
			if _, found, _ := ix.Get("good"); found || ix.Count() != 1 || ix.DocFreq("ok") != 0 {
				t.Errorf("a failing batch wrote something: Count %d", ix.Count())
			}
		})
	}
	if err := ix.Add([]Doc{ok(strings.Repeat("x", MaxIDLen))}); err != nil {
		t.Errorf("id of exactly %d bytes: %v", MaxIDLen, err)
	}
	if err := CheckID("a/b"); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "'/'") {
		t.Errorf("CheckID(a/b) = %v", err)
	}
	if err := CheckID("img-1.png"); err != nil {
		t.Errorf("CheckID(img-1.png) = %v", err)
	}
}

func TestFirstVectorFixesDimension(t *testing.T) {
	ix := openTemp(t)
	bad := []Doc{
		{ID: "a", Tags: []string{"x"}, Features: []float32{1, 2}},
		{ID: "b", Tags: []string{"x"}, Features: []float32{1, 2, 3}},
	}
	if err := ix.Add(bad); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("mixed lengths in one batch: %v", err)
	}
	if ix.Dim() != 0 {
		t.Errorf("a failed batch fixed the dimension to %d", ix.Dim())
	}
	mustAdd(t, ix, bad[1])
	if ix.Dim() != 3 {
		t.Errorf("Dim = %d, want 3", ix.Dim())
	}
}

func TestDuplicateIDsInOneBatchLastWins(t *testing.T) {
	ix := openTemp(t)
	mustAdd(t, ix, tagged("a", "red"), tagged("a", "blue"))
	if got := mustGet(t, ix, "a"); !reflect.DeepEqual(got.Tags, []string{"blue"}) {
		t.Errorf("Get(a).Tags = %v, want [blue]", got.Tags)
	}
	if ix.Count() != 1 || ix.DocFreq("red") != 0 || ix.DocFreq("blue") != 1 {
		t.Errorf("Count %d DocFreq red %d blue %d; want 1 0 1", ix.Count(), ix.DocFreq("red"), ix.DocFreq("blue"))
	}
}

func TestCodecRejectsCorruptValues(t *testing.T) {
	d := Doc{Tags: []string{"a", "bc"}, Title: "t", Labels: []string{"l"}}
	b := encodeFields(&d)
	for _, bad := range [][]byte{b[:len(b)-1], append(b, 0), {0xff, 0xff, 0xff}} {
		var got Doc
		if err := decodeFields(bad, &got); err == nil {
			t.Errorf("decodeFields(%v) accepted a corrupt value", bad)
		}
	}
	if _, err := decodeFeatures(encodeFeatures([]float32{1, 2})[:9]); err == nil {
		t.Error("decodeFeatures accepted a truncated vector")
	}
}

func TestClosedIndex(t *testing.T) {
	ix, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if err := ix.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, _, err := ix.Get("a"); err == nil {
		t.Error("Get on a closed index succeeded")
	}
	if _, _, err := ix.Search(t.Context(), "a", 1, 0); err == nil {
		t.Error("Search on a closed index succeeded")
	}
	if err := ix.Add([]Doc{tagged("a", "x")}); err == nil {
		t.Error("Add on a closed index succeeded")
	}
}

func TestMarkImageRefsAndWalk(t *testing.T) {
	dir := t.TempDir()
	ix := openAt(t, dir)
	h := ContentHash([]byte("pixels"))
	a := Doc{ID: "a", Tags: []string{"sky"}, ImageSHA256: h, Features: []float32{1, 2}}
	b := Doc{ID: "b", Tags: []string{"sea"}, ImageSHA256: h, Features: []float32{3, 4}}
	if ix.Mark() != nil {
		t.Fatalf("new index has mark %q", ix.Mark())
	}
	if replaced, err := ix.AddAt([]Doc{a, b}, []byte("1-0")); err != nil || replaced != nil {
		t.Fatalf("AddAt = %v, %v; want nothing replaced", replaced, err)
	}
	if n, err := ix.ImageRefs(h); err != nil || n != 2 {
		t.Fatalf("ImageRefs = %d, %v; want 2", n, err)
	}
	if gone, err := ix.DeleteAt([]string{"a", "none"}, []byte("2-0")); err != nil || len(gone) != 1 || gone[0].ID != "a" || gone[0].ImageSHA256 != h {
		t.Fatalf("DeleteAt = %+v, %v; want a, with its image hash", gone, err)
	}
	if n, _ := ix.ImageRefs(h); n != 1 {
		t.Fatalf("ImageRefs after deleting a = %d, want 1", n)
	}
	// A mark alone (a change the replica refused) is recorded too.
	if _, err := ix.DeleteAt(nil, []byte("3-0")); err != nil {
		t.Fatal(err)
	}
	ver := ix.Version()
	ix.Close()
	ix = openAt(t, dir)
	if string(ix.Mark()) != "3-0" || ix.Version() != ver {
		t.Fatalf("after reopening: mark %q version %s, want 3-0 and %s", ix.Mark(), ix.Version(), ver)
	}
	var got []Doc
	mark, err := ix.Walk(func(d Doc) error { got = append(got, d); return nil })
	if err != nil || string(mark) != "3-0" || len(got) != 1 || !reflect.DeepEqual(got[0], b) {
		t.Fatalf("Walk = %+v, mark %q, %v; want b at 3-0", got, mark, err)
	}
	stop := errors.New("stop")
	if _, err := ix.Walk(func(Doc) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("Walk's fn error: %v", err)
	}
}
