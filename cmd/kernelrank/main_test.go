package main

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/index"
)

func writePNG(t *testing.T, path string, c color.Color) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	for y := 0; y < 16; y++ {
		for x := 0; x < 16; x++ {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestIngestReportsBadLinesAndKeepsTheRest(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "img"), 0o755)
	writePNG(t, filepath.Join(dir, "img", "red.png"), color.RGBA{255, 0, 0, 255})
	writePNG(t, filepath.Join(dir, "img", "blue.png"), color.RGBA{0, 0, 255, 255})
	os.WriteFile(filepath.Join(dir, "img", "broken.png"), []byte("\x89PNG\r\n\x1a\ntruncated"), 0o644)
	corpus := strings.Join([]string{
		`{"id":"red","tags":["red","square"],"image":"img/red.png"}`,
		`{"id":"blue","tags":["blue","square"],"image":"img/blue.png"}`,
		`{"id":"broken","tags":["square"],"image":"img/broken.png"}`,
		`{"id": "half"`,
	}, "\n")
	path := filepath.Join(dir, "corpus.jsonl")
	os.WriteFile(path, []byte(corpus), 0o644)
	var out, errOut bytes.Buffer
	data := filepath.Join(dir, "index")
	if err := run(context.Background(), []string{"ingest", "--data", data, path}, &out, &errOut); err != nil {
		t.Fatalf("ingest: %v\n%s", err, errOut.String())
	}
	for _, want := range []string{"added 2, skipped 2", "corpus.jsonl:3 broken", "corpus.jsonl:4"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	ix, err := index.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	hits, _, err := ix.Search(context.Background(), "square", 10, 0)
	if err != nil || len(hits) != 2 || ix.Dim() != 297 {
		t.Fatalf("index after ingest: %d hits, dim %d, %v", len(hits), ix.Dim(), err)
	}
}

func TestCommandErrors(t *testing.T) {
	ctx := context.Background()
	for _, args := range [][]string{
		nil,
		{"frobnicate"},
		{"ingest"},
		{"ingest", "--data", t.TempDir()},
		{"ingest", "--data", filepath.Join(t.TempDir(), "x"), "/no/such/corpus.jsonl"},
		{"serve", "--data", t.TempDir()},
		{"serve", "--log-level", "loud"},
		{"serve", "--trusted-proxies", "lb.example"},
		{"serve", "--cors-origins", "app.example"},
		{"serve", "--read-timeout", "0s"},
		{"eval"},
		{"eval", "images", "--keep", "2"},
		{"eval", "social", "--preprocess", "raw"},
		{"eval", "social", "--max-users", "-1"},
		{"eval", "social", "--tasks", "friends,pets"},
		{"eval", "social", "--learners", "alignf,twolayer"},
		{"eval", "social", "--data", "/no/such/dir"},
		{"serve", "--events-retention", "forever"},
		{"eval", "clicks", "--generate", "-1"},
		{"eval", "clicks", "--events", "/no/such/dir"},
		{"eval", "clicks", "--events", t.TempDir(), "extra"},
	} {
		var out, errOut bytes.Buffer
		if err := run(ctx, args, &out, &errOut); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

func TestEnvironmentOverridesFlags(t *testing.T) {
	t.Setenv("KERNELRANK_ADDR", "127.0.0.1:9999")
	t.Setenv("KERNELRANK_WINDOW", "50")
	var out, errOut bytes.Buffer
	// --window on the command line wins over the environment; a bad value in the environment is an error.
	fs := newServeFlags(&errOut)
	if err := parse(fs.set, []string{"--window", "70"}); err != nil {
		t.Fatal(err)
	}
	if *fs.addr != "127.0.0.1:9999" || *fs.shared.window != 70 {
		t.Errorf("addr %q window %d, want 127.0.0.1:9999 and 70", *fs.addr, *fs.shared.window)
	}
	t.Setenv("KERNELRANK_MAX_K", "many")
	if err := run(context.Background(), []string{"serve"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "KERNELRANK_MAX_K") {
		t.Errorf("bad environment value: %v", err)
	}
}
