package mkl_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
	"github.com/kernelrank/kernelrank/learners/mkl"
)

// BenchmarkFitIonosphere times one fit of each baseline on one split of
// ionosphere (the thesis' protocol: 175 training points, the other 176
// unlabelled, the 455 unit-trace base kernels of kernelmath.MKLBaseKernels
// over all 351, C = 100; kernel construction not timed).
func BenchmarkFitIonosphere(b *testing.B) {
	x, y := learnertest.LIBSVMSet(b, "ionosphere_scale")
	s := learnertest.NewMKLSplit(x, y, 0)
	in := &learners.Input{Kernels: s.Kernels, Labels: s.Labels}
	for _, name := range []string{mkl.Uniform, mkl.LpMKL, mkl.Level} {
		params := `{"c": 100}`
		if name == mkl.Uniform {
			params = ""
		}
		b.Run(name, func(b *testing.B) {
			l, _, err := learners.New(name, json.RawMessage(params))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var out *learners.Output
			for b.Loop() {
				if out, err = l.Fit(context.Background(), in); err != nil && !errors.Is(err, learners.ErrNotConverged) {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(out.Stats.Iterations), "iters")
		})
	}
}
