package deploy

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/index"
)

// A corpus directory's progress has its total (it was -1 when the demo was
// ingested as a file).
func TestIngestDirProgressHasTotal(t *testing.T) {
	dir := t.TempDir()
	corpus := `{"id":"a","tags":["cat"],"features":[1,2]}` + "\n" + `{"id":"b","tags":["dog"],"features":[2,1]}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, index.CorpusFile), []byte(corpus), 0o644); err != nil {
		t.Fatal(err)
	}
	var totals []int
	if _, err := IngestFiles(context.Background(), filepath.Join(t.TempDir(), "ix"), []string{dir}, false, func(_, total int) {
		totals = append(totals, total)
	}); err != nil {
		t.Fatal(err)
	}
	if len(totals) == 0 || slices.ContainsFunc(totals, func(n int) bool { return n != 2 }) {
		t.Fatalf("progress totals %v, want 2", totals)
	}
}
