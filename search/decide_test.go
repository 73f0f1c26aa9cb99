package search

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/cache"
	"github.com/kernelrank/kernelrank/index"
	"github.com/kernelrank/kernelrank/internal/cputime"
	"github.com/kernelrank/kernelrank/internal/metrics"
	"github.com/kernelrank/kernelrank/search/decision"
)

// decisionIndex is a corpus of two kinds of query, 12 of each, where the
// right re-ranker is known. An "aligned" query (its window 40) has 10
// relevant images that look alike (one cluster of visual vectors) but
// carry three other tags, so the text stage ranks them last, behind 30
// irrelevant images tagged with the query alone whose looks are random: a
// visual re-ranker lifts the cluster (P@10 1), the text order has none of
// it (0). A "tagged" query (window 60) is the reverse: its 10 relevant
// images carry the query alone and look random, its 50 irrelevant ones
// carry other tags and look alike: the text order is right (1), a visual
// re-ranker lifts the wrong cluster. Neither choice alone is right on
// both kinds; the window's size tells them apart.
func decisionIndex(t *testing.T) (*index.Index, []LabelledQuery) {
	rng := rand.New(rand.NewPCG(7, 11))
	const dim = 8
	random := func() []float32 {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		return v
	}
	cluster := func(base []float32) []float32 {
		v := make([]float32, dim)
		for j := range v {
			v[j] = base[j] + float32(0.3*rng.NormFloat64())
		}
		return v
	}
	var docs []index.Doc
	var queries []LabelledQuery
	add := func(q string, n int, relevant bool, tags []string, look func() []float32) {
		for i := range n {
			id := fmt.Sprintf("%s-%v-%d", q, relevant, i)
			docs = append(docs, index.Doc{ID: id, Tags: append([]string{q}, tags...), Features: look()})
			if relevant {
				queries[len(queries)-1].Relevant[id] = true
			}
		}
	}
	for k := range 24 {
		aligned := k%2 == 0
		q := fmt.Sprintf("tagged%02d", k)
		if aligned {
			q = fmt.Sprintf("aligned%02d", k)
		}
		queries = append(queries, LabelledQuery{Query: q, Relevant: map[string]bool{}})
		base := random()
		for j := range base {
			base[j] *= 3
		}
		alike := func() []float32 { return cluster(base) }
		others := []string{q + "x", q + "y", q + "z"}
		if aligned {
			add(q, 10, true, others, alike)
			add(q, 30, false, nil, random)
		} else {
			add(q, 10, true, nil, random)
			add(q, 50, false, others, alike)
		}
	}
	return indexDocs(t, docs), queries
}

// precisionOf is the P@10 of a request's ranking against relevant.
func precisionOf(r Result, relevant map[string]bool) float64 {
	ranked := make([]bool, len(r.Results))
	for i, h := range r.Results {
		ranked[i] = relevant[h.ID]
	}
	return metrics.PrecisionAt(ranked, SelectCutoff)
}

