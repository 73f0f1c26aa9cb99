package npkl

import (
	"context"
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
)

// Dual is the multiplier side of a saddle-point problem of Protocol 1:
//
//	max_alpha J(alpha) = -h(A(w)) + Lin(alpha),   w = R alpha (linear),
//
// over a convex feasible set, h(A) the optimal value of the closed form of
// Problem (max {tr(A K) : K PSD, tr K^p <= B}, or max {tr(A K) - (G/p)
// tr K^p : K PSD} in the G-form), whose primal is
//
//	min_K P(K) = -<A0, K> [+ (G/p) tr K^p] + Loss(<M_p, K> for every pair p)
//
// over the same K. Every K(alpha) is primal feasible and J(alpha) <= P(K)
// for all alpha and K (weak duality), so P - J certifies optimality.
type Dual interface {
	// Len is the number of multipliers.
	Len() int
	// Weights writes the pair weights w = R alpha of A(alpha).
	Weights(w, alpha []float64)
	// Lin returns the part of J that depends on alpha alone.
	Lin(alpha []float64) float64
	// Gradient writes dJ/dalpha given the pair values f_p = <M_p, K(alpha)>
	// (Danskin: K(alpha) is the unique maximiser for p > 1).
	Gradient(g, alpha, f []float64)
	// Project maps alpha onto the feasible set.
	Project(alpha []float64)
	// Loss returns the loss part of P(s K) for a kernel K with pair values f.
	Loss(f []float64, s float64) float64
	// Lipschitz bounds the Lipschitz constant of grad J at the G-form
	// constant G (Lemma 3.4: m/G + 1/C for SimpleNPKL); it sets the first step.
	Lipschitz(g float64) float64
}

// Options controls Solve.
type Options struct {
	MaxIter int        // accepted iterations at most
	Tol     float64    // relative duality gap at which to stop
	Trace   func(Step) // called after every accepted iteration (tests, diagnostics)
	// QuasiNewton scales the gradient by L-BFGS. Only for feasible sets
	// that are boxes (Project acts coordinate-wise: free, alpha >= 0,
	// [0, C]); coupled sets (SPE's capped simplex) need plain gradient steps.
	QuasiNewton bool
}

// Step describes one accepted iteration of Solve.
type Step struct {
	Iter     int
	Dual     float64 // J(alpha_t); never decreases
	Primal   float64 // P at the best scaling of K(alpha_t)
	Best     float64 // best primal value so far
	Gap      float64 // relative gap (Best - Dual) / max(|Best|, |Dual|)
	Eta      float64 // the accepted step length
	PGNorm   float64 // ||Proj(alpha + g) - alpha||: zero exactly at a maximiser of J
	Positive int     // kept positive eigenvalues of A
	Evals    int     // eigen-evaluations so far
}

// Result is the outcome of Solve.
type Result struct {
	Alpha  []float64 // the last (and best) dual iterate
	K      Factor    // the best primal point found
	Scale  float64   // K is s K(alpha) for this s in [0, 1] (1 when the budget binds)
	PGNorm float64   // projected-gradient norm at Alpha
	Evals  int       // eigen-evaluations
	Dense  int       // of which by the dense solver
	Stats  learners.Stats
}

// armijo is the sufficient-increase constant of the line search.
const armijo = 1e-4

