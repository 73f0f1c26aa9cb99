package mkl

import (
	"context"

	"github.com/kernelrank/kernelrank/learners"
)

// uniform is AvgKernel: theta_t = 1/m, K = (1/m) sum_t K_t, exact, no
// iterations. It takes stored or implicit kernels (Output.Kernel then only
// up to learners.DenseOutputMax points).
type uniform struct{}

const uniformNeeds = learners.NeedKernels | learners.AcceptImplicit

var _ learners.Learner = (*uniform)(nil)

func (uniform) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m := len(in.BaseKernels())
	theta := make([]float64, m)
	for t := range theta {
		theta[t] = 1 / float64(m)
	}
	k, err := learners.CombinedOutput(in, theta)
	if err != nil {
		return nil, err
	}
	return &learners.Output{Kernel: k, Weights: theta, Stats: learners.Stats{Converged: true}}, nil
}