func TestDecisionFollowsTheWindow(t *testing.T) {
	ix, queries := decisionIndex(t)
	c, err := cache.NewMemory(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e := New(ix, cache.NewLoader(c, nil), Options{Window: 200})
	// Fitted on half of each kind, checked on the other half.
	var val, held []LabelledQuery
	for i, q := range queries {
		if i < 12 {
			val = append(val, q)
		} else {
			held = append(held, q)
		}
	}
	// Without validation nothing is decided (the golden rankings pin the
	// rankings themselves).
	if r, err := e.Search(t.Context(), DefaultRequest(val[0].Query)); err != nil || e.Decision() != nil || r.Rerank.Decision != nil {
		t.Fatalf("before any validation: rule %+v, decision %+v, %v", e.Decision(), r.Rerank.Decision, err)
	}
	sel, err := e.SelectDefault(t.Context(), val)
	if err != nil {
		t.Fatal(err)
	}
	rule := e.Decision()
	if rule == nil || !rule.Adopted || rule.Switched != 6 || rule.Alternative == nil {
		t.Fatalf("selection %s (%s); rule %+v: want one adopted, switching the 6 queries of one kind", sel.Strategy, sel.Reason, rule)
	}
	if rule.Served.Strategy != sel.Strategy || string(rule.Served.Params) != string(sel.Params) {
		t.Errorf("rule serves %s, the selection chose %s%s", rule.Served, sel.Strategy, sel.Params)
	}
	// The single choice alone is wrong on one kind of query: the test
	// needs the decision.
	if sel.Precision[0].Precision == 1 || sel.Precision[len(sel.Precision)-1].Precision != 0.5 {
		t.Fatalf("validation P@10 of the built-in default %.2f and of the text order %.2f, want below 1 and 0.5",
			sel.Precision[0].Precision, sel.Precision[len(sel.Precision)-1].Precision)
	}
	for _, q := range held {
		r, err := e.Search(t.Context(), DefaultRequest(q.Query))
		if err != nil {
			t.Fatal(err)
		}
		d := r.Rerank.Decision
		if d == nil || len(d.Signals) != 4 || d.Reason == "" || d.Strategy != r.Rerank.Strategy {
			t.Fatalf("%s: decision %+v, re-ranked by %s", q.Query, d, r.Rerank.Strategy)
		}
		if p := precisionOf(r, q.Relevant); p != 1 {
			t.Errorf("%s: P@10 %.1f with %s (%s), want 1", q.Query, p, d.Strategy, d.Reason)
		}
		want := 60.0
		if strings.HasPrefix(q.Query, "aligned") {
			want = 40
		}
		if d.Signals["window"] != want {
			t.Errorf("%s: window signal %g, want %g", q.Query, d.Signals["window"], want)
		}
		// Signals measures the window as the request did.
		sig, err := e.Signals(t.Context(), q)
		if err != nil || len(sig) != len(decision.Names) {
			t.Fatalf("%s: signals %v, %v", q.Query, sig, err)
		}
		for s, name := range decision.Names {
			if sig[s] != d.Signals[name] {
				t.Errorf("%s: Signals %s %g, the request measured %g", q.Query, name, sig[s], d.Signals[name])
			}
		}
		// The ranking cache keeps the decision with the ranking.
		again, err := e.Search(t.Context(), DefaultRequest(q.Query))
		if err != nil {
			t.Fatal(err)
		}
		if again.Rerank.Cache != cache.Hit || again.Rerank.Decision == nil || again.Rerank.Decision.Strategy != d.Strategy {
			t.Errorf("%s: repeated search %s, decision %+v", q.Query, again.Rerank.Cache, again.Rerank.Decision)
		}
		// A request that names its re-ranker is not decided.
		named := DefaultRequest(q.Query)
		named.Rerank.Strategy = "poly"
		if r, err := e.Search(t.Context(), named); err != nil || r.Rerank.Decision != nil {
			t.Errorf("%s with poly: decision %+v, %v", q.Query, r.Rerank.Decision, err)
		}
	}
	t.Logf("selection %s: %s; rule: %s; %s", sel.Strategy, sel.Reason, rule.Text, rule.Reason)
}

// BenchmarkDecisionSignals200 is what an adopted decision adds to a
// request: the signals of a Corel5k window of 200 (the text stage aside;
// cpu-ms/op is the process's CPU time, which counts the garbage
// collector's too).
func BenchmarkDecisionSignals200(b *testing.B) {
	e := New(corelIndex(b), nil, Options{})
	w, err := e.Candidates(b.Context(), "sky", 200, 1)
	if err != nil || len(w.Candidates) != 200 {
		b.Fatalf("window of %d: %v", len(w.Candidates), err)
	}
	b.ReportAllocs()
	start := cputime.Process() // CPU time: the machine is shared
	for b.Loop() {
		if decision.Measure(w.Candidates) == nil {
			b.Fatal("no signals")
		}
	}
	b.ReportMetric(float64((cputime.Process()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
