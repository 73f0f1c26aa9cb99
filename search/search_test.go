package search

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/rerank"
)

// testOptions keep the window small, so that npk fits one in milliseconds.
var testOptions = Options{Window: 60}

// skyImages is the number of Corel5k images with the keyword "sky"
// (counted in the ARFF, independently of the index).
const skyImages = 988

func TestEngineCacheMemory(t *testing.T) {
	c, err := cache.NewMemory(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	testEngineCache(t, c)
}

// stripped is r without what differs between a hit, a miss and the cache
// off: the timings, the cache statuses and the echoed query.
func stripped(r Result) Result {
	s := r
	s.Query, s.TextMS, s.TotalMS = "", 0, 0
	s.Rerank.KernelMS, s.Rerank.RankMS = 0, 0
	s.Rerank.Cache, s.Rerank.KernelCache = "", ""
	s.Trace = Trace{}
	return s
}

func resultIDs(r Result) []string {
	ids := make([]string, len(r.Results))
	for i, h := range r.Results {
		ids[i] = h.ID
	}
	return ids
}

// testEngineCache runs the engine's cache tests on c, which must be empty
// (on a shared server: under a fresh key prefix).
func testEngineCache(t *testing.T, c cache.Cache) {
	ctx := t.Context()
	ix := corelIndex(t)
	e := New(ix, cache.NewLoader(c, nil), testOptions)
	off := New(ix, nil, testOptions)
	counts := map[string]int64{}
	search := func(e *Engine, req Request, wantCache, wantKernel cache.Status) Result {
		t.Helper()
		resp, err := e.Search(ctx, req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		if e.ld != nil {
			q, _ := ix.NormalizeQuery(req.Query)
			counts[q]++
		}
		if resp.Rerank.Cache != wantCache || resp.Rerank.KernelCache != wantKernel {
			t.Fatalf("%+v: cache %q, kernel cache %q; want %q, %q", req, resp.Rerank.Cache, resp.Rerank.KernelCache, wantCache, wantKernel)
		}
		if resp.Query != req.Query {
			t.Errorf("query echoed as %q, want %q", resp.Query, req.Query)
		}
		return resp
	}

	// The default request: npk-fused, a learned kernel, cached apart
	// from the rankings (a fixed kernel's is computed, never cached: below).
	sky := DefaultRequest("sky")
	miss := search(e, sky, cache.Miss, cache.Miss)
	if miss.Total != skyImages || miss.Window != testOptions.Window || len(miss.Results) != DefaultK ||
		miss.Rerank.Strategy != rerank.DefaultStrategy || len(miss.Results[0].Voters) != DefaultVoters {
		t.Fatalf("default search: total %d, window %d, %d results, strategy %s, %d voters", miss.Total, miss.Window,
			len(miss.Results), miss.Rerank.Strategy, len(miss.Results[0].Voters))
	}
	hit := search(e, sky, cache.Hit, "")
	if hit.TextMS != 0 || hit.Rerank.KernelMS != 0 || hit.Rerank.RankMS != 0 {
		t.Errorf("a hit reports the miss's timings: text %v ms, kernel %v ms, rank %v ms", hit.TextMS, hit.Rerank.KernelMS, hit.Rerank.RankMS)
	}
	if !reflect.DeepEqual(stripped(hit), stripped(miss)) {
		t.Fatalf("hit differs from miss:\n%+v\n%+v", stripped(hit), stripped(miss))
	}
	// The same query in another form is the same request.
	// A query that needs escaping is echoed as given.
	search(e, DefaultRequest(`"Sky" <&> \`), cache.Hit, "")
	if again := search(e, DefaultRequest("  SKY sky "), cache.Hit, ""); !reflect.DeepEqual(stripped(again), stripped(miss)) {
		t.Errorf("equivalent query answered differently")
	}
	if o := search(off, sky, cache.Off, cache.Off); !reflect.DeepEqual(stripped(o), stripped(miss)) {
		t.Errorf("cache off answers differently:\n%+v\n%+v", stripped(o), stripped(miss))
	}
	// The facade runs the re-ranker's stages: the same results as
	// rerank's plan, kernel and ranking over the window (for a fixed
	// kernel, exactly: a learned one goes through the cache as float32).
	w, err := off.Candidates(ctx, "sky", testOptions.Window, 0)
	if err != nil {
		t.Fatal(err)
	}
	poly, err := rerank.NewPlan(rerank.Options{Strategy: "poly", Voters: DefaultVoters})
	if err != nil {
		t.Fatal(err)
	}
	win := poly.Split(w.Candidates)
	k, _, err := poly.Kernel(ctx, win)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := poly.Rank(k, win)
	polySky := sky
	polySky.Rerank.Strategy = "poly"
	for i, h := range search(off, polySky, cache.Off, cache.Off).Results {
		r := h.Result
		r.ID = h.ID // Hit's id, in JSON
		if h.Rank != i+1 || !reflect.DeepEqual(r, want[i]) || h.Tags == nil {
			t.Fatalf("result %d: %+v, want %+v", i, h, want[i])
		}
	}

	// npk: the kernel of a window is cached apart from its rankings.
	npk10 := sky
	npk10.K, npk10.Rerank.Strategy = 10, "npk"
	a := search(e, npk10, cache.Miss, cache.Miss)
	if a.Rerank.Learner == nil || a.Rerank.Learner.Iterations == 0 {
		t.Fatalf("npk learner stats %+v", a.Rerank.Learner)
	}
	npk5 := npk10
	npk5.K = 5
	b := search(e, npk5, cache.Miss, cache.Hit)
	if !reflect.DeepEqual(b.Results, a.Results[:5]) || !reflect.DeepEqual(b.Rerank.Learner, a.Rerank.Learner) {
		t.Errorf("k=5 from the cached kernel: %v (stats %+v), want the first 5 of %v (stats %+v)",
			resultIDs(b), b.Rerank.Learner, resultIDs(a), a.Rerank.Learner)
	}
	// The learner's objective may differ in its last bit between two fits
	// (the fit is not bitwise deterministic); the float32 kernel is.
	if o := search(off, npk5, cache.Off, cache.Off); !reflect.DeepEqual(o.Results, b.Results) || o.Rerank.Learner.Iterations != b.Rerank.Learner.Iterations {
		t.Errorf("npk with the cache off answers differently:\n%+v %+v\n%+v %+v", o.Results, o.Rerank.Learner, b.Results, b.Rerank.Learner)
	}
	textPrior := npk10
	textPrior.Rerank.Prior = "text"
	if tp := search(e, textPrior, cache.Miss, cache.Hit); reflect.DeepEqual(tp.Results, a.Results) {
		t.Errorf("the text prior changed nothing")
	}
	byName := npk10
	byName.Rerank.Strategy = "hsicnpk" // the same learner: the same kernel
	if h := search(e, byName, cache.Miss, cache.Hit); !reflect.DeepEqual(h.Results, a.Results) {
		t.Errorf("learner=hsicnpk ranks %v, npk %v", resultIDs(h), resultIDs(a))
	}
	lowRank := npk10
	lowRank.Rerank.Params = json.RawMessage(`{"rank":5}`)
	search(e, lowRank, cache.Miss, cache.Miss)
	lowRank.Rerank.Params = json.RawMessage(`{ "rank": 5.0 }`)
	search(e, lowRank, cache.Hit, "")

	// A corpus change misses; restoring the corpus finds the old entries.
	top := miss.Results[0].ID
	doc, _, err := ix.Get(top)
	if err != nil {
		t.Fatal(err)
	}
	feats, err := ix.Features([]string{top})
	if err != nil {
		t.Fatal(err)
	}
	doc.Features = feats[0]
	if err := ix.Delete([]string{top}); err != nil {
		t.Fatal(err)
	}
	del := search(e, sky, cache.Miss, cache.Miss)
	if del.Total != skyImages-1 || slices.Contains(resultIDs(del), top) {
		t.Errorf("after deleting %s: total %d, results %v", top, del.Total, resultIDs(del))
	}
	search(e, npk5, cache.Miss, cache.Miss)
	if err := ix.Add([]index.Doc{doc}); err != nil {
		t.Fatal(err)
	}
	if r := search(e, sky, cache.Hit, ""); !reflect.DeepEqual(stripped(r), stripped(miss)) {
		t.Errorf("the restored corpus answers differently")
	}

	// Bad input is an error of the request, and is not counted.
	for _, req := range []Request{
		DefaultRequest(" ?! "),
		{Query: "sky", K: -1},
		{Query: "sky", Rerank: rerank.Options{Strategy: "nope"}},
		{Query: "sky", Rerank: rerank.Options{Strategy: "npk", Params: json.RawMessage(`{"rank":-1}`)}},
		{Query: "sky", Rerank: rerank.Options{Prior: "zipf"}},
	} {
		if _, err := e.Search(ctx, req); !IsBadInput(err) {
			t.Errorf("%+v: %v, want a bad-input error", req, err)
		}
	}

	// The counts order the queries; Precompute stores their default and npk
	// rankings.
	search(e, DefaultRequest("water"), cache.Miss, cache.Miss)
	search(e, DefaultRequest("water"), cache.Hit, "")
	search(e, DefaultRequest("Water"), cache.Hit, "")
	raw := DefaultRequest("tree")
	raw.Rerank.Strategy = "raw"
	search(e, raw, cache.Miss, "") // no kernel
	raw.Rerank.Strategy = "text"
	search(e, raw, cache.Miss, cache.Off)
	search(e, polySky, cache.Miss, cache.Off) // a fixed kernel: computed, never cached
	tops, err := e.TopQueries(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	wantTop := []cache.Count{{Member: "sky", Count: counts["sky"]}, {Member: "water", Count: 3}, {Member: "tree", Count: 2}}
	if !reflect.DeepEqual(tops, wantTop) {
		t.Fatalf("TopQueries = %v, want %v", tops, wantTop)
	}
	var fractions []float64
	rep, err := e.Precompute(ctx, 2, func(stage string, f float64) {
		if stage != "rankings" {
			t.Errorf("progress stage %q", stage)
		}
		fractions = append(fractions, f)
	})
	if err != nil {
		t.Fatal(err)
	}
	// sky and water were searched with the defaults (cached); npk with the
	// defaults was not.
	if rep.Queries != 2 || rep.Rankings != 4 || rep.Cached != 2 || rep.Failed != 0 || !slices.Equal(fractions, []float64{0.5, 1}) {
		t.Errorf("Precompute: %+v, progress %v", rep, fractions)
	}
	for _, q := range []string{"sky", "water"} {
		req := DefaultRequest(q)
		req.Rerank.Strategy = "npk"
		search(e, req, cache.Hit, "")
	}
	if tops, _ := e.TopQueries(ctx, 1); len(tops) != 1 || tops[0] != (cache.Count{Member: "sky", Count: counts["sky"]}) {
		t.Errorf("precomputing counted queries: %v, want sky %d", tops, counts["sky"])
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Precompute(cancelled, 2, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Precompute: %v", err)
	}
}

func TestEngineWithoutCache(t *testing.T) {
	e := New(corelIndex(t), nil, testOptions)
	if _, err := e.TopQueries(t.Context(), 5); !errors.Is(err, ErrNoCache) {
		t.Errorf("TopQueries without a cache: %v", err)
	}
	if _, err := e.Precompute(t.Context(), 5, nil); !errors.Is(err, ErrNoCache) {
		t.Errorf("Precompute without a cache: %v", err)
	}
	// No match is no error: an empty list.
	r, err := e.Search(t.Context(), DefaultRequest("unicorn"))
	if err != nil || r.Total != 0 || r.Window != 0 || r.Results == nil || len(r.Results) != 0 || r.Rerank.Cache != cache.Off {
		t.Errorf("no match: %+v, %v", r, err)
	}
	// A window wider than k: k results; a k wider than the default window
	// widens it.
	req := DefaultRequest("sky")
	req.K = 100
	r, err = e.Search(t.Context(), req)
	if err != nil || r.Window != 100 || len(r.Results) != 100 {
		t.Errorf("k=100: window %d, %d results, %v", r.Window, len(r.Results), err)
	}
}

// Candidates carry their image's hash, so that two docs of the same image
// bytes are near-duplicates whatever their features: they vote as one and
// each result says so.
func TestSameImageBytesAreNearDuplicates(t *testing.T) {
	ix, err := index.Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	hash := strings.Repeat("ab", 32)
	docs := []index.Doc{
		{ID: "a1", Tags: []string{"cat"}, Features: []float32{1, 0, 0}, ImageSHA256: hash},
		{ID: "a2", Tags: []string{"cat"}, Features: []float32{0.9, 0.1, 0}, ImageSHA256: hash},
		{ID: "b", Tags: []string{"cat"}, Features: []float32{0, 1, 0}},
		{ID: "c", Tags: []string{"cat"}, Features: []float32{0, 0, 1}},
		{ID: "d", Tags: []string{"cat"}, Features: []float32{0, 1, 1}},
	}
	if err := ix.Add(docs); err != nil {
		t.Fatal(err)
	}
	e := New(ix, nil, testOptions)
	req := DefaultRequest("cat")
	req.Rerank.Strategy = "poly"
	r, err := e.Search(t.Context(), req)
	if err != nil || len(r.Results) != len(docs) {
		t.Fatalf("%+v, %v", r, err)
	}
	for _, h := range r.Results {
		if want := map[bool]int{true: 1}[h.ID == "a1" || h.ID == "a2"]; h.NearDuplicates != want {
			t.Errorf("%s: near_duplicates %d, want %d", h.ID, h.NearDuplicates, want)
		}
	}
}
