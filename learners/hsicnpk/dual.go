package hsicnpk

import (
	"context"
	"math"

	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/floats"
)

// lbfgsMemory is the number of correction pairs the dual solver keeps.
const lbfgsMemory = 10

// step records one accepted iteration, for Stats and the test hook.
type step struct {
	Iter    int
	Primal  float64 // P at this iterate's primal candidate (after the scaling of bestScale)
	Dual    float64 // D at this iterate
	Best    float64 // best primal value so far
	Bound   float64 // best dual value so far
	Gap     float64 // relative gap (Best - Bound) / max(1, |Best|)
	Scale   float64 // the scaling s of the candidate: < 1 when the budget does not bind
	NormAp  float64 // ||A_+||_F
	Evals   int     // eigen-factorisations so far
	Phase   string  // "dual" or "primal"
	NumPos  int     // positive eigenvalues of A (dual phase; -1 at a start not factorised)
	Actives int     // pairs with alpha > 0
}

// solver holds the state shared by the dual and primal phases.
type solver struct {
	pr    *problem
	cfg   config
	trace func(step)
	alpha []float64 // dual iterate (the best dual point on return from dual)
	best  candidate // best primal point
	bestP float64
	bestD float64
	bestS float64 // scaling of the best candidate
	evals int
	iter  int
	deg   []float64 // scratch of firstStep
}

func (s *solver) gap() float64 {
	return (s.bestP - s.bestD) / math.Max(1, math.Abs(s.bestP))
}

// factorised replaces a best candidate still held as K(0) (problem.atZero)
// by its eigenpairs, as every other candidate is held: the primal phase
// and the returned kernel need them.
func (s *solver) factorised() error {
	if !s.best.atZero {
		return nil
	}
	pr := s.pr
	if _, err := pr.value(make([]float64, len(pr.pairs))); err != nil {
		return err
	}
	s.evals++
	if pr.lo == pr.q {
		s.best.set(nil, nil)
		return nil
	}
	if err := pr.positiveVectors(); err != nil {
		return err
	}
	pr.saveCandidate(&s.best, s.bestS)
	return nil
}

func (s *solver) record(st step) {
	st.Iter = s.iter
	st.Best, st.Bound, st.Gap, st.Evals = s.bestP, s.bestD, s.gap(), s.evals
	if s.trace != nil {
		s.trace(st)
	}
}

