package mkl

import (
	"context"
	"fmt"
	"slices"

	"github.com/kernelrank/kernelrank/learners"
)

// level is convex MKL (spec §2.1, thesis eq. 2.30-2.32),
//
//	min_{theta in simplex} D(theta),  D(theta) = max_a f(theta, a),  f(theta, a) = 1'a - 1/2 sum_t theta_t q_t(a),
//
// by the extended level method of Xu, Jin, King & Lyu (NIPS 2008), the
// thesis' MKL^level. Iteration k, from theta_1 = 1/m:
//
//  1. solve the SVM at theta_k: a_k, D(theta_k) = f(theta_k, a_k), and the
//     cutting plane f(., a_k), linear in theta, below D everywhere;
//  2. upper bound U = min_j D(theta_j); lower bound L = min over the
//     simplex of the model g_k = max_j f(., a_j), an LP solved exactly
//     (gonum's simplex method, levelLP);
//  3. stop when the gap (U - L) / |U| <= tol;
//  4. level l = lambda U + (1 - lambda) L; theta_{k+1} = the Euclidean
//     projection of theta_k onto {theta in simplex : g_k(theta) <= l}, a QP
//     solved exactly by an active-set method (projectLevel; kernelmath.SimplexQP
//     does not take the cut constraints), from the LP's minimiser, which
//     lies in the level set.
//
// Deviation (spec §2.1 leaves it ambiguous): tol 1e-3 relative and at most
// max_iter = 100 SVM solves. Should rounding defeat the projection (a
// working set left singular; not met in the tests), the next point is the
// LP's minimiser instead, a cutting-plane step. The weights returned are theta_j of the lowest
// D(theta_j), on the simplex; Stats: Iterations (SVM solves), Objective U,
// Gap (U - L) / |U|. U is computed from SVMs solved to svm_eps, so it may
// sit below the exact D by the SVM's own tolerance.
type level struct {
	supervised
	lambda float64
}

var _ learners.Learner = (*level)(nil)

func (l *level) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	f, err := l.setup(in)
	if err != nil {
		return nil, err
	}
	m := len(in.Kernels)
	theta := make([]float64, m)
	for t := range theta {
		theta[t] = 1 / float64(m)
	}
	var (
		cuts  []cut
		best  []float64
		upper = 0.0
		lower = 0.0
	)
	for it := 1; ; it++ {
		c, err := f.solve(ctx, theta)
		if err != nil {
			return nil, err
		}
		cuts = append(cuts, c)
		if best == nil || c.value < upper {
			upper, best = c.value, slices.Clone(theta)
		}
		lb, atLB, err := levelLP(cuts, m)
		if err != nil {
			return nil, fmt.Errorf("%s: lower bound at iteration %d: %w", Level, it, err)
		}
		if it == 1 || lb > lower {
			lower = lb // the LP grows with the cuts; keep it monotone against rounding
		}
		stats := learners.Stats{Iterations: it, Objective: upper, Gap: (upper - lower) / relScale(upper)}
		if stats.Gap <= l.tol {
			stats.Converged = true
			return f.output(best, in.N(), stats), nil
		}
		if it == l.maxIter {
			return f.output(best, in.N(), stats), fmt.Errorf("%s: %w: relative gap %.3g > tol %g after %d SVM solves",
				Level, learners.ErrNotConverged, stats.Gap, l.tol, it)
		}
		ell := l.lambda*upper + (1-l.lambda)*lower
		// The level set {theta in simplex : alphaSum_j - 1/2 q_j'theta <= ell}
		// as a_j'theta <= b_j.
		a := make([][]float64, len(cuts))
		b := make([]float64, len(cuts))
		for j, cu := range cuts {
			a[j] = make([]float64, m)
			for t, v := range cu.q {
				a[j][t] = -0.5 * v
			}
			b[j] = ell - cu.alphaSum
		}
		if theta, err = projectLevel(theta, atLB, a, b); err != nil {
			// Deviation: should rounding defeat the projection, the next
			// point is the LP's minimiser, a point of the level set (a
			// cutting-plane step, Kelley's method).
			theta = atLB
		}
	}
}
