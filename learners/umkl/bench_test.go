package umkl

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kernelrank/kernelrank/internal/dataset"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// ionosphere returns the UCI ionosphere set (PMLB copy, 351 x 34; feature
// 2 is constant), standardised, and its labels (0/1), skipping without the
// shared data.
func ionosphere(tb testing.TB) (*mat.Dense, []float64) {
	tb.Helper()
	dir, ok := dataset.DataDir()
	if !ok {
		tb.Skip("shared data not found (../shared/data or $KERNELRANK_SHARED_DATA): skipping the real-data test")
	}
	const rel = "uci/pmlb/ionosphere.tsv.gz"
	if err := dataset.VerifyMD5(dir, rel); err != nil {
		tb.Fatal(err)
	}
	rows, y, _, err := dataset.LoadPMLB(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		tb.Fatal(err)
	}
	x := mat.NewDense(len(rows), len(rows[0]), nil)
	for i, r := range rows {
		x.SetRow(i, r)
	}
	z, _, _ := kernelmath.Standardize(x)
	return z, y
}

// BenchmarkFitIonosphere times one fit with the defaults (gamma = 100,
// B = 10) on ionosphere with the spec's base kernels: 13 x 35 = 455
// unit-trace kernels over n = 351 points (kernel construction not timed).
func BenchmarkFitIonosphere(b *testing.B) {
	x, _ := ionosphere(b)
	in := &learners.Input{Kernels: kernelmath.MKLBaseKernels(x), Features: x}
	l := newLearner(b, ``)
	b.ReportAllocs()
	var out *learners.Output
	for b.Loop() {
		var err error
		if out, err = l.Fit(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
	nnz := 0
	for _, w := range out.Weights {
		if w > 0 {
			nnz++
		}
	}
	b.ReportMetric(float64(out.Stats.Iterations), "iters")
	b.ReportMetric(float64(nnz), "kernels")
}

// stepInput is a training half of ionosphere (its first 175 points, the
// 455 = 13 x 35 unit-trace base kernels over them) ready for the inner
// steps at mu = 1/m with the defaults (gamma = 100, B = 10).
func stepInput(b *testing.B) (*problem, []float64) {
	x, _ := ionosphere(b)
	n, _ := x.Dims()
	train := x.Slice(0, n/2, 0, x.RawMatrix().Cols).(*mat.Dense)
	in := &learners.Input{Kernels: kernelmath.MKLBaseKernels(train), Features: train}
	l := newLearner(b, ``)
	pr, err := newProblem(in, l.cfg)
	if err != nil {
		b.Fatal(err)
	}
	mu := make([]float64, pr.m)
	for t := range mu {
		mu[t] = 1 / float64(pr.m)
	}
	return pr, mu
}

// BenchmarkDStep times one D-step: the combined kernel and the greedy
// bases of all points (O(m n^2 + n^2 B)).
func BenchmarkDStep(b *testing.B) {
	pr, mu := stepInput(b)
	combined := make([]float64, pr.n*pr.n)
	b.ReportAllocs()
	for b.Loop() {
		pr.combine(mu, combined)
		pr.dstep(combined)
	}
}

// BenchmarkMuStep times one mu-step: gathering the basis kernel values,
// forming W = G'G and z (O(n B m^2)) and the exact simplex QP.
func BenchmarkMuStep(b *testing.B) {
	pr, mu := stepInput(b)
	combined := make([]float64, pr.n*pr.n)
	pr.combine(mu, combined)
	sets := pr.dstep(combined)
	q := mat.NewSymDense(pr.m, nil)
	b.ReportAllocs()
	for b.Loop() {
		kb := pr.gather(sets)
		w, z, err := pr.quadratic(sets, kb)
		if err != nil {
			b.Fatal(err)
		}
		q.ScaleSym(2, w)
		if _, _, err := kernelmath.SimplexQP(q, z, kernelmath.QPOptions{Start: mu}); err != nil {
			b.Fatal(err)
		}
	}
}
