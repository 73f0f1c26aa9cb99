package mkl

import (
	"context"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/mat"
)

// uniform is AvgKernel: theta_t = 1/m, K = (1/m) sum_t K_t, exact, no
// iterations.
type uniform struct{}

func (uniform) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	if err := in.Validate(learners.NeedKernels); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m := len(in.Kernels)
	theta := make([]float64, m)
	for t := range theta {
		theta[t] = 1 / float64(m)
	}
	n := in.N()
	k := mat.NewSymDense(n, nil)
	learners.NewKernelSet(in.Kernels).Combine(k, theta)
	return &learners.Output{Kernel: k, Weights: theta, Stats: learners.Stats{Converged: true}}, nil
}
