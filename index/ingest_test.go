package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/features"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func problemLines(ps []Problem) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.Line)
	}
	return out
}

func TestIngestJSONLSkipsBadLines(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "c.jsonl")
	writeFile(t, corpus, strings.Join([]string{
		`{"id":"a","tags":["sky"],"image":"img/a.png","features":[1,2,3]}`,
		`{"id":"b","tags":["sky"`, // 2: malformed
		``,
		`{"id":"c","tags":["sea"],"title":"C","labels":["water"]}`,
		`{"id":"d","tags":["x"],"features":[NaN]}`, // 5: NaN is not JSON
		`{"tags":["x"]}`, // 6: no id
		`{"id":"e","tags":["x"],"image":"gone.png"}`, // 7: unreadable image
		`{"id":"f","tags":["x"],"features":[1,2]}`,   // 8: wrong dimension
		`{"id":"g","tags":["sea"],"image":"/abs/g.png","features":[4,5,6],"image_sha256":"cd0aa9856147b6c5b4ff2b7dfee5da20aa38253099ef1b4a64aced233c9afe29"}`, // given hash and features: the file is not read
	}, "\n"))
	if err := os.Mkdir(filepath.Join(dir, "img"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "img", "a.png"), "read for its hash only")
	f, err := os.Open(corpus)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ix := openTemp(t)
	rep, err := IngestJSONL(t.Context(), ix, f, dir, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added != 3 || rep.Skipped != 5 || !reflect.DeepEqual(problemLines(rep.Problems), []int{2, 5, 6, 7, 8}) {
		t.Fatalf("report %+v; want 3 added, lines 2 5 6 7 8 skipped", rep)
	}
	for i, want := range []string{"malformed JSON", "malformed JSON", "empty id", "gone.png", "length 2"} {
		p := rep.Problems[i]
		if p.File != corpus || !strings.Contains(p.Reason, want) {
			t.Errorf("problem %+v, want file %s and reason mentioning %q", p, corpus, want)
		}
	}
	if p := rep.Problems[3]; p.ID != "e" || !strings.Contains(p.Error(), fmt.Sprintf("%s:7 (id \"e\")", corpus)) {
		t.Errorf("problem %v, want id e and position %s:7", p, corpus)
	}
	if got := mustGet(t, ix, "a").Image; got != filepath.Join(dir, "img", "a.png") {
		t.Errorf("relative image stored as %q", got)
	}
	if got := mustGet(t, ix, "g").Image; got != "/abs/g.png" {
		t.Errorf("absolute image stored as %q", got)
	}
	if got := mustGet(t, ix, "c"); got.Title != "C" || !reflect.DeepEqual(got.Labels, []string{"water"}) {
		t.Errorf("Get(c) = %+v", got)
	}
	if ix.Count() != 3 || ix.DocFreq("sea") != 2 {
		t.Errorf("Count %d DocFreq(sea) %d; want 3 2", ix.Count(), ix.DocFreq("sea"))
	}
}

func TestIngestNoUsableDocsLeavesIndexAlone(t *testing.T) {
	ix := openTemp(t)
	mustAdd(t, ix, tagged("keep", "sky"))
	for name, input := range map[string]string{
		"all bad": "{oops\n{\"id\":\"x/y\",\"tags\":[\"sky\"]}\n",
		"empty":   "\n\n",
	} {
		rep, err := IngestJSONL(t.Context(), ix, strings.NewReader(input), ".", IngestOptions{})
		if !errors.Is(err, ErrNoDocs) || rep.Added != 0 {
			t.Errorf("%s: %+v, %v; want ErrNoDocs", name, rep, err)
		}
	}
	if ix.Count() != 1 || ix.DocFreq("sky") != 1 {
		t.Errorf("index changed: Count %d", ix.Count())
	}
	if _, ok, _ := ix.Get("keep"); !ok {
		t.Error("existing doc lost")
	}
}

func TestIngestStopOnError(t *testing.T) {
	ix := openTemp(t)
	input := `{"id":"a","tags":["x"]}
{"id":"b","tags":["x"]}
{"id":"c","tags":[]}
{"id":"d","tags":["x"]}`
	rep, err := IngestJSONL(t.Context(), ix, strings.NewReader(input), ".", IngestOptions{StopOnError: true})
	var p Problem
	if !errors.As(err, &p) || p.Line != 3 || p.ID != "c" {
		t.Fatalf("err = %v, want the Problem of line 3", err)
	}
	if rep.Added != 2 || rep.Skipped != 1 || ix.Count() != 2 {
		t.Errorf("report %+v, Count %d; want a and b written", rep, ix.Count())
	}
	if _, ok, _ := ix.Get("d"); ok {
		t.Error("ingest went on after the bad line")
	}
}

func corpusOf(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "{\"id\":\"d%d\",\"tags\":[\"t%d\"],\"features\":[%d,1]}\n", i, i%7, i)
	}
	return b.String()
}

