package rerank

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	_ "github.com/kernelrank/kernelrank/learners/kit/all" // every plug-in, to check each one's applicability
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
	"gonum.org/v1/gonum/mat"
)

func init() { learnertest.RegisterPanicking() }

func TestLearnerPanicIsAnError(t *testing.T) {
	p, err := NewPlan(Options{Strategy: "test-panic"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = p.rerankAll(context.Background(), lookalikes())
	var pe *PanicError
	if !errors.As(err, &pe) || !strings.Contains(pe.Error(), "insufficient length") || !strings.Contains(string(pe.Stack), "panicking.Fit") {
		t.Fatalf("error %v, want a PanicError with the panic and its stack", err)
	}
	if _, _, err := Kernel(context.Background(), lookalikes(), "test-panic", nil); !errors.As(err, &pe) {
		t.Fatalf("Kernel: error %v, want a PanicError", err)
	}
}

// Which learners can re-rank a search follows from their kind and needs,
// and one that cannot is refused with the reason.
func TestLearnerApplicability(t *testing.T) {
	can := map[string]bool{"hsicnpk": true, "npk-fused": true, "alignf": true, "uniform": true, "umkl": true, "influence-mkl": true, "test-panic": true,
		"raw": true, "text": true, "linear": true, "poly": true, "rbf": true, "intersection": true}
	withoutFeatures := map[string]bool{"raw": true, "text": true}
	for _, s := range learners.Specs() {
		a := LearnerApplicability(s, true)
		if a.Rerank != can[s.Name] || a.Rerank == (a.Reason != "") {
			t.Errorf("%s: %+v, want rerank %v with a reason when false", s.Name, a, can[s.Name])
			continue
		}
		_, err := NewPlan(Options{Strategy: s.Name})
		if a.Rerank != (err == nil) || err != nil && !strings.Contains(err.Error(), a.Reason) {
			t.Errorf("%s: NewPlan error %v, want it to give the reason %q", s.Name, err, a.Reason)
		}
		if LearnerApplicability(s, false).Rerank != withoutFeatures[s.Name] {
			t.Errorf("%s: re-ranks a corpus without visual features: %v, want %v", s.Name, !withoutFeatures[s.Name], withoutFeatures[s.Name])
		}
	}
	for want, name := range map[string]string{"needs labels": "lpmkl", "needs pairs": "simplenpkl", "outputs embedding": "spe", "outputs scorer": "mklr"} {
		s, _ := learners.Lookup(name)
		if r := LearnerApplicability(s, true).Reason; !strings.Contains(strings.ReplaceAll(r, "it ", ""), want) {
			t.Errorf("%s: reason %q, want %q", name, r, want)
		}
	}
	if got, want := Strategies(), []string{"intersection", "linear", "poly", "raw", "rbf", "text"}; !slices.Equal(got, want) {
		t.Errorf("Strategies() = %v, want the fixed plug-ins %v", got, want)
	}
}

// Histogram intersection re-ranks features of any sign (the demo's), and is
// unchanged on non-negative ones.
func TestIntersectionOnNegativeFeatures(t *testing.T) {
	cands := lookalikes()
	k, _, err := Kernel(context.Background(), cands, "intersection", nil)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := Visual(cands)
	want, _ := kernelmath.HistogramIntersection(x) // the lookalikes are non-negative
	if !mat.EqualApprox(k, want, 1e-12) {
		t.Fatal("intersection changed on non-negative features")
	}
	for i := range cands {
		v := append([]float64(nil), cands[i].Visual...)
		v[0] -= 10
		cands[i].Visual = v
	}
	shifted, _, err := Kernel(context.Background(), cands, "intersection", nil)
	if err != nil {
		t.Fatalf("negative features: %v", err)
	}
	if r, _ := shifted.Dims(); r != len(cands) {
		t.Fatalf("kernel of %d candidates, want %d", r, len(cands))
	}
}

func TestCostAndLowRank(t *testing.T) {
	plan := func(strategy, params string) *Plan {
		t.Helper()
		p, err := NewPlan(Options{Strategy: strategy, Params: json.RawMessage(params)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	npk, low, poly, raw := plan("npk", ""), plan("npk", `{"rank":30}`), plan("poly", ""), plan("raw", "")
	for _, c := range []struct {
		p         *Plan
		n         int
		expensive bool
	}{{npk, 200, true}, {npk, 50, false}, {low, 200, false}, {low, 1000, true}, {poly, 200, false}, {poly, 1000, true}, {raw, 1000, false}} {
		if got := c.p.Expensive(c.n, 297); got != c.expensive {
			t.Errorf("%s %s at n = %d: expensive %v (cost %.3g)", c.p.Options().Strategy, c.p.Params(), c.n, got, c.p.Cost(c.n, 297))
		}
	}
	if !npk.RankAbove(30) || low.RankAbove(30) || !low.RankAbove(29) || poly.RankAbove(30) || !plan("npk-fused", "").RankAbove(30) {
		t.Fatal("RankAbove: only the learners with a rank parameter, at 0 or above")
	}
	fell, err := npk.LowRank(30)
	if err != nil || fell.Params() != low.Params() || fell.RankAbove(30) || fell.Options().Strategy != "npk" {
		t.Fatalf("npk.LowRank(30): %v %v, want the plan of rank 30", fell.Params(), err)
	}
	if same, _ := poly.LowRank(30); same != poly {
		t.Error("poly has no low-rank form: LowRank must return it as it is")
	}
	if high, _ := plan("npk", `{"rank":500}`).LowRank(30); high.Params() != low.Params() {
		t.Errorf("rank 500 lowered to 30: %s, want %s", high.Params(), low.Params())
	}
}
