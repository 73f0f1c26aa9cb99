package mkl

import (
	"context"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
)

// BenchmarkSolve times the inner step that MKL^level and LpMKL repeat: the
// weighted sum of the 455 base kernels over the 175 labelled points of an
// ionosphere split, the SVM solve on it (C = 100) and the contraction
// q_t = b'K_t b over the support vectors, at uniform weights.
func BenchmarkSolve(b *testing.B) {
	x, y := learnertest.LIBSVMSet(b, "ionosphere_scale")
	s := learnertest.NewMKLSplit(x, y, 0)
	spec, _ := learners.Lookup(Level)
	v, err := learners.ParseParams(spec, []byte(`{"c": 100}`))
	if err != nil {
		b.Fatal(err)
	}
	f, err := newSupervised(v).setup(&learners.Input{Kernels: s.Kernels, Labels: s.Labels})
	if err != nil {
		b.Fatal(err)
	}
	theta := make([]float64, len(s.Kernels))
	for t := range theta {
		theta[t] = 1 / float64(len(theta))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.solve(context.Background(), theta); err != nil {
			b.Fatal(err)
		}
	}
}
