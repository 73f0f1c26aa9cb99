package search

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/rerank"
)

// topIDs is the first k ids strategy ranks for q.
func topIDs(t *testing.T, e *Engine, q, strategy string, k int) map[string]bool {
	t.Helper()
	req := DefaultRequest(q)
	req.K, req.Rerank.Strategy = k, strategy
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
		queries = append(queries, LabelledQuery{Query: q, Relevant: topIDs(t, e, q, "linear", SelectCutoff)})
	}
	sel, err := e.SelectDefault(t.Context(), queries)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Strategy != "linear" || e.DefaultStrategy() != "linear" || sel.Queries != 4 {
		t.Fatalf("selection %+v, default %s", sel, e.DefaultStrategy())
	}
	// A search job precomputes what the default request now runs.
	if got := e.PrecomputeStrategies(); !slices.Equal(got, []string{"linear", "npk"}) {
		t.Errorf("precomputing %v after the selection, want linear and npk", got)
	}
	var names []string
	for _, s := range sel.Precision {
		names = append(names, s.Strategy)
		want := 0.0
		for _, q := range queries {
			for id := range topIDs(t, e, q.Query, s.Strategy, SelectCutoff) {
				if q.Relevant[id] {
					want += 0.1 / float64(len(queries))
				}
			}
		}
		if d := s.Precision - want; d > 1e-12 || d < -1e-12 {
			t.Errorf("%s: precision %.4f, its overlap with the labels gives %.4f", s.Strategy, s.Precision, want)
		}
		if s.Strategy != "linear" && s.Precision >= 1 {
			t.Errorf("%s ranks linear's top 10 too: the test cannot tell them apart", s.Strategy)
		}
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

// The rule by hand: a gain counts when it is above SelectMargin standard
// errors of the per-query differences.
func TestPick(t *testing.T) {
	base := []float64{0.5, 0.5, 0.5, 0.5}
	noisy := []float64{0.6, 0.4, 0.6, 0.5}  // gains .1 -.1 .1 0: mean .025, se .0479
	steady := []float64{0.7, 0.7, 0.6, 0.7} // gains .2 .2 .1 .2: mean .175, se .025
	wild := []float64{1, 0, 1, 0.9}         // gains .5 -.5 .5 .4: mean .225, se .239
	for _, c := range []struct {
		names []string
		per   [][]float64
		want  string
	}{
		{[]string{"d", "noisy"}, [][]float64{base, noisy}, "d"},
		{[]string{"d", "noisy", "steady", "wild"}, [][]float64{base, noisy, steady, wild}, "steady"},
		{[]string{"d", "wild"}, [][]float64{base, wild}, "d"},
		{[]string{"d"}, [][]float64{base}, "d"},
	} {
		got, scored := pick(c.names, c.per)
		if got != c.want {
			t.Errorf("%v: chose %s, want %s (%+v)", c.names, got, c.want, scored)
		}
	}
	_, scored := pick([]string{"d", "steady"}, [][]float64{base, steady})
	if s := scored[1]; math.Abs(s.Gain-0.175) > 1e-12 || math.Abs(s.GainSE-0.025) > 1e-12 || math.Abs(s.Precision-0.675) > 1e-12 || scored[0].Gain != 0 {
		t.Errorf("scores %+v, want gain .175 with standard error .025, precision .675", scored)
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