// Solve runs Protocol 1 (thesis section 3.2.3.2) from alpha0: at each
// iteration K_t = K(alpha_{t-1}) by the closed form (steps 4-5), the gradient
// of J from K_t (step 6) and alpha_t = Proj(alpha_{t-1} + eta_t d_t) (step
// 7), with d_t the gradient, or with Options.QuasiNewton the gradient scaled
// by L-BFGS on the variables off their bounds (the two-metric projection of
// Bertsekas: a variable at a bound whose gradient points out of the set is
// held). The step size, which Protocol 1 leaves open ("determine a step
// size"), starts at the spec's safe 1/L (L the Lemma 3.4 constant at the G
// equivalent to B), then follows Barzilai-Borwein for gradient steps and is
// 1 for L-BFGS steps, halved until J increases enough (Armijo; the spec's
// backtracking): the ascent is monotone as Prop. 3.28 promises for the safe
// step, and much faster. [Deviation: the spec's default is a constant step
// with halving; BB and L-BFGS are our choices within "determine a step
// size": L-BFGS takes far fewer iterations than BB on a CMVU-type problem,
// and no more anywhere (see the package tests).]
// Line-search trials need the eigenvalues of A only; eigenvectors are
// computed at accepted points.
//
// It stops when the relative duality gap (P - J) / max(|P|, |J|) between
// the best primal point sK(alpha) (s in [0, 1] chosen to minimise P; s < 1
// only when the budget does not bind) and J(alpha) is at most Tol
// (Converged), after MaxIter iterations, or when the line search cannot
// increase J any more. [Deviation: the spec stops on a relative change of J
// or alpha of 1e-4; the gap is a certificate, the change is not.]
func Solve(ctx context.Context, pr *Problem, d Dual, alpha0 []float64, opt Options) (*Result, error) {
	sp, err := newSpectral(pr)
	if err != nil {
		return nil, err
	}
	m := d.Len()
	alpha := append([]float64(nil), alpha0...)
	d.Project(alpha)
	w := make([]float64, len(pr.Pairs))
	f := make([]float64, len(pr.Pairs))
	g := make([]float64, m)
	gNew := make([]float64, m)
	trial := make([]float64, m)
	dir := make([]float64, m)
	qn := newLBFGS(m, 10)

	value := func(a []float64) (float64, float64, error) {
		d.Weights(w, a)
		h, err := sp.eval(w)
		return -h + d.Lin(a), h, err
	}
	res := &Result{Stats: learners.Stats{Objective: math.Inf(1)}}
	// measure computes the gradient at the point of the last value call
	// and offers its kernel as a primal candidate.
	measure := func(a, grad []float64) (float64, error) {
		k, reg, err := sp.factor()
		if err != nil {
			return 0, err
		}
		k.PairValues(f, pr.Pairs, pr.Kind)
		d.Gradient(grad, a, f)
		base := k.Dot(pr.Base)
		s, p := bestScale(func(s float64) float64 {
			return -s*base + math.Pow(s, pr.P)*reg + d.Loss(f, s)
		})
		if p < res.Stats.Objective {
			res.Stats.Objective, res.Scale = p, s
			res.K = k.Scaled(s).clone()
		}
		return p, nil
	}
	// search backtracks along Proj(alpha + t dir) from t = t0.
	search := func(jCur, t0 float64) (float64, float64, bool, error) {
		for t, try := t0, 0; try < 60; t, try = t/2, try+1 {
			inc := 0.0
			moved := false
			for e := range trial {
				trial[e] = alpha[e] + t*dir[e]
			}
			d.Project(trial)
			for e := range trial {
				if trial[e] != alpha[e] {
					moved = true
				}
				inc += g[e] * (trial[e] - alpha[e])
			}
			if !moved || !(inc > 0) {
				return 0, 0, false, nil // no ascent left along dir
			}
			jTrial, _, err := value(trial)
			if err != nil {
				return 0, 0, false, err
			}
			if jTrial >= jCur+armijo*inc {
				return jTrial, t, true, nil
			}
		}
		return 0, 0, false, nil
	}

	if err := ctx.Err(); err != nil {
		return nil, err
	}
	jCur, h, err := value(alpha)
	if err != nil {
		return nil, err
	}
	if _, err := measure(alpha, g); err != nil {
		return nil, err
	}
	gap := func(j float64) float64 {
		den := math.Max(math.Abs(res.Stats.Objective), math.Abs(j))
		if den == 0 {
			return 0
		}
		return math.Max(0, res.Stats.Objective-j) / den
	}
	// The G equivalent to B at alpha0 (h / B for every p, from Prop.
	// 3.25-3.26), or G itself.
	g0 := pr.G
	if g0 == 0 {
		g0 = h / pr.B
	}
	eta := 1.0
	if l := d.Lipschitz(g0); l > 0 && !math.IsInf(l, 0) {
		eta = 1 / l
	}
	res.Stats.Gap = gap(jCur)
	res.PGNorm = pgNorm(d, alpha, g, trial)
	firstGap := res.Stats.Gap
	for it := 1; it <= opt.MaxIter && res.Stats.Gap > opt.Tol; it++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var jTrial, t float64
		ok := false
		if opt.QuasiNewton && qn.len() > 0 {
			qn.direction(dir, g, d, alpha, trial)
			if jTrial, t, ok, err = search(jCur, 1); err != nil {
				return nil, err
			}
			if !ok {
				qn.reset() // fall back to a gradient step
			}
		}
		if !ok {
			copy(dir, g)
			if jTrial, t, ok, err = search(jCur, eta); err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			eta = t
		}
		p, err := measure(trial, gNew)
		if err != nil {
			return nil, err
		}
		// Barzilai-Borwein: s = alpha_t - alpha_{t-1}, y = g_t - g_{t-1};
		// J is concave, so s.y <= 0 (and -y is the curvature pair of -J).
		ss, sy := 0.0, 0.0
		for e := range trial {
			s := trial[e] - alpha[e]
			ss += s * s
			sy += s * (gNew[e] - g[e])
		}
		if sy < 0 {
			eta = ss / -sy
			qn.push(trial, alpha, gNew, g)
		} else {
			eta *= 2
		}
		copy(alpha, trial)
		copy(g, gNew)
		jCur = jTrial
		res.Stats.Iterations = it
		res.Stats.Gap = gap(jCur)
		res.PGNorm = pgNorm(d, alpha, g, trial)
		if opt.Trace != nil {
			opt.Trace(Step{Iter: it, Dual: jCur, Primal: p, Best: res.Stats.Objective, Gap: res.Stats.Gap,
				Eta: t, PGNorm: res.PGNorm, Positive: len(sp.sig), Evals: sp.evals})
		}
		learners.Progress(ctx, max(learners.GapProgress(firstGap, res.Stats.Gap, opt.Tol), float64(it)/float64(opt.MaxIter)))
	}
	res.Alpha = alpha
	res.Stats.Converged = res.Stats.Gap <= opt.Tol
	res.Evals, res.Dense = sp.evals, sp.nDense
	return res, nil
}