// dual maximises the concave dual D(alpha) over alpha >= 0 by projected
// L-BFGS with the two-metric projection of Bertsekas (the step-size rule the
// thesis leaves open): variables at their bound 0 whose gradient points out
// of the feasible set are held there, the rest take an L-BFGS direction, and
// an Armijo backtracking search runs along the projected arc
// max(0, alpha + t d), with safeguarded quadratic interpolation. Every
// function value is one eigenvalue-only factorisation of A(alpha);
// eigenvectors are computed only at accepted points. On a search's windows
// this takes fewer factorisations to the gap than spectral projected
// gradient (Barzilai-Borwein, non-monotone) or FISTA with restarts
// (docs/evaluation.md).
//
// It returns whether the gap closed; it stops early when the iteration
// stalls with the budget not binding (the degenerate case of spec A.4),
// reported by stalled.
func (s *solver) dual(ctx context.Context) (converged, stalled bool, err error) {
	pr := s.pr
	ne := len(pr.pairs)
	// Every vector over the pairs (47 of them, 8 a pair each) is carved
	// from one zeroed scratch buffer, handed back on return.
	buf := kernelmath.Scratch((7 + 4*lbfgsMemory) * ne)
	defer kernelmath.Release(buf)
	clear(buf)
	next := func() []float64 {
		v := buf[:ne:ne]
		buf = buf[ne:]
		return v
	}
	x, g, t, trial, gt, dir, mask := next(), next(), next(), next(), next(), next(), next()
	free := make([]bool, ne)
	rho := make([]float64, lbfgsMemory)
	coef := make([]float64, lbfgsMemory)
	sm := make([][]float64, lbfgsMemory)
	ym := make([][]float64, lbfgsMemory)
	smf := make([][]float64, lbfgsMemory) // masked to the free set
	ymf := make([][]float64, lbfgsMemory)
	for i := range sm {
		sm[i], ym[i], smf[i], ymf[i] = next(), next(), next(), next()
	}
	nmem, head := 0, 0 // ring buffer of correction pairs

	// take records an accepted point xv: its dual value dv, and the primal
	// value pbest of its candidate at the scaling sc, which save stores
	// when it is the best so far.
	take := func(xv []float64, dv, pbest, sc float64, numPos int, save func()) {
		if dv > s.bestD {
			s.bestD = dv
			copy(s.alpha, xv)
		}
		if pbest < s.bestP {
			s.bestP, s.bestS = pbest, sc
			save()
		}
		act := 0
		for _, a := range xv {
			if a > 0 {
				act++
			}
		}
		s.record(step{Primal: pbest, Dual: dv, Scale: sc, NormAp: pr.nrm, Phase: "dual", NumPos: numPos, Actives: act})
	}
	accept := func(xv []float64, dv float64, gv []float64) error {
		_, pbest, sc, err := pr.gradient(xv, gv, t)
		if err != nil {
			return err
		}
		take(xv, dv, pbest, sc, pr.q-pr.lo, func() { pr.saveCandidate(&s.best, sc) })
		return nil
	}
	var d float64
	if pr.v == nil && !s.cfg.legacy {
		// The start alpha = 0 costs no factorisation at full rank
		// (problem.atZero); its candidate is factorised only if it is
		// still the best at the end (solver.factorised).
		var pbest, sc float64
		d, pbest, sc = pr.atZero(g, t)
		take(x, d, pbest, sc, -1, func() { s.best.set(nil, nil); s.best.atZero = true })
	} else {
		var err error
		if d, err = pr.value(x); err != nil {
			return false, false, err
		}
		s.evals++
		if err := accept(x, d, g); err != nil {
			return false, false, err
		}
	}
	nrmX := pr.nrm
	if s.gap() <= s.cfg.tol {
		return true, false, nil
	}
	lastImprove, lastGap := 0, s.gap()
	for s.iter < s.cfg.maxIter {
		if err := ctx.Err(); err != nil {
			return false, false, err
		}
		s.iter++
		// Scale of the last correction pair (1/||g|| before there is one).
		gamma0 := 0.0
		if nmem > 0 {
			i := (head - 1 + lbfgsMemory) % lbfgsMemory
			gamma0 = floats.Dot(sm[i], ym[i]) / floats.Dot(ym[i], ym[i])
		}
		if !(gamma0 > 0) || math.IsInf(gamma0, 0) {
			gmax := 0.0
			for e := range g {
				gmax = math.Max(gmax, math.Abs(g[e]))
			}
			gamma0 = 1 / math.Max(gmax, 1e-300)
		}
		// Two-metric projection (Bertsekas): a variable is held at the
		// bound when its gradient points out and a gradient step scaled by
		// the current curvature estimate would take it there.
		for e := range x {
			free[e] = !(g[e] < 0 && x[e]+gamma0*g[e] <= 0)
		}
		// The recursion runs on masked copies (zero off the free set), so
		// that every product is a plain vector operation.
		for e := range x {
			if free[e] {
				mask[e], dir[e] = 1, g[e]
			} else {
				mask[e], dir[e] = 0, 0
			}
		}
		for k := 0; k < nmem; k++ {
			i := (head - 1 - k + lbfgsMemory) % lbfgsMemory
			floats.MulTo(smf[i], sm[i], mask)
			floats.MulTo(ymf[i], ym[i], mask)
		}
		// Two-loop recursion on the free variables. The ascent direction
		// is H g with H approximating the inverse of -Hessian(D). A pair
		// with no curvature on the free set is skipped (rho = 0).
		gamma := 0.0
		for k := 0; k < nmem; k++ {
			i := (head - 1 - k + lbfgsMemory) % lbfgsMemory
			sy := floats.Dot(ymf[i], smf[i])
			rho[i] = 0
			if sy > 0 {
				rho[i] = 1 / sy
				if gamma == 0 {
					gamma = sy / floats.Dot(ymf[i], ymf[i])
				}
			}
			coef[i] = rho[i] * floats.Dot(smf[i], dir)
			floats.AddScaled(dir, -coef[i], ymf[i])
		}
		if !(gamma > 0) || math.IsInf(gamma, 0) {
			// First step (or no usable memory on this free set): move
			// alpha by at most 1 per coordinate.
			gmax := 0.0
			for e := range g {
				if free[e] {
					gmax = math.Max(gmax, math.Abs(g[e]))
				}
			}
			gamma = 1 / math.Max(gmax, 1e-300)
			if !s.cfg.legacy {
				if c := s.firstStep(dir, nrmX); c > 0 {
					gamma = c
				}
			}
		}
		floats.Scale(gamma, dir)
		for k := nmem - 1; k >= 0; k-- {
			i := (head - 1 - k + lbfgsMemory) % lbfgsMemory
			b := rho[i] * floats.Dot(ymf[i], dir)
			floats.AddScaled(dir, coef[i]-b, smf[i])
		}
		// Variables at (or near) the bound with the gradient pointing out
		// take a scaled gradient step, which the projection clips at 0.
		for e := range dir {
			if !free[e] {
				dir[e] = gamma * g[e]
			}
		}
		slope := floats.Dot(dir, g) // dir is 0 off the free set until below
		if !(slope > 0) {
			// Not an ascent direction: forget the memory, take the gradient.
			nmem = 0
			for e := range dir {
				dir[e] = g[e] * gamma
			}
		}
		// Armijo backtracking along the projected arc.
		tstep := 1.0
		var dt float64
		ok := false
		for ls := 0; ls < 30; ls++ {
			inc := 0.0
			for e := range x {
				trial[e] = math.Max(0, x[e]+tstep*dir[e])
				inc += g[e] * (trial[e] - x[e])
			}
			dt, err = pr.value(trial)
			if err != nil {
				return false, false, err
			}
			s.evals++
			if dt >= d+1e-4*inc {
				ok = true
				break
			}
			// Safeguarded quadratic interpolation of D along the arc,
			// with inc as the first-order term at this step.
			next := tstep / 2
			if curv := d + inc - dt; curv > 0 && inc > 0 {
				next = tstep * inc / (2 * curv)
			}
			tstep = math.Max(0.1*tstep, math.Min(0.5*tstep, next))
		}
		if !ok {
			if nmem > 0 {
				// Retry from a plain gradient direction.
				nmem = 0
				continue
			}
			// No ascent even along the gradient: the dual is as good as it
			// gets in floating point (or stuck at the kink A_+ = 0).
			return false, true, nil
		}
		if err := accept(trial, dt, gt); err != nil {
			return false, false, err
		}
		// Correction pair for f = -D: s = x+ - x, y = grad f(x+) - grad f(x) = g - g+.
		sy, ss, yy := 0.0, 0.0, 0.0
		sv, yv := sm[head], ym[head]
		for e := range x {
			sv[e] = trial[e] - x[e]
			yv[e] = g[e] - gt[e]
			sy += sv[e] * yv[e]
			ss += sv[e] * sv[e]
			yy += yv[e] * yv[e]
		}
		if sy > 1e-10*math.Sqrt(ss*yy) {
			head = (head + 1) % lbfgsMemory
			nmem = min(nmem+1, lbfgsMemory)
		}
		copy(x, trial)
		copy(g, gt)
		d = dt
		nrmX = pr.nrm
		if s.gap() <= s.cfg.tol {
			return true, false, nil
		}
		// Degenerate case (spec A.4): the best primal point lies strictly
		// inside the budget and the gap has stopped closing.
		if gp := s.gap(); gp < 0.5*lastGap {
			lastImprove, lastGap = s.iter, gp
		}
		if s.bestS < 1-1e-6 && s.iter-lastImprove >= 15 {
			return false, true, nil
		}
	}
	return false, false, nil
}

