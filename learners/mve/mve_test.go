package mve

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/kit/npkl"
	"gonum.org/v1/gonum/mat"
)

func newLearner(t *testing.T, params string) *Learner {
	t.Helper()
	l, _, err := learners.New(Name, json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	return l.(*learners.Resolved).Plugin().(*Learner)
}

func TestRegistered(t *testing.T) {
	s, ok := learners.Lookup(Name)
	if !ok || s.Kind != learners.KindEmbedding || s.Needs != learners.NeedKernels {
		t.Fatalf("spec %+v", s)
	}
	want := config{c: 3, budget: 10, k: 5, dim: 2, maxIter: 100, outer: 20, tol: 1e-4, solver: npkl.Auto, seed: 1}
	if got := newLearner(t, "").cfg; got != want {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
}

// spiral returns n points on one turn of the spiral r = t, t in [pi, 3 pi],
// in order along the curve.
func spiral(n int) *mat.Dense {
	x := mat.NewDense(n, 2, nil)
	for i := 0; i < n; i++ {
		t := math.Pi + 2*math.Pi*float64(i)/float64(n-1)
		x.Set(i, 0, t*math.Cos(t))
		x.Set(i, 1, t*math.Sin(t))
	}
	return x
}

// monotone reports whether v is strictly increasing or strictly decreasing.
func monotone(v []float64) bool {
	up, down := true, true
	for i := 1; i < len(v); i++ {
		up = up && v[i] > v[i-1]
		down = down && v[i] < v[i-1]
	}
	return up || down
}

// spearman is the rank correlation of v with its index.
func spearman(v []float64) float64 {
	n := len(v)
	s := 0.0
	for i := range v {
		r := 0
		for j := range v {
			if v[j] < v[i] {
				r++
			}
		}
		s += float64((r - i) * (r - i))
	}
	return 1 - 6*s/float64(n*(n*n-1))
}

// The spiral unfolds: the first MVE coordinate is monotone along the curve,
// where the first KPCA coordinate (the top eigenvector of the centred input
// kernel) is not (rank correlation 0.5).
func TestUnfoldsSpiral(t *testing.T) {
	for _, n := range []int{60, 100} {
		in := &learners.Input{Kernels: []*mat.SymDense{kernelmath.Linear(spiral(n))}}
		out, err := newLearner(t, "").Fit(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		kpca, err := npkl.Embed(in.Kernels[0], 2)
		if err != nil {
			t.Fatal(err)
		}
		first, base := mat.Col(nil, 0, out.Embedding), mat.Col(nil, 0, kpca)
		t.Logf("n = %d: %+v; rank correlation with the position on the curve: MVE %.4f, KPCA %.4f", n, out.Stats, spearman(first), spearman(base))
		if spearman(first) < 0.999 || n == 60 && !monotone(first) || monotone(base) || math.Abs(spearman(base)) > 0.6 {
			t.Fatalf("n = %d: MVE first coordinate monotone %v, KPCA monotone %v", n, monotone(first), monotone(base))
		}
	}
}

// topFraction is the share of the d largest eigenvalues in the trace of the centred kernel.
func topFraction(k *mat.SymDense, d int) float64 {
	vals, _, err := kernelmath.Eigen(kernelmath.Center(k))
	if err != nil {
		panic(err)
	}
	top, all := 0.0, 0.0
	for i, v := range vals {
		all += math.Max(v, 0)
		if i >= len(vals)-d {
			top += math.Max(v, 0)
		}
	}
	return top / all
}

// Anisotropic 5-D Gaussian data: MVE concentrates the variance in the
// first two dimensions far more than KPCA (whose share is that of the
// input), and its outer iterations never decrease the inner objective
// tr(K K0) - C/2 sum xi^2 (to the inner tolerance): K_t is feasible for the
// next problem, whose K0, built from K_t's eigenvectors, maximises tr(K_t K0).
func TestConcentratesVariance(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := mat.NewDense(80, 5, nil)
	for i := 0; i < 80; i++ {
		for j := 0; j < 5; j++ {
			x.Set(i, j, r.NormFloat64()*float64(5-j))
		}
	}
	in := &learners.Input{Kernels: []*mat.SymDense{kernelmath.Linear(x)}}
	l := newLearner(t, "")
	prev := math.Inf(-1)
	l.trace = func(outer int, res *npkl.Result, _ float64) {
		obj := -res.Stats.Objective
		if obj < prev-2*l.cfg.tol*math.Abs(prev) {
			t.Errorf("outer iteration %d: the objective fell from %g to %g", outer, prev, obj)
		}
		prev = obj
	}
	out, err := l.Fit(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	mve, kpca := topFraction(out.Kernel, 2), topFraction(in.Kernels[0], 2)
	t.Logf("variance in the top 2 dimensions: MVE %.3f, KPCA %.3f (%+v)", mve, kpca, out.Stats)
	if mve < 0.95 || kpca > 0.8 {
		t.Fatalf("MVE %.3f (want >= 0.95), KPCA %.3f", mve, kpca)
	}
	if r, c := out.Embedding.Dims(); r != 80 || c != 2 {
		t.Fatalf("embedding %d x %d", r, c)
	}
}

// Points already on a line keep their shape: the embedding is the line
// (distances preserved up to the budget's scale), with the variance all in
// the first coordinate.
func TestLine(t *testing.T) {
	x := mat.NewDense(20, 3, nil)
	for i := 0; i < 20; i++ {
		s := float64(i) + 0.3*math.Sin(float64(i))
		x.Set(i, 0, s)
		x.Set(i, 1, 2*s)
		x.Set(i, 2, -s)
	}
	out, err := newLearner(t, "").Fit(context.Background(), &learners.Input{Kernels: []*mat.SymDense{kernelmath.Linear(x)}})
	if err != nil {
		t.Fatal(err)
	}
	if !monotone(mat.Col(nil, 0, out.Embedding)) || topFraction(out.Kernel, 1) < 0.999 {
		t.Fatalf("a line did not stay a line: first coordinate %v", mat.Col(nil, 0, out.Embedding))
	}
}
