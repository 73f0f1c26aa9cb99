package mkl

import (
	"context"
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/floats"
)

// lp is L_p-norm MKL,
//
//	min_{theta >= 0, |theta|_p <= 1} D(theta),  D(theta) = max_a 1'a - 1/2 sum_t theta_t q_t(a),
//
// q_t(a) = sum_c b_c' K_t b_c (b_c = a_c o y_c), by the analytic update of
// Kloft, Brefeld, Sonnenburg & Zien (JMLR 12, 2011, eq. 12), the spec's
// "recommended equivalent" (§2.2): from theta_t = m^(-1/p), solve the SVM
// for theta, then
//
//	theta_t <- |w_t|^(2/(p+1)) / (sum_s |w_s|^(2p/(p+1)))^(1/p),  |w_t|^2 = theta_t^2 q_t,
//
// until theta changes by at most tol relative (max-norm), the spec's rule,
// or the relative duality gap below is at most gap_tol: near the optimum
// the SVM's own tolerance can make theta cycle above tol while the gap is
// already ~1e-8 (breast-cancer, C = 1). Deviation: the
// thesis' LpMKL runs the cutting-plane (SILP) algorithm with a second-order
// Taylor expansion of |theta|_p^p in a QCQP master problem; both reach the
// optimum of the same convex problem (Kloft et al.).
//
// Stats: Iterations (SVM solves), Objective D(theta) and Gap, the duality
// gap relative to D: for the SVM duals a at theta, Hölder's inequality gives
// the dual value 1'a - 1/2 |q(a)|_p* (p* = p/(p-1)), so
// gap = 1/2 (|q|_p* - theta'q) >= 0, zero exactly at the fixed point
// theta_t = q_t^(1/(p-1)) / |q^(1/(p-1))|_p of the update.
type lpNorm struct {
	supervised
	p      float64
	gapTol float64
}

var _ learners.Learner = (*lpNorm)(nil)

func (l *lpNorm) Fit(ctx context.Context, in *learners.Input) (*learners.Output, error) {
	f, err := l.setup(in)
	if err != nil {
		return nil, err
	}
	m := len(in.Kernels)
	theta := make([]float64, m)
	for t := range theta {
		theta[t] = math.Pow(float64(m), -1/l.p)
	}
	next := make([]float64, m)
	pStar := l.p / (l.p - 1)
	for it := 1; ; it++ {
		c, err := f.solve(ctx, theta)
		if err != nil {
			return nil, err
		}
		stats := learners.Stats{Iterations: it, Objective: c.value,
			Gap: max(0, 0.5*(floats.Norm(c.q, pStar)-floats.Dot(theta, c.q))/relScale(c.value))} // >= 0 but for rounding
		change := l.update(next, theta, c.q)
		if change <= l.tol*floats.Max(theta) || stats.Gap <= l.gapTol {
			stats.Converged = true
			return f.output(theta, in.N(), stats), nil
		}
		if it == l.maxIter {
			return f.output(theta, in.N(), stats), fmt.Errorf("%s: %w: theta still changes by %.3g (relative) after %d SVM solves",
				LpMKL, learners.ErrNotConverged, change/floats.Max(theta), it)
		}
		theta, next = next, theta
	}
}

// update sets next to the analytic update of theta for the quadratic terms
// q and returns the max-norm of the change. When every |w_t| is zero
// (every kernel zero on the labelled points) theta is kept.
func (l *lpNorm) update(next, theta, q []float64) float64 {
	den := 0.0
	for t, w := range theta {
		next[t] = max(w*w*q[t], 0) // |w_t|^2; q_t >= 0 but for rounding
		den += math.Pow(next[t], l.p/(l.p+1))
	}
	if den == 0 {
		copy(next, theta)
		return 0
	}
	den = math.Pow(den, 1/l.p)
	change := 0.0
	for t, w2 := range next {
		next[t] = math.Pow(w2, 1/(l.p+1)) / den
		change = max(change, math.Abs(next[t]-theta[t]))
	}
	return change
}

// relScale is the scale of a relative gap: |v|, or 1 when v is 0.
func relScale(v float64) float64 {
	if v == 0 {
		return 1
	}
	return math.Abs(v)
}
