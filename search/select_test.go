package search

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/rerank"
)

// topIDs is the first k ids strategy with params ranks for q (strategy
// "": the engine's default request).
func topIDs(t *testing.T, e *Engine, q, strategy string, params json.RawMessage, k int) map[string]bool {
	t.Helper()
	req := DefaultRequest(q)
	req.K, req.Rerank.Strategy, req.Rerank.Params = k, strategy, params
	r, err := e.Search(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, h := range r.Results {
		ids[h.ID] = true
	}
	return ids
}

// The labels are linear's own top 10, so linear, last in the list, has
// precision 1 and must win over every candidate ranking another top 10;
// each candidate's precision is its overlap with that set.
func TestSelectDefaultChoosesTheBestOnValidation(t *testing.T) {
	e := New(corelIndex(t), nil, testOptions)
	if e.DefaultStrategy() != rerank.DefaultStrategy || !slices.Equal(e.PrecomputeStrategies(), []string{rerank.DefaultStrategy, "npk"}) {
		t.Fatalf("default before selection: %s, precomputing %v", e.DefaultStrategy(), e.PrecomputeStrategies())
	}
	if _, err := e.SelectDefault(t.Context(), nil); !errors.Is(err, ErrRequest) || e.DefaultStrategy() != rerank.DefaultStrategy {
		t.Fatalf("no queries: %v, default %s", err, e.DefaultStrategy())
	}
	var queries []LabelledQuery
	for _, q := range []string{"sky", "water", "tree", "people"} {
		queries = append(queries, LabelledQuery{Query: q, Relevant: topIDs(t, e, q, "linear", nil, SelectCutoff)})
	}
	sel, err := e.SelectDefault(t.Context(), queries)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Strategy != "linear" || sel.Params != nil || e.DefaultStrategy() != "linear" || sel.Queries != 4 {
		t.Fatalf("selection %+v, default %s", sel, e.DefaultStrategy())
	}
	// A search job precomputes what the default request now runs.
	if got := e.PrecomputeStrategies(); !slices.Equal(got, []string{"linear", "npk"}) {
		t.Errorf("precomputing %v after the selection, want linear and npk", got)
	}
	var names []string
	for _, s := range sel.Precision {
		names = append(names, s.Strategy)
	}
	settingsMeasured := 0
	for _, s := range sel.Settings {
		settingsMeasured++
		want := 0.0
		for _, q := range queries {
			for id := range topIDs(t, e, q.Query, s.Strategy, s.Params, SelectCutoff) {
				if q.Relevant[id] {
					want += 0.1 / float64(len(queries))
				}
			}
		}
		if d := s.Precision - want; d > 1e-12 || d < -1e-12 {
			t.Errorf("%s%s: precision %.4f, its overlap with the labels gives %.4f", s.Strategy, s.Params, s.Precision, want)
		}
		if s.Strategy != "linear" && s.Precision >= 1 {
			t.Errorf("%s ranks linear's top 10 too: the test cannot tell them apart", s.Strategy)
		}
	}
	if settingsMeasured != 2+1+2+1+6+1+1+1 {
		t.Errorf("%d settings measured, want 15 (npk-fused 2, npk, poly 2, intersection, rbf 6, linear, text, raw)", settingsMeasured)
	}
	if !strings.HasPrefix(sel.Reason, "linear: its validation P@10 (1.000) beats the built-in default's by") {
		t.Errorf("reason %q", sel.Reason)
	}
	if !slices.Equal(names, SelectCandidates) || len(sel.Skipped) != 0 {
		t.Errorf("candidates measured %v, skipped %v; want all of %v", names, sel.Skipped, SelectCandidates)
	}
	// A request naming no strategy now runs the chosen one; one naming a
	// strategy is unaffected.
	r, err := e.Search(t.Context(), DefaultRequest("sky"))
	if err != nil || r.Rerank.Strategy != "linear" {
		t.Errorf("default request after selection: %+v, %v", r.Rerank, err)
	}
	req := DefaultRequest("sky")
	req.Rerank.Strategy = "poly"
	if r, err := e.Search(t.Context(), req); err != nil || r.Rerank.Strategy != "poly" {
		t.Errorf("explicit poly after selection: %+v, %v", r.Rerank, err)
	}
}

// Labelled by the text order's own top 10, the validation queries show
// that no re-ranker helps: the default becomes raw, a default request
// answers in text order, and the selection says why.
func TestSelectDefaultServesTheTextOrder(t *testing.T) {
	e := New(corelIndex(t), nil, testOptions)
	var queries []LabelledQuery
	for _, q := range []string{"sky", "water", "tree", "people"} {
		queries = append(queries, LabelledQuery{Query: q, Relevant: topIDs(t, e, q, SelectBaseline, nil, SelectCutoff)})
	}
	sel, err := e.SelectDefault(t.Context(), queries)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Strategy != SelectBaseline || e.DefaultStrategy() != SelectBaseline {
		t.Fatalf("selection %s (%+v), default %s; want the text order", sel.Strategy, sel.Precision, e.DefaultStrategy())
	}
	for _, s := range sel.Precision {
		if s.Strategy != SelectBaseline && s.Precision >= 1 {
			t.Errorf("%s ranks the text order's top 10 too: the test cannot tell them apart", s.Strategy)
		}
	}
	if last := sel.Precision[len(sel.Precision)-1]; last.Strategy != SelectBaseline || last.Precision != 1 ||
		!strings.HasPrefix(sel.Reason, "the text order (raw): re-ranking does not help") {
		t.Errorf("text order scored %+v; reason %q", last, sel.Reason)
	}
	for _, q := range queries {
		r, err := e.Search(t.Context(), DefaultRequest(q.Query))
		if err != nil || r.Rerank.Strategy != SelectBaseline {
			t.Fatalf("%s: default request after selection: %+v, %v", q.Query, r.Rerank, err)
		}
		if got := topIDs(t, e, q.Query, "", nil, SelectCutoff); !maps.Equal(got, q.Relevant) {
			t.Errorf("%s: default top 10 %v, want the text order's %v", q.Query, got, q.Relevant)
		}
	}
}

// Labelled by the degree-3 rankings of npk-fused and of poly (both tops
// relevant), the validation queries make degree 3 the default's setting:
// within the default re-ranker a setting wins on its mean alone, here with
// its visual kernel alone agreeing (SelectAlone). The default request then
// runs it, while a request naming npk-fused gets its own defaults (degree
// 2), which rank another top 10. Labelled by npk-fused's degree-3 ranking
// alone, poly does not do best at degree 3 and the default stays at 2.
func TestSelectDefaultChoosesASetting(t *testing.T) {
	e := New(corelIndex(t), nil, testOptions)
	deg3 := json.RawMessage(`{"degree":3}`)
	words := []string{"sky", "water", "tree"}
	var queries, fusedOnly []LabelledQuery
	for _, q := range words {
		fused := topIDs(t, e, q, rerank.DefaultStrategy, deg3, SelectCutoff)
		both := maps.Clone(fused)
		maps.Copy(both, topIDs(t, e, q, "poly", deg3, SelectCutoff))
		queries = append(queries, LabelledQuery{Query: q, Relevant: both})
		fusedOnly = append(fusedOnly, LabelledQuery{Query: q, Relevant: fused})
	}
	sel, err := e.SelectDefault(t.Context(), queries)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Strategy != rerank.DefaultStrategy || string(sel.Params) != string(deg3) || sel.Precision[0].Precision != 1 {
		t.Fatalf("selection %s%s (%+v), want %s%s at precision 1", sel.Strategy, sel.Params, sel.Precision, rerank.DefaultStrategy, deg3)
	}
	if sel.Settings[0].Precision >= 1 {
		t.Fatalf("degree 2 ranks degree 3's top 10 too: the test cannot tell them apart")
	}
	same := 0
	for _, q := range fusedOnly {
		if got := topIDs(t, e, q.Query, "", nil, SelectCutoff); !maps.Equal(got, q.Relevant) {
			t.Errorf("%s: the default request's top 10 %v, want degree 3's %v", q.Query, got, q.Relevant)
		}
		if maps.Equal(topIDs(t, e, q.Query, rerank.DefaultStrategy, nil, SelectCutoff), q.Relevant) {
			same++
		}
	}
	if same == len(queries) {
		t.Errorf("a request naming %s ran the selected degree 3", rerank.DefaultStrategy)
	}
	sel, err = e.SelectDefault(t.Context(), fusedOnly)
	if err != nil {
		t.Fatal(err)
	}
	if fused, poly := sel.Settings[1], sel.Precision[2]; sel.Strategy != rerank.DefaultStrategy || string(sel.Params) != `{"degree":2}` ||
		fused.Precision != 1 || string(poly.Params) == string(deg3) {
		t.Errorf("labelled by npk-fused alone: selection %s%s, npk-fused at degree 3 %.3f, poly's setting %s; want degree 2, 1, degree 2",
			sel.Strategy, sel.Params, fused.Precision, poly.Params)
	}
}

// The rule by hand: a gain counts when it is above SelectMargin standard
// errors of the per-query differences.
func TestPick(t *testing.T) {
	base := []float64{0.5, 0.5, 0.5, 0.5}
	noisy := []float64{0.6, 0.4, 0.6, 0.5}  // gains .1 -.1 .1 0: mean .025, se .0479
	steady := []float64{0.7, 0.7, 0.6, 0.7} // gains .2 .2 .1 .2: mean .175, se .025
	wild := []float64{1, 0, 1, 0.9}         // gains .5 -.5 .5 .4: mean .225, se .239
	one := func(name string, per []float64) candidate {
		return candidate{strategy: name, params: []json.RawMessage{nil}, per: [][]float64{per}}
	}
	for _, c := range []struct {
		cands []candidate
		want  string
	}{
		{[]candidate{one("d", base), one("noisy", noisy)}, "d"},
		{[]candidate{one("d", base), one("noisy", noisy), one("steady", steady), one("wild", wild)}, "steady"},
		{[]candidate{one("d", base), one("wild", wild)}, "d"},
		{[]candidate{one("d", base)}, "d"},
	} {
		if got, _, _ := pick(c.cands); got.Strategy != c.want || got.Params != nil {
			t.Errorf("%+v: chose %+v, want %s", c.cands, got, c.want)
		}
	}
	// The text order is served unless the choice beats it beyond the
	// margin too.
	for _, c := range []struct {
		cands []candidate
		want  string
	}{
		{[]candidate{one("d", base), one(SelectBaseline, noisy)}, SelectBaseline},
		{[]candidate{one("d", base), one(SelectBaseline, base)}, SelectBaseline},
		{[]candidate{one("d", noisy), one(SelectBaseline, base)}, SelectBaseline},
		{[]candidate{one("d", steady), one(SelectBaseline, base)}, "d"},
		{[]candidate{one("d", base), one("steady", steady), one(SelectBaseline, noisy)}, "steady"},
		{[]candidate{one("d", base), one("noisy", noisy), one(SelectBaseline, noisy)}, SelectBaseline},
	} {
		if got, best, _ := pick(c.cands); got.Strategy != c.want || len(reason(got, best)) == 0 {
			t.Errorf("%+v: chose %+v, want %s", c.cands, got, c.want)
		}
	}
	_, best, all := pick([]candidate{one("d", base), one("steady", steady)})
	if s := best[1]; math.Abs(s.Gain-0.175) > 1e-12 || math.Abs(s.GainSE-0.025) > 1e-12 || math.Abs(s.Precision-0.675) > 1e-12 || best[0].Gain != 0 || len(all) != 2 || all[1].Gain != s.Gain || all[1].Strategy != "steady" {
		t.Errorf("scores %+v (all %+v), want gain .175 with standard error .025, precision .675", best, all)
	}
}

// Within a candidate the setting of highest mean wins however small its
// gain, the first on a tie (unless SelectAlone holds it to its first);
// across candidates the margin still holds,
// measured from the default's chosen setting. The case of a corpus with one
// tag an image: npk-fused is its visual kernel, and degree 3 gains one image
// on one query over degree 2 (well within the noise), as it does for poly;
// intersection gains more over degree 2, still within two standard errors.
func TestPickSettings(t *testing.T) {
	d2 := []float64{0.8, 0.8, 0.9, 0.7, 0.8}
	d3 := []float64{0.8, 0.9, 0.9, 0.7, 0.8}    // +.02 over d2, se .02
	inter := []float64{0.9, 0.9, 0.8, 0.8, 0.9} // +.06 over d2, se .04; +.04 over d3, se .04
	far := []float64{1, 1, 1, 0.9, 1}           // +.16 over d3, se .024
	deg := []json.RawMessage{json.RawMessage(`{"degree":2}`), json.RawMessage(`{"degree":3}`)}
	fused := candidate{strategy: "npk-fused", params: deg, per: [][]float64{d2, d3}}
	poly := candidate{strategy: "poly", params: deg, per: [][]float64{d2, d3}}
	in := candidate{strategy: "intersection", params: []json.RawMessage{nil}, per: [][]float64{inter}}
	got, best, all := pick([]candidate{fused, poly, in})
	if got.Strategy != "npk-fused" || string(got.Params) != `{"degree":3}` || got.Gain != 0 {
		t.Errorf("chose %s%s (%+v), want npk-fused{\"degree\":3}", got.Strategy, got.Params, got)
	}
	if len(best) != 3 || len(all) != 5 || string(best[1].Params) != `{"degree":3}` || best[1].Gain != 0 ||
		math.Abs(all[0].Gain+0.02) > 1e-12 || math.Abs(best[2].Gain-0.04) > 1e-12 {
		t.Errorf("best %+v, all %+v", best, all)
	}
	// A tie keeps the first setting (the candidate's defaults).
	tied := candidate{strategy: "npk-fused", params: deg, per: [][]float64{d3, d3}}
	if got, _, _ := pick([]candidate{tied, poly, in}); string(got.Params) != `{"degree":2}` {
		t.Errorf("tie chose %s, want the first setting", got.Params)
	}
	// npk-fused leaves degree 2 only where poly alone does too (SelectAlone):
	// not where poly does best at degree 2, nor without poly measured.
	polyAt2 := candidate{strategy: "poly", params: deg, per: [][]float64{d3, d2}}
	for _, cands := range [][]candidate{{fused, polyAt2, in}, {fused, in}} {
		if got, best, _ := pick(cands); string(got.Params) != `{"degree":2}` || got.Strategy != "npk-fused" || math.Abs(best[0].Precision-0.8) > 1e-12 {
			t.Errorf("with %d candidates: chose %s%s (%+v), want npk-fused{\"degree\":2}", len(cands), got.Strategy, got.Params, best)
		}
	}
	// Beyond the margin, another candidate still wins, at its own best setting.
	rbf := candidate{strategy: "rbf", params: []json.RawMessage{json.RawMessage(`{"scale":1}`), json.RawMessage(`{"scale":0.1}`)}, per: [][]float64{d2, far}}
	if got, _, _ := pick([]candidate{fused, poly, in, rbf}); got.Strategy != "rbf" || string(got.Params) != `{"scale":0.1}` {
		t.Errorf("chose %s%s, want rbf{\"scale\":0.1}", got.Strategy, got.Params)
	}
}

// Every setting is valid for its candidate, the first is the candidate's
// own defaults (so a deployment whose queries cannot tell the settings
// apart serves the defaults), and every listed strategy is a candidate.
func TestSelectSettings(t *testing.T) {
	for strategy := range SelectSettings {
		if !slices.Contains(SelectCandidates, strategy) {
			t.Errorf("settings for %s, not a candidate", strategy)
		}
	}
	// A candidate held to a kernel's choices has that kernel's settings,
	// and the kernel is held to no other.
	for strategy, alone := range SelectAlone {
		if !slices.Equal(SelectSettings[strategy], SelectSettings[alone]) || !slices.Contains(SelectCandidates, alone) {
			t.Errorf("%s is held to %s's choice: settings %v and %v", strategy, alone, SelectSettings[strategy], SelectSettings[alone])
		}
		if _, ok := SelectAlone[alone]; ok {
			t.Errorf("%s is held to %s, which is held to another", strategy, alone)
		}
	}
	for _, strategy := range SelectCandidates {
		def, err := rerank.NewPlan(rerank.Options{Strategy: strategy})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for i, params := range settings(strategy) {
			p, err := rerank.NewPlan(rerank.Options{Strategy: strategy, Params: params})
			if err != nil {
				t.Fatalf("%s %s: %v", strategy, params, err)
			}
			if (i == 0) != (p.Params() == def.Params()) {
				t.Errorf("%s setting %d %s: canonical %s, defaults %s", strategy, i, params, p.Params(), def.Params())
			}
			if seen[p.Params()] {
				t.Errorf("%s: setting %s twice", strategy, params)
			}
			seen[p.Params()] = true
		}
	}
}

func TestReadValidation(t *testing.T) {
	qs, err := ReadValidation(strings.NewReader("{\"q\": \"sky\", \"relevant\": [\"a\", \"b\"]}\n\n{\"q\":\"sea\",\"relevant\":[\"c\"]}\n"))
	if err != nil || len(qs) != 2 || qs[0].Query != "sky" || !qs[0].Relevant["a"] || !qs[0].Relevant["b"] || len(qs[1].Relevant) != 1 {
		t.Fatalf("%+v, %v", qs, err)
	}
	for _, bad := range []struct{ in, want string }{
		{`{"q": "sky"}`, "line 1: needs"},
		{"\n{\"q\": \"\", \"relevant\": [\"a\"]}", "line 2: needs"},
		{`{"q": "sky", "relevant": ["a"], "rel": 1}`, `unknown field "rel"`},
		{`{"q": "sky", "relevant": "a"}`, "line 1"},
		{`not json`, "line 1"},
	} {
		_, err := ReadValidation(strings.NewReader(bad.in))
		if !errors.Is(err, ErrRequest) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want ErrRequest saying %q", bad.in, err, bad.want)
		}
	}
}