// pgNorm returns ||Proj(alpha + g) - alpha||, the optimality measure of a
// projected-gradient method, using tmp as scratch.
func pgNorm(d Dual, alpha, g, tmp []float64) float64 {
	for e := range tmp {
		tmp[e] = alpha[e] + g[e]
	}
	d.Project(tmp)
	s := 0.0
	for e := range tmp {
		s += (tmp[e] - alpha[e]) * (tmp[e] - alpha[e])
	}
	return math.Sqrt(s)
}

// bestScale minimises a convex function phi over [0, 1] by golden-section
// search, returning the minimiser and the minimum (the end points included).
func bestScale(phi func(float64) float64) (float64, float64) {
	const r = 0.6180339887498949
	bestS, bestV := 1.0, phi(1)
	if v := phi(0); v < bestV {
		bestS, bestV = 0, v
	}
	a, b := 0.0, 1.0
	x1, x2 := b-r*(b-a), a+r*(b-a)
	f1, f2 := phi(x1), phi(x2)
	for b-a > 1e-12 {
		if f1 <= f2 {
			b, x2, f2 = x2, x1, f1
			x1 = b - r*(b-a)
			f1 = phi(x1)
		} else {
			a, x1, f1 = x1, x2, f2
			x2 = a + r*(b-a)
			f2 = phi(x2)
		}
	}
	for _, c := range []struct{ s, v float64 }{{x1, f1}, {x2, f2}} {
		if c.v < bestV {
			bestS, bestV = c.s, c.v
		}
	}
	return bestS, bestV
}

// Evaluate returns K(w), the closed form of Prop. 3.25 (3.26 in the
// G-form) for A = A0 + sum_p w_p M_p, with h its optimal value: one
// eigen-decomposition (algorithm A1 for SimpleNPKL's linear loss).
func Evaluate(pr *Problem, w []float64) (Factor, float64, error) {
	sp, err := newSpectral(pr)
	if err != nil {
		return Factor{}, 0, err
	}
	h, err := sp.eval(w)
	if err != nil {
		return Factor{}, 0, err
	}
	k, _, err := sp.factor()
	return k, h, err
}

// NotConverged returns nil for a fit whose Stats say it converged, and
// otherwise an error wrapping learners.ErrNotConverged that says how far it
// got: the learners return it together with their best output (the
// contract of learners.ErrNotConverged).
func NotConverged(name string, st learners.Stats, tol float64) error {
	if st.Converged {
		return nil
	}
	return fmt.Errorf("%w: %s stopped after %d iterations at a relative duality gap of %.3g (tol %g)",
		learners.ErrNotConverged, name, st.Iterations, st.Gap, tol)
}
