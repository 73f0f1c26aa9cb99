package demo

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestExtract checks that the bundled corpus unpacks whole: every line of
// corpus.jsonl names an image that exists and decodes as PNG-sized data, and
// ids are unique.
func TestExtract(t *testing.T) {
	dir := t.TempDir()
	path, err := Extract(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var doc struct {
			ID    string   `json:"id"`
			Tags  []string `json:"tags"`
			Image string   `json:"image"`
		}
		if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
			t.Fatalf("line %d: %v", len(seen)+1, err)
		}
		if seen[doc.ID] || len(doc.Tags) == 0 {
			t.Fatalf("%s: duplicate id or no tags", doc.ID)
		}
		seen[doc.ID] = true
		b, err := os.ReadFile(filepath.Join(dir, doc.Image))
		if err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
			t.Fatalf("%s: image %s missing or not a PNG (%v)", doc.ID, doc.Image, err)
		}
	}
	if len(seen) != 4000 {
		t.Fatalf("%d images in the demo corpus, want 4000", len(seen))
	}
}
