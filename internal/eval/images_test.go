package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/dataset"
	_ "github.com/kernelrank/kernelrank/learners/kit/all"
)

func p10(rows []Row, method string) (best float64) {
	for _, r := range rows {
		if r.Method == method && r.Metric == "P@10" && r.Value > best {
			best = r.Value
		}
	}
	return best
}

// TestImagesCorelQuick runs the protocol on Corel5k with one configuration
// per method: every re-ranker that uses visual features must beat the text
// order, as the full run shows (docs/evaluation.md).
func TestImagesCorelQuick(t *testing.T) {
	if _, ok := dataset.DataDir(); !ok {
		t.Skip("../shared/data not found (set KERNELRANK_SHARED_DATA): skipping the Corel5k evaluation")
	}
	if testing.Short() {
		t.Skip("-short: skipping the Corel5k evaluation")
	}
	cfg := ImagesConfig{Seed: 1, Keep: 0.8, Swap: 0.7, Quick: true}
	rep, err := Images(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// 90 keywords have 40 or more images (counted independently in internal/dataset's tests).
	if rep.Images != 5000 || rep.Validation != 45 || rep.Tests != 45 {
		t.Fatalf("images %d, queries %d + %d; want 5000, 45 + 45", rep.Images, rep.Validation, rep.Tests)
	}
	for _, r := range rep.Test {
		if r.Value < 0 || r.Value > 1 {
			t.Fatalf("%+v out of [0, 1]", r)
		}
	}
	raw := p10(rep.Test, "text order")
	for _, m := range []string{"linear", "intersection", "poly", "rbf", "npk", "npk-lowrank"} {
		if got := p10(rep.Test, m); got <= raw {
			t.Errorf("%s P@10 %.3f does not beat raw %.3f", m, got, raw)
		}
	}
	if lin := p10(rep.Test, "linear"); lin < raw+0.25 {
		t.Errorf("linear P@10 %.3f, want at least raw %.3f + 0.25 (measured +0.38)", lin, raw)
	}
	// The served re-ranker is the default unless a candidate beats it on
	// validation beyond the margin, and the served row's validation P@10
	// (the eval's own ranking of each query's whole window) is the
	// precision the selection measured for it.
	sel := rep.Served
	if len(sel.Precision) == 0 || sel.Queries != rep.Validation {
		t.Fatalf("selection %+v", sel)
	}
	for _, s := range sel.Precision {
		if s.Strategy == sel.Strategy && math.Abs(s.Precision-p10(rep.Val, "served")) > 1e-9 {
			t.Errorf("served validation P@10 %.4f, the selection measured %.4f", p10(rep.Val, "served"), s.Precision)
		}
	}
	// No candidate beats npk-fused on validation here (measured 96.0
	// against intersection's 93.3), and although its degree-3 visual kernel
	// does better than degree 2 (96.9), poly alone does best at degree 2
	// (92.7 against 92.2), so npk-fused keeps degree 2 (SelectAlone): the
	// served row is the quick grid's npk-fused (its defaults), up to the
	// float32 the engine keeps learned kernels in.
	served, fused := p10(rep.Test, "served"), p10(rep.Test, "npk-fused")
	if sel.Strategy != "npk-fused" || string(sel.Params) != `{"degree":2}` || math.Abs(served-fused) > 0.005 {
		t.Errorf("served %s%s P@10 %.3f, npk-fused with its defaults %.3f: want npk-fused{\"degree\":2}, equal", sel.Strategy, sel.Params, served, fused)
	}
	// The per-query decision fitted beside it does not win in
	// cross-validation here (measured -0.009 ± 0.005), so a request that
	// names no re-ranker gets the served choice: the two rows are one.
	if d := rep.Decision; d == nil || d.Adopted || d.Queries != rep.Validation || p10(rep.Test, "served, per-query") != served {
		t.Errorf("decision %+v: per-query P@10 %.4f, served %.4f; want it not adopted, the rows equal", d, p10(rep.Test, "served, per-query"), served)
	}
	// The rule as fitted, followed on every query although not adopted,
	// gains on the validation queries exactly what it gained when fitted.
	if d := rep.Decision; d == nil || d.Alternative == nil {
		t.Errorf("decision %+v: want a fitted rule", d)
	} else if got, want := p10(rep.Val, "rule, if adopted"), p10(rep.Val, "served")+d.Gain; math.Abs(got-want) > 1e-9 {
		t.Errorf("the rule's validation P@10 %.4f, want served + its gain %.4f", got, want)
	}
	for _, m := range []string{"linear", "intersection", "poly"} {
		if got := p10(rep.Test, m); fused <= got {
			t.Errorf("npk-fused P@10 %.3f does not beat %s %.3f", fused, m, got)
		}
	}
	b, err := json.Marshal(rep.Test)
	if err != nil || len(b) == 0 {
		t.Fatal(err)
	}
}

// TestImagesJSONL: a corpus where every image is tagged "cat" but only the
// images of one visual cluster truly show a cat; re-ranking by the visual
// kernel must put true cats first, while the text order cannot tell them apart.
func TestImagesJSONL(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "corpus.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for i := 0; i < 120; i++ {
		cat := i%2 == 0
		feat := []float32{0.1, 0.1, float32(i%7) / 100}
		labels := []string{"dog"}
		if cat {
			feat = []float32{1, 0.9, float32(i%5) / 100}
			labels = []string{"cat"}
		}
		if err := enc.Encode(map[string]any{"id": fmt.Sprint("x", i), "tags": []string{"cat"}, "labels": labels, "features": feat}); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	rep, err := Images(context.Background(), ImagesConfig{Data: path, Seed: 3, Quick: true, MinImages: 40})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Validation+rep.Tests != 2 {
		t.Fatalf("%d queries, want 2 (cat and dog)", rep.Validation+rep.Tests)
	}
	// "cat" re-ranks all 120 images, "dog" (no image tagged so) none.
	if rep.MeanWindow != 60 {
		t.Errorf("mean window %g, want (120 + 0) / 2", rep.MeanWindow)
	}
	// Only "cat" retrieves anything, so one of the halves holds it; the linear
	// kernel ranks the 60 cats (with their larger norm) first.
	rows := append(rep.Val, rep.Test...)
	if got := p10(rows, "linear"); got != 1 {
		t.Errorf("linear P@10 = %.2f, want 1", got)
	}
	if _, err := Images(context.Background(), ImagesConfig{Data: filepath.Join(dir, "missing.jsonl")}); err == nil {
		t.Error("a missing corpus gave no error")
	}
}

// TestJSONLNoisyTags: asked for (--keep / --swap), a JSONL corpus's tags
// become the seeded noisy copy of its labels, the same as NoisyTags gives
// for their indices; keep 1 and swap 0 copies the labels exactly.
func TestJSONLNoisyTags(t *testing.T) {
	mk := func() []item {
		var items []item
		for i := range 50 {
			d := index.Doc{ID: fmt.Sprint("x", i), Tags: []string{"given"}, Labels: []string{"b", "a"}}
			if i%3 == 0 {
				d.Labels = []string{"c"}
			}
			items = append(items, item{doc: d})
		}
		return items
	}
	labels := []string{"a", "b", "c"}

	items := mk()
	noisyTags(items, labels, ImagesConfig{Keep: 1, Swap: 0, Seed: 1})
	for i, it := range items {
		want := []string{"a", "b"}
		if i%3 == 0 {
			want = []string{"c"}
		}
		if !slices.Equal(it.doc.Tags, want) {
			t.Fatalf("keep 1, swap 0: item %d has tags %v, want its labels %v", i, it.doc.Tags, want)
		}
	}

	items = mk()
	cfg := ImagesConfig{Keep: 0.5, Swap: 0.7, Seed: 7}
	noisyTags(items, labels, cfg)
	truth := make([][]int, len(items))
	for i := range truth {
		truth[i] = []int{0, 1}
		if i%3 == 0 {
			truth[i] = []int{2}
		}
	}
	changed := 0
	for i, tags := range dataset.NoisyTags(truth, cfg.Keep, cfg.Swap, cfg.Seed) {
		var want []string
		for _, l := range tags {
			want = append(want, labels[l])
		}
		if !slices.Equal(items[i].doc.Tags, want) {
			t.Fatalf("item %d: tags %v, want NoisyTags' %v", i, items[i].doc.Tags, want)
		}
		if !slices.Equal(want, []string{"a", "b"}) && !slices.Equal(want, []string{"c"}) {
			changed++
		}
	}
	if changed == 0 {
		t.Error("keep 0.5, swap 0.7 changed no image's tags")
	}
}

// reshape keeps a seeded sample of --subset images, in corpus order, and at
// most --max-tags of each image's tags, chosen among its own.
func TestReshapeSubsetAndMaxTags(t *testing.T) {
	mk := func() []item {
		var items []item
		for i := 0; i < 10; i++ {
			items = append(items, item{doc: index.Doc{ID: fmt.Sprint(i), Tags: []string{"a" + fmt.Sprint(i), "b", "c"}}})
		}
		return items
	}
	got, desc := reshape(mk(), "tags", ImagesConfig{Seed: 4, Subset: 4, MaxTags: 1})
	if len(got) != 4 || desc != "tags, a sample of 4 images, at most 1 an image" {
		t.Fatalf("%d images, %q", len(got), desc)
	}
	for i, it := range got {
		if i > 0 && it.doc.ID <= got[i-1].doc.ID {
			t.Errorf("sample out of corpus order: %s after %s", it.doc.ID, got[i-1].doc.ID)
		}
		if len(it.doc.Tags) != 1 || !slices.Contains([]string{"a" + it.doc.ID, "b", "c"}, it.doc.Tags[0]) {
			t.Errorf("image %s tags %v, want one of its own", it.doc.ID, it.doc.Tags)
		}
	}
	again, _ := reshape(mk(), "tags", ImagesConfig{Seed: 4, Subset: 4, MaxTags: 1})
	if fmt.Sprint(again) != fmt.Sprint(got) {
		t.Error("the same seed gave another corpus")
	}
	if all, desc := reshape(mk(), "tags", ImagesConfig{}); len(all) != 10 || len(all[0].doc.Tags) != 3 || desc != "tags" {
		t.Errorf("no reshaping asked, got %d images, %v, %q", len(all), all[0].doc.Tags, desc)
	}
}

// Each method of the grid is one strategy, and a configuration is listed
// once: the registry's fixed strategies are the rows above, not again
// among "every other learner".
func TestGridListsEachConfigurationOnce(t *testing.T) {
	strategy := map[string]string{}
	seen := map[string]bool{}
	for _, c := range grid(false) {
		if s, ok := strategy[c.method]; ok && s != c.strategy {
			t.Errorf("method %s runs %s and %s", c.method, s, c.strategy)
		}
		strategy[c.method] = c.strategy
		key := c.method + " " + c.params
		if seen[key] {
			t.Errorf("%s listed twice", key)
		}
		seen[key] = true
	}
	for _, fixed := range []string{"text", "linear", "poly", "rbf", "intersection"} {
		if strategy[fixed] != fixed {
			t.Errorf("method %s: strategy %q", fixed, strategy[fixed])
		}
	}
}
