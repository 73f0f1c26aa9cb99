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

// The validation set derived from the folders: its size and a few queries'
// relevant counts were counted independently from corpus.jsonl (a script
// over the labels); no query the page suggests is in it.
func TestValidation(t *testing.T) {
	val, err := Validation()
	if err != nil {
		t.Fatal(err)
	}
	if len(val) != 51 {
		t.Errorf("%d validation queries, want 51", len(val))
	}
	want := map[string]int{"animal": 296, "bird": 49, "mammal": 118, "icons": 215, "stars": 176, "food": 351, "transportation": 315}
	got := map[string]int{}
	for _, q := range val {
		if _, dup := got[q.Query]; dup {
			t.Errorf("query %q twice", q.Query)
		}
		got[q.Query] = len(q.Relevant)
		for _, s := range Suggested {
			if q.Query == s.Query {
				t.Errorf("suggested query %q is a validation query", q.Query)
			}
		}
	}
	for q, n := range want {
		if got[q] != n {
			t.Errorf("%s: %d relevant drawings, want %d", q, got[q], n)
		}
	}
	if _, ok := got["unsorted"]; ok {
		t.Error("the unsorted folder gave a query")
	}
	sugg, err := SuggestedQueries()
	if err != nil {
		t.Fatal(err)
	}
	// fish: animals/fish (the packagers filed the crawfish there too);
	// flower and tree: plants and its subfolders.
	if len(sugg) != len(Suggested) || len(sugg[3].Relevant) != 23 || !sugg[3].Relevant["animals-crawfish1-ganson"] ||
		len(sugg[4].Relevant) != 77 || len(sugg[5].Relevant) != 77 {
		t.Errorf("suggested: fish %d, flower %d, tree %d relevant; want 23, 77, 77", len(sugg[3].Relevant), len(sugg[4].Relevant), len(sugg[5].Relevant))
	}
}
