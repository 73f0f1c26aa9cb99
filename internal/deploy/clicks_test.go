package deploy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/feedback"
	"github.com/kernelrank/kernelrank/search"
)

// clickIndex is an index of 12 images tagged cat, with 2-d features.
func clickIndex(t *testing.T) *index.Index {
	t.Helper()
	src := t.TempDir()
	var corpus strings.Builder
	for i := range 12 {
		fmt.Fprintf(&corpus, `{"id":"c%02d","tags":["cat"],"features":[%d,%d]}`+"\n", i, i%4+1, 5-i%3)
	}
	if err := os.WriteFile(filepath.Join(src, index.CorpusFile), []byte(corpus.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ix")
	if _, err := IngestFiles(context.Background(), dir, []string{src}, true, nil); err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// With --validation-from-clicks the default re-ranker is chosen on the
// queries the logged clicks judge; with no clicks logged, on none.
func TestEngineChoosesOnClickJudgments(t *testing.T) {
	ix := clickIndex(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	events, err := feedback.OpenFileLog(t.TempDir(), feedback.Retention{})
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	ctx := context.Background()
	engine, choose, err := NewEngine(ix, &Backends{}, "", events, false, search.Options{}, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := choose(ctx); err != nil || engine.Selection() != nil {
		t.Fatalf("no clicks: %v, selection %+v: want none", err, engine.Selection())
	}
	// Twenty sessions of "cat", each shown c00..c09 and clicking c03 and c07.
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for s := range 20 {
		var batch []feedback.Event
		for r := range 10 {
			e := feedback.Event{Kind: feedback.Impression, Surface: feedback.Search, Query: "cat", Rerank: "npk-fused",
				Item: fmt.Sprintf("c%02d", r), Rank: r + 1, Session: fmt.Sprint(s), ClientTime: t0, ServerTime: t0}
			batch = append(batch, e)
			if r == 3 || r == 7 {
				e.Kind = feedback.Click
				batch = append(batch, e)
			}
		}
		if err := events.Append(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	judged, err := ClickValidation(ctx, events, log)
	if err != nil || len(judged) != 1 || judged[0].Query != "cat" || len(judged[0].Relevant) != 2 || !judged[0].Relevant["c03"] || !judged[0].Relevant["c07"] {
		t.Fatalf("judged %+v (%v), want cat: c03, c07", judged, err)
	}
	if err := choose(ctx); err != nil {
		t.Fatal(err)
	}
	if sel := engine.Selection(); sel == nil || sel.Queries != 1 || sel.Reason == "" {
		t.Fatalf("selection %+v: want one made on the one judged query", sel)
	}
}