// firstStep returns the step gamma = u.u / kappa along the (masked) gradient
// u from an estimate of the curvature of -D along u:
// kappa = u.u / C + c sqrt(B) ||L_u||_F^2 / ||A_+||_F, the second term the
// scale of that of sqrt(B) ||A_+||_F (whose gradient A_+ / ||A_+|| is about
// 2 / ||A_+||-Lipschitz in A) along A = M - L_alpha, with c = 0.5 chosen
// on Corel5k windows (fewest factorisations at full rank, neutral at low
// rank; docs/evaluation.md). It replaces the unit move of the first step
// (and of a restart), which overshoots by orders of magnitude and costs
// backtracking evaluations. Only the step changes: Armijo still accepts it, and the
// iteration and its certificate are as before. 0 when nrm = 0.
func (s *solver) firstStep(u []float64, nrm float64) float64 {
	pr := s.pr
	if !(nrm > 0) {
		return 0
	}
	deg := s.deg
	if len(deg) != pr.n {
		deg = make([]float64, pr.n)
		s.deg = deg
	}
	for i := range deg {
		deg[i] = 0
	}
	uu, off := 0.0, 0.0
	for e, x := range u {
		if x == 0 {
			continue
		}
		p := pr.pairs[e]
		deg[p.I] += x
		deg[p.J] += x
		uu += x * x
	}
	// ||L_u||_F^2 in the basis: for full rank sum deg^2 + 2 sum u^2; the
	// low-rank V^T L_u V has a Frobenius norm no larger.
	off = 2 * uu
	for _, d := range deg {
		off += d * d
	}
	kappa := uu/pr.c + 0.5*pr.sqrtB*off/nrm
	if !(kappa > 0) {
		return 0
	}
	return uu / kappa
}
