package twolayer_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
	"github.com/kernelrank/kernelrank/learners/twolayer"
)

// BenchmarkFitIonosphere times one fit of each two-layer learner on one
// split of ionosphere (the thesis' protocol: 175 training points, the
// other 176 unlabelled, C = 100): twolayer on the 455 unit-trace base
// kernels of kernelmath.MKLBaseKernels, twolayer-inf from the 13 on all
// features, as in the thesis. Kernel construction is not timed.
func BenchmarkFitIonosphere(b *testing.B) {
	x, y := learnertest.LIBSVMSet(b, "ionosphere_scale")
	s := learnertest.NewMKLSplit(x, y, 0)
	for _, name := range []string{twolayer.Name, twolayer.NameInf} {
		in := &learners.Input{Kernels: s.Kernels, Labels: s.Labels, Features: s.Features}
		if name == twolayer.NameInf {
			in.Kernels = s.Kernels[:13]
		}
		b.Run(name, func(b *testing.B) {
			l, _, err := learners.New(name, json.RawMessage(`{"c": 100}`))
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