func TestIngestCancel(t *testing.T) {
	ix := openTemp(t)
	mustAdd(t, ix, tagged("keep", "sky"))

	ctx, cancel := context.WithCancel(t.Context())
	var calls []int
	rep, err := IngestJSONL(ctx, ix, strings.NewReader(corpusOf(3*ingestBatch)), ".", IngestOptions{
		Progress: func(done, total int) {
			calls = append(calls, done, total)
			cancel() // after the first batch is written
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if rep.Added != ingestBatch || ix.Count() != ingestBatch+1 || !reflect.DeepEqual(calls, []int{ingestBatch, -1}) {
		t.Errorf("report %+v, Count %d, progress %v; want one batch written", rep, ix.Count(), calls)
	}

	rep, err = IngestJSONL(ctx, ix, strings.NewReader(corpusOf(3)), ".", IngestOptions{})
	if !errors.Is(err, context.Canceled) || rep.Added != 0 || ix.Count() != ingestBatch+1 {
		t.Errorf("already cancelled: %+v, %v, Count %d", rep, err, ix.Count())
	}
}

func TestIngestDirCorpusFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, CorpusFile), `{"id":"a","tags":["x"],"image":"a.png","features":[1]}
{"id":"b","tags":["y"],"features":[2]}

{"id":"a","tags":["z"],"image":"a2.png","features":[3]}
`)
	// Sidecar-mode files must be ignored when corpus.jsonl exists.
	writeFile(t, filepath.Join(dir, "c.tags"), "q")
	writeFile(t, filepath.Join(dir, "a.png"), "read for its hash only")
	writeFile(t, filepath.Join(dir, "a2.png"), "another")
	ix := openTemp(t)
	var last [2]int
	rep, err := IngestDir(t.Context(), ix, dir, IngestOptions{Progress: func(done, total int) { last = [2]int{done, total} }})
	if err != nil || rep.Added != 3 || rep.Skipped != 0 {
		t.Fatalf("IngestDir = %+v, %v", rep, err)
	}
	if last != [2]int{3, 3} {
		t.Errorf("last progress %v, want [3 3]", last)
	}
	// The later record with id a replaced the earlier one; its image was
	// read for its hash (sha256sum of "another").
	if a := mustGet(t, ix, "a"); a.Image != filepath.Join(dir, "a2.png") || !reflect.DeepEqual(a.Tags, []string{"z"}) ||
		a.ImageSHA256 != "ae448ac86c4e8e4dec645729708ef41873ae79c6dff84eff73360989487f08e5" {
		t.Errorf("Get(a) = %+v", a)
	}
	if ix.Count() != 2 || ix.DocFreq("x") != 0 || ix.DocFreq("z") != 1 {
		t.Errorf("Count %d DocFreq x %d z %d; want 2 0 1", ix.Count(), ix.DocFreq("x"), ix.DocFreq("z"))
	}
}

func writePNG(t *testing.T, path string, w, h int, fill func(x, y int) color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, fill(x, y))
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestIngestDirImagesWithSidecars(t *testing.T) {
	dir := t.TempDir()
	stripes := func(x, y int) color.Color {
		if (x/4)%2 == 0 {
			return color.RGBA{200, 30, 30, 255}
		}
		return color.RGBA{250, 240, 220, 255}
	}
	writePNG(t, filepath.Join(dir, "red.png"), 48, 40, stripes)
	writeFile(t, filepath.Join(dir, "red.tags"), "Red\nwarm, stripes\n\n")
	writePNG(t, filepath.Join(dir, "blue.PNG"), 40, 40, func(x, y int) color.Color { return color.RGBA{0, 0, uint8(4 * y), 255} })
	writeFile(t, filepath.Join(dir, "blue.txt"), "cold")
	writePNG(t, filepath.Join(dir, "orphan.png"), 8, 8, stripes) // no sidecar
	good := writePNG(t, filepath.Join(dir, "whole.png"), 32, 32, stripes)
	os.WriteFile(filepath.Join(dir, "trunc.png"), good[:len(good)/2], 0o644)
	writeFile(t, filepath.Join(dir, "trunc.tags"), "x")
	writeFile(t, filepath.Join(dir, "junk.jpg"), "not a jpeg at all")
	writeFile(t, filepath.Join(dir, "junk.tags"), "x")
	writeFile(t, filepath.Join(dir, "notes.md"), "not an image")

	ix := openTemp(t)
	rep, err := IngestDir(t.Context(), ix, dir, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// whole.png has no sidecar either.
	skipped := map[string]bool{}
	for _, p := range rep.Problems {
		skipped[filepath.Base(p.File)] = true
	}
	if rep.Added != 2 || !reflect.DeepEqual(skipped, map[string]bool{"orphan.png": true, "whole.png": true, "trunc.png": true, "junk.jpg": true}) {
		t.Fatalf("report %+v", rep)
	}
	red := mustGet(t, ix, "red.png")
	if !reflect.DeepEqual(red.Tags, []string{"Red", "warm", "stripes"}) || red.Image != filepath.Join(dir, "red.png") {
		t.Errorf("Get(red.png) = %+v", red)
	}
	fs, err := ix.Features([]string{"red.png", "blue.PNG"})
	if err != nil {
		t.Fatal(err)
	}
	want, err := features.FromFile(filepath.Join(dir, "red.png"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs[0]) != features.Dim || len(fs[1]) != features.Dim || ix.Dim() != features.Dim {
		t.Fatalf("feature lengths %d %d, Dim %d; want %d", len(fs[0]), len(fs[1]), ix.Dim(), features.Dim)
	}
	for i, x := range want {
		if fs[0][i] != float32(x) {
			t.Fatalf("stored features[%d] = %v, computed %v", i, fs[0][i], x)
		}
	}
	if reflect.DeepEqual(fs[0], fs[1]) {
		t.Error("two different images got the same features")
	}
	if hits, _, err := ix.Search(t.Context(), "RED", 5, 0); err != nil || len(hits) != 1 || hits[0].ID != "red.png" {
		t.Errorf("Search(RED) = %v, %v", hits, err)
	}
}
