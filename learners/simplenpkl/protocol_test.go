package simplenpkl_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/kernelrank/kernelrank/internal/metrics"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/simplenpkl"
	"gonum.org/v1/gonum/mat"
)

// The clustering protocol of Table 3.2 (spec 3.10.1) on a fast subset: per
// repetition random pairs until 70% of the points are connected components,
// SimpleNPKL (square hinge loss, the learner's defaults: kNN graph on the
// standardised features, automatic C and capacity) on the raw features,
// kernel k-means with as many clusters as classes, pairwise accuracy;
// against kernel k-means on the linear kernel of the raw features (the
// thesis' k-means column). The thesis reports iris 97.4 (SHL) vs 84.5
// (k-means) and wine 85.0 vs 71.2. (With the raw wine features, where
// proline in the hundreds dominates the Euclidean kNN graph, SimpleNPKL did
// not beat k-means: 70% vs 72%.)
func TestTable32Protocol(t *testing.T) {
	const reps = 3
	for _, name := range []string{"iris", "wine_recognition"} {
		x, labels, classes := loadUCI(t, name)
		base := kernelmath.Linear(x)
		var accKM, accSHL float64
		for rep := 0; rep < reps; rep++ {
			seed := uint64(rep + 1)
			must, cannot, err := simplenpkl.SampleConstraints(labels, 0.7, seed, simplenpkl.AllPairs)
			if err != nil {
				t.Fatal(err)
			}
			km, err := kernelmath.KernelKMeans(context.Background(), base, classes, kernelmath.KMeansOptions{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			l, _, err := learners.New(simplenpkl.Name, nil)
			if err != nil {
				t.Fatal(err)
			}
			out, err := l.Fit(context.Background(), &learners.Input{Features: x, MustLink: must, CannotLink: cannot})
			if err != nil && !errors.Is(err, learners.ErrNotConverged) {
				t.Fatal(err)
			}
			kk, err := kernelmath.KernelKMeans(context.Background(), out.Kernel, classes, kernelmath.KMeansOptions{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			accKM += metrics.PairwiseAccuracy(labels, km.Labels) / reps
			accSHL += metrics.PairwiseAccuracy(labels, kk.Labels) / reps
		}
		t.Logf("%s (%d repetitions): pairwise accuracy kernel k-means %.1f%%, SimpleNPKL-SHL + kernel k-means %.1f%%", name, reps, 100*accKM, 100*accSHL)
		if accSHL < 0.9 || accSHL < accKM+0.05 {
			t.Fatalf("%s: SimpleNPKL-SHL %.3f does not beat kernel k-means %.3f clearly (thesis: iris 97.4 vs 84.5, wine 85.0 vs 71.2)", name, accSHL, accKM)
		}
	}
}

// The four losses on iris with the pairs of Table 3.2's protocol, at the
// thesis' values (B = 1, raw-feature graph; C = 0.3, the former default)
// and at the defaults. At B = 1 no margin T_ij K_ij comes near 1, so the
// hinge loss is the linear loss and the square hinge loss the square loss,
// to the last bit, and the square hinge kernel is within a few percent of
// the linear one. At the defaults the linear, hinge and square hinge
// kernels differ by tens of percent; the square hinge and square losses
// still coincide here, as no pair is over-met (see the package doc).
func TestLossesOnIris(t *testing.T) {
	x, labels, _ := loadUCI(t, "iris")
	must, cannot, err := simplenpkl.SampleConstraints(labels, 0.7, 1, simplenpkl.MustLinks)
	if err != nil {
		t.Fatal(err)
	}
	in := &learners.Input{Features: x, MustLink: must, CannotLink: cannot}
	fitAll := func(extra string) map[string]*learners.Output {
		outs := map[string]*learners.Output{}
		for _, loss := range []string{"linear", "hinge", "square-hinge", "square"} {
			l, _, err := learners.New(simplenpkl.Name, json.RawMessage(fmt.Sprintf(`{"loss": %q%s}`, loss, extra)))
			if err != nil {
				t.Fatal(err)
			}
			out, err := l.Fit(context.Background(), in)
			if err != nil {
				t.Fatalf("%s%s: %v", loss, extra, err)
			}
			outs[loss] = out
		}
		return outs
	}
	rel := func(a, b *learners.Output) float64 {
		var d mat.Dense
		d.Sub(a.Kernel, b.Kernel)
		return mat.Norm(&d, 2) / mat.Norm(b.Kernel, 2)
	}
	maxMargin := func(o *learners.Output) float64 {
		m := math.Inf(-1)
		for _, p := range must {
			m = math.Max(m, o.Kernel.At(p.I, p.J))
		}
		for _, p := range cannot {
			m = math.Max(m, -o.Kernel.At(p.I, p.J))
		}
		return m
	}
	spec := fitAll(`, "B": 1, "C": 0.3, "graph_input": "features"`)
	for loss, o := range spec {
		if m := maxMargin(o); m > 0.1 {
			t.Errorf("B = 1, %s: largest margin %g, want all far below 1", loss, m)
		}
	}
	if d := rel(spec["hinge"], spec["linear"]); d != 0 {
		t.Errorf("B = 1: hinge and linear kernels differ by %g, want equal", d)
	}
	if d := rel(spec["square-hinge"], spec["square"]); d != 0 {
		t.Errorf("B = 1: square hinge and square kernels differ by %g, want equal", d)
	}
	if d := rel(spec["square-hinge"], spec["linear"]); d < 1e-3 || d > 0.1 {
		t.Errorf("B = 1: square hinge vs linear kernel %g, want a few percent", d)
	}
	def := fitAll("")
	for _, c := range [][2]string{{"hinge", "linear"}, {"square-hinge", "linear"}, {"square-hinge", "hinge"}} {
		d := rel(def[c[0]], def[c[1]])
		t.Logf("defaults: %s vs %s kernels differ by %.3f (B = 1: %.2g)", c[0], c[1], d, rel(spec[c[0]], spec[c[1]]))
		if d < 0.1 {
			t.Errorf("defaults: %s and %s kernels differ by %g only", c[0], c[1], d)
		}
	}
	if d := rel(def["square-hinge"], def["square"]); d > 1e-6 {
		t.Errorf("defaults: square hinge and square kernels differ by %g; the package doc says no pair of iris is over-met", d)
	}
	for loss, o := range def {
		if !o.Stats.Converged {
			t.Errorf("defaults, %s: %+v", loss, o.Stats)
		}
	}
}
