// Package fixed registers the re-rank strategies that learn nothing: raw
// (the text order as it is), text (the tag kernel itself) and the fixed
// visual kernels of the thesis' Table 6.3 (linear, poly, rbf) with
// histogram intersection. They are plug-ins like the learners, so that one
// registry lists every re-ranker with its parameters and the contract suite
// covers them; Spec.Fixed tells a cache not to keep their kernels, which
// cost less to compute than to fetch (search's BenchmarkKernel200;
// docs/evaluation.md).
package fixed

import (
	"context"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// The registered names.
const (
	Raw          = "raw"
	Text         = "text"
	Linear       = "linear"
	Poly         = "poly"
	RBF          = "rbf"
	Intersection = "intersection"
)

// kernel is a fixed kernel of the input: f applied to it once validated.
type kernel struct {
	needs learners.Needs
	f     func(in *learners.Input) (*mat.SymDense, error)
}

var _ learners.Learner = (*kernel)(nil)

func (k kernel) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := &learners.Output{Stats: learners.Stats{Converged: true}}
	if k.f == nil { // raw
		return out, nil
	}
	var err error
	out.Kernel, err = k.f(in)
	return out, err
}

func register(name string, kind learners.Kind, needs learners.Needs, doc string, params []learners.Param,
	f func(in *learners.Input, v learners.Values) (*mat.SymDense, error)) {
	learners.Register(learners.Spec{
		Name: name, Kind: kind, Doc: doc, Needs: needs, Params: params, Fixed: true,
		New: func(v learners.Values) (learners.Learner, error) {
			k := kernel{needs: needs}
			if f != nil {
				k.f = func(in *learners.Input) (*mat.SymDense, error) { return f(in, v) }
			}
			return k, nil
		},
	})
}

func init() {
	register(Raw, learners.KindOrder, 0,
		"No re-ranking: the text stage's order as it is.", nil, nil)
	register(Text, learners.KindKernel, learners.NeedTarget,
		"The tag kernel (the target: linear in the candidates' tf-idf tag vectors) as it is, so VisualRank votes by shared tags alone.",
		nil, func(in *learners.Input, _ learners.Values) (*mat.SymDense, error) {
			return mat.NewSymDense(in.Target.SymmetricDim(), append([]float64(nil), in.Target.RawSymmetric().Data...)), nil
		})
	register(Linear, learners.KindKernel, learners.NeedFeatures,
		"Linear kernel x.y of the visual features.",
		nil, func(in *learners.Input, _ learners.Values) (*mat.SymDense, error) {
			return kernelmath.Linear(in.Features), nil
		})
	register(Poly, learners.KindKernel, learners.NeedFeatures,
		"Polynomial kernel (c + x.y)^d of the visual features.",
		[]learners.Param{
			learners.Int("degree", 2, 1, 10, "polynomial degree d in (c + x.y)^d"),
			learners.Float("c", 1, 0, 1e6, "offset c in (c + x.y)^d"),
		}, func(in *learners.Input, v learners.Values) (*mat.SymDense, error) {
			return kernelmath.Polynomial(in.Features, v.Int("degree"), v.Float("c")), nil
		})
	register(RBF, learners.KindKernel, learners.NeedFeatures,
		"Gaussian kernel exp(-||x-y||^2/sigma) of the visual features, sigma a multiple of their mean squared distance.",
		[]learners.Param{learners.Positive("scale", 1, "sigma in exp(-||x-y||^2/sigma) as a multiple of the mean squared distance among the points")},
		func(in *learners.Input, v learners.Values) (*mat.SymDense, error) {
			sigma := v.Float("scale") * kernelmath.MeanOffDiagonal(kernelmath.SqDistances(in.Features))
			if sigma == 0 {
				sigma = 1 // all points identical: every affinity is 1
			}
			return kernelmath.RBF(in.Features, sigma), nil
		})
	register(Intersection, learners.KindKernel, learners.NeedFeatures,
		"Histogram intersection sum_f min(x_f, y_f) of the visual features, each point's scaled to sum 1; a column with negative entries is first shifted by its minimum over the points.",
		nil, func(in *learners.Input, _ learners.Values) (*mat.SymDense, error) {
			return kernelmath.HistogramIntersection(nonNegative(in.Features))
		})
}

// nonNegative returns x with every column that has a negative entry shifted
// by its minimum over the points, so that histogram intersection applies to
// features of any sign (the demo's colour skewness and Gabor moments are
// negative somewhere); non-negative columns, and so non-negative corpora
// such as Corel5k, are unchanged.
func nonNegative(x *mat.Dense) *mat.Dense {
	r, c := x.Dims()
	var out *mat.Dense
	for j := 0; j < c; j++ {
		lo := 0.0
		for i := 0; i < r; i++ {
			lo = min(lo, x.At(i, j))
		}
		if lo == 0 {
			continue
		}
		if out == nil {
			out = mat.DenseCopyOf(x)
		}
		for i := 0; i < r; i++ {
			out.Set(i, j, x.At(i, j)-lo)
		}
	}
	if out == nil {
		return x
	}
	return out
}
