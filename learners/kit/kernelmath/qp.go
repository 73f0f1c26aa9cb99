package kernelmath

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Small dense convex QPs
//
//	min_x 1/2 x'Qx + c'x   over the simplex {x >= 0, sum x = 1} (SimplexQP)
//	                       or the orthant  {x >= 0}             (NonNegQP),
//
// Q symmetric PSD, possibly singular: the kernel-weight steps of MKL
// learners (UMKL's mu-step, KTA / alignf, cutting planes), where p, the
// number of kernels, is 2 to a few hundred.
//
// The exact solver is a primal active-set method (Nocedal & Wright,
// Numerical Optimization, Alg. 16.3) extended to semidefinite Q: on the
// current face {x_i = 0, i not free} (and sum x = 1) it takes the Newton step
// of the face QP, computed from an eigendecomposition of the reduced Hessian
// Z'Q_FF Z (Z an orthonormal basis of the face directions, from a
// Householder reflection for the simplex) with the pseudo-inverse, or, when
// the reduced gradient has a component in the null space of the reduced
// Hessian, the zero-curvature ray along it, which the ratio test stops at the
// first bound it meets; at a face minimum it frees the bound variable with
// the most negative multiplier. A step either lowers the objective or
// shrinks the face, and a face left from its minimum is not met again, so
// (barring degenerate cycling, which MaxIter bounds) it ends at an exact
// optimum after finitely many steps, in practice about twice the size of
// the optimal support, with zeros that are exactly zero. A step costs
// O(p k + k^3) for k free variables.
//
// For p > qpExactMax, QPAuto first runs accelerated projected gradient
// (FISTA with adaptive restart; Beck & Teboulle 2009, O'Donoghue & Candes
// 2015) until the support settles, and then the active-set method from its
// iterate, which finishes exactly in a few steps when the support is right.
//
// Every solve returns a certificate computed from the final x alone
// (QPResult): the scaled KKT violation and a bound on the suboptimality.

// QPMethod selects the algorithm of SimplexQP and NonNegQP.
type QPMethod int

// QP methods.
const (
	// QPAuto is the active-set method from a cold start up to qpExactMax
	// variables; above, projected gradient to find the support, then the
	// active-set method from there.
	QPAuto QPMethod = iota
	// QPActiveSet is the active-set method alone.
	QPActiveSet
	// QPGradient is accelerated projected gradient alone: no exact
	// termination, it stops when the KKT certificate reaches Tol.
	QPGradient
)

// qpExactMax is the number of variables up to which QPAuto uses the
// active-set method from a cold start.
const qpExactMax = 100

// QPOptions tunes SimplexQP and NonNegQP. The zero value is a good default.
type QPOptions struct {
	Method QPMethod
	// Tol is the largest scaled KKT violation (QPResult.KKT) accepted; a
	// solve that ends above it returns ErrQPNotConverged (default 1e-9).
	Tol float64
	// MaxIter caps the iterations of each phase (default 100 + 20p for the
	// active-set method, 20000 + 200p for projected gradient).
	MaxIter int
	// Start is a warm start; it is projected onto the feasible set first.
	Start []float64
}

// QPResult is the certificate of a QP solve, computed at the returned x.
// With g = Qx + c and nu = min_i g_i (simplex) or 0 (orthant):
//   - KKT is the largest violation of the KKT conditions: g_i - nu over the
//     support (it must be 0 there; for x_i = 0 the multiplier g_i - nu is
//     >= 0 by the choice of nu on the simplex and must be on the orthant),
//     relative to max(|c|_inf, |Qx|_inf), together with the primal
//     infeasibility (|sum x - 1| and negative entries);
//   - Gap bounds the suboptimality f(x) - f*: on the simplex it is the
//     Frank-Wolfe gap g'x - min_i g_i; on the orthant it is x'g, the gap to
//     the Wolfe dual, which is a bound when g >= 0 (which KKT measures).
type QPResult struct {
	Iterations int
	KKT        float64
	Gap        float64
	Objective  float64
}

// Errors of the QP solvers besides bad input (which wraps ErrInput).
var (
	// ErrQPNotConverged is wrapped when a solve stops at its iteration cap
	// (or on a stall) with the KKT certificate above Tol.
	ErrQPNotConverged = errors.New("qp: not converged")
	// ErrQPUnbounded is wrapped when the objective is unbounded below on the
	// orthant (Q singular and a descent ray inside x >= 0).
	ErrQPUnbounded = errors.New("qp: unbounded below")
)

// SimplexQP minimises 1/2 x'Qx + c'x over {x >= 0, sum x = 1} for a PSD Q.
// It returns the minimiser and its certificate; an error wraps ErrInput (NaN
// or Inf, size mismatch, empty, Q found not PSD) or ErrQPNotConverged (the
// last iterate and its certificate are returned with it).
func SimplexQP(q *mat.SymDense, c []float64, opt QPOptions) ([]float64, QPResult, error) {
	return solveQP(q, c, opt, true)
}

// NonNegQP minimises 1/2 x'Qx + c'x over {x >= 0} for a PSD Q. Errors are as
// for SimplexQP, plus ErrQPUnbounded when the problem has no minimum.
func NonNegQP(q *mat.SymDense, c []float64, opt QPOptions) ([]float64, QPResult, error) {
	return solveQP(q, c, opt, false)
}

// ProjectSimplex replaces v by its Euclidean projection onto the simplex
// {x >= 0, sum x = 1}, by Michelot's algorithm (1986): drop the coordinates
// below the threshold tau = (sum of the kept - 1) / #kept until none is
// dropped; tau only grows, so it ends after at most len(v) passes.
func ProjectSimplex(v []float64) {
	keep := make([]bool, len(v))
	for i := range keep {
		keep[i] = true
	}
	var tau float64
	for changed := true; changed; {
		sum, n := 0.0, 0
		for i, k := range keep {
			if k {
				sum += v[i]
				n++
			}
		}
		tau = (sum - 1) / float64(n)
		changed = false
		for i, k := range keep {
			if k && v[i] <= tau {
				keep[i], changed = false, true
			}
		}
	}
	for i := range v {
		v[i] = max(v[i]-tau, 0)
	}
}

// qpState is one solve: the problem, the iterate x and its gradient g.
type qpState struct {
	qm      *mat.SymDense
	p       int
	q       []float64 // upper triangle of Q, row-major with stride
	stride  int
	c       []float64
	simplex bool
	x, g    []float64
}

func (s *qpState) qij(i, j int) float64 {
	if i > j {
		i, j = j, i
	}
	return s.q[i*s.stride+j]
}

func solveQP(q *mat.SymDense, c []float64, opt QPOptions, simplex bool) ([]float64, QPResult, error) {
	if q == nil {
		return nil, QPResult{}, inputErr("qp: Q is missing")
	}
	p := q.SymmetricDim()
	if p == 0 {
		return nil, QPResult{}, inputErr("qp: no variables")
	}
	if len(c) != p {
		return nil, QPResult{}, inputErr("qp: c has %d entries, Q is %d x %d", len(c), p, p)
	}
	if opt.Method < QPAuto || opt.Method > QPGradient {
		return nil, QPResult{}, inputErr("qp: unknown method %d", opt.Method)
	}
	if opt.Start != nil && len(opt.Start) != p {
		return nil, QPResult{}, inputErr("qp: start has %d entries, want %d", len(opt.Start), p)
	}
	raw := q.RawSymmetric()
	for i := 0; i < p; i++ {
		if err := CheckFinite("qp: Q", raw.Data[i*raw.Stride+i:i*raw.Stride+p]); err != nil {
			return nil, QPResult{}, err
		}
	}
	if err := CheckFinite("qp: c", c); err != nil {
		return nil, QPResult{}, err
	}
	if err := CheckFinite("qp: start", opt.Start); err != nil {
		return nil, QPResult{}, err
	}
	tol := opt.Tol
	if tol <= 0 {
		tol = 1e-9
	}
	s := &qpState{qm: q, p: p, q: raw.Data, stride: raw.Stride, c: c, simplex: simplex,
		x: make([]float64, p), g: make([]float64, p)}
	s.start(opt.Start)

	iters := 0
	var err error
	switch {
	case opt.Method == QPGradient:
		iters = s.gradientProjection(capOr(opt.MaxIter, 20000+200*p), tol, false)
	case opt.Method == QPAuto && p > qpExactMax:
		iters = s.gradientProjection(capOr(opt.MaxIter, 20000+200*p), tol, true)
		fallthrough
	default:
		var n int
		n, err = s.activeSet(capOr(opt.MaxIter, 100+20*p), tol)
		iters += n
	}
	res := s.certificate()
	res.Iterations = iters
	if err != nil {
		return s.x, res, err
	}
	if !(res.KKT <= tol) {
		return s.x, res, fmt.Errorf("%w: KKT violation %.3g > tol %g after %d iterations", ErrQPNotConverged, res.KKT, tol, iters)
	}
	return s.x, res, nil
}

func capOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// start sets x to the warm start projected onto the feasible set or,
// without one, to the best vertex of the simplex (the smallest
// 1/2 Q_jj + c_j, lowest j on ties) or to 0 on the orthant.
func (s *qpState) start(x0 []float64) {
	switch {
	case x0 != nil:
		sum := 0.0
		for i, v := range x0 {
			s.x[i] = max(v, 0)
			sum += s.x[i]
		}
		switch {
		case !s.simplex:
		case math.Abs(sum-1) <= 1e-9:
			// Feasible up to rounding (a previous solution): rescale,
			// which keeps its zeros, rather than project.
			floats.Scale(1/sum, s.x)
		default:
			copy(s.x, x0)
			ProjectSimplex(s.x)
		}
	case s.simplex:
		best := 0
		for j := 1; j < s.p; j++ {
			if 0.5*s.qij(j, j)+s.c[j] < 0.5*s.qij(best, best)+s.c[best] {
				best = j
			}
		}
		s.x[best] = 1
	}
}

// gradient sets g = Qx + c, using only the non-zeros of x, and returns the
// gradient scale max(|c|_inf, |Qx|_inf) (1 if both are 0) that tolerances
// are relative to.
func (s *qpState) gradient() float64 {
	copy(s.g, s.c)
	for j, xj := range s.x {
		if xj == 0 {
			continue
		}
		for i := range s.g {
			s.g[i] += s.qij(i, j) * xj
		}
	}
	scale := 0.0
	for i, gi := range s.g {
		scale = max(scale, math.Abs(s.c[i]), math.Abs(gi-s.c[i]))
	}
	if scale == 0 {
		return 1
	}
	return scale
}

// certificate evaluates QPResult (without Iterations) at x.
func (s *qpState) certificate() QPResult {
	scale := s.gradient()
	nu := 0.0
	if s.simplex {
		nu = math.Inf(1)
		for _, gi := range s.g {
			nu = min(nu, gi)
		}
	}
	var kkt, gap, obj, sum float64
	for i, xi := range s.x {
		l := s.g[i] - nu
		switch {
		case xi > 0:
			kkt = max(kkt, math.Abs(l)/scale)
		case !s.simplex:
			kkt = max(kkt, -l/scale)
		}
		kkt = max(kkt, -xi)
		gap += xi * l
		obj += 0.5 * xi * (s.g[i] + s.c[i])
		sum += xi
	}
	if s.simplex {
		kkt = max(kkt, math.Abs(sum-1))
	}
	return QPResult{KKT: kkt, Gap: gap, Objective: obj}
}

// activeSet runs the primal active-set method from the feasible x, with
// the support of x as the initial free set. It returns the number of
// iterations.
func (s *qpState) activeSet(maxIter int, tol float64) (int, error) {
	free := make([]bool, s.p)
	for i, xi := range s.x {
		free[i] = xi > 0
	}
	var (
		fs    []int
		dir   []float64
		face  faceSolver
		atMin bool
		freed = -1 // the variable freed by the last iteration
	)
	for it := 1; it <= maxIter; it++ {
		scale := s.gradient()
		fs = fs[:0]
		for i, f := range free {
			if f {
				fs = append(fs, i)
			}
		}
		if !atMin {
			var ray bool
			var err error
			dir, ray, err = face.step(s, fs, scale)
			if err != nil {
				return it, err
			}
			if dir == nil { // a point: nothing to move
				atMin = true
			} else {
				alpha, block := 1.0, -1
				if ray {
					alpha = math.Inf(1)
				}
				for a, i := range fs {
					if dir[a] < 0 {
						if r := s.x[i] / -dir[a]; r < alpha {
							alpha, block = r, i
						}
					}
				}
				switch {
				case block < 0 && ray:
					return it, fmt.Errorf("%w: a descent ray with zero curvature stays in x >= 0", ErrQPUnbounded)
				case block == freed && alpha == 0:
					// The variable just freed would leave at once: its
					// multiplier was negative only by rounding. x is a
					// face minimum; the certificate judges it.
					return it, nil
				}
				for a, i := range fs {
					s.x[i] = max(0, s.x[i]+alpha*dir[a])
				}
				if block >= 0 {
					s.x[block], free[block] = 0, false
				}
				atMin = block < 0
				freed = -1
				continue
			}
		}
		// At the minimum of the face: free the most negative multiplier.
		nu := 0.0
		if s.simplex {
			for _, i := range fs {
				nu += s.g[i]
			}
			nu /= float64(len(fs))
		}
		enter, worst := -1, -1e-3*tol*scale
		for i, f := range free {
			if !f {
				if l := s.g[i] - nu; l < worst {
					enter, worst = i, l
				}
			}
		}
		if enter < 0 {
			return it, nil
		}
		free[enter], atMin, freed = true, false, enter
	}
	return maxIter, fmt.Errorf("%w: active set: %d iterations", ErrQPNotConverged, maxIter)
}

// faceSolver computes steps on a face, reusing its buffers.
type faceSolver struct {
	h      *mat.SymDense
	eig    mat.EigenSym
	vecs   mat.Dense
	w, r   []float64
	red    []float64
	dir    []float64
	qw, gF []float64
}

// step returns the step over the free variables fs (in their order) on the
// face {x_i = 0 off fs} (and sum x = 1): the pseudo-inverse Newton step of
// the face QP, or, if the reduced gradient has a component in the null space
// of the reduced Hessian, the descent ray along that component (ray = true),
// on which the objective falls linearly. It returns nil when the face is a
// single point.
func (f *faceSolver) step(s *qpState, fs []int, scale float64) (dir []float64, ray bool, err error) {
	k := len(fs)
	dim := k
	if s.simplex {
		dim = k - 1
	}
	if dim <= 0 {
		return nil, false, nil
	}
	f.gF = resize(f.gF, k)
	for a, i := range fs {
		f.gF[a] = s.g[i]
	}
	// The reduced Hessian Z'Q_FF Z and gradient Z'g_F. On the orthant Z = I.
	// On the simplex Z is columns 2..k of the Householder reflection
	// H = I - beta w w' with w = 1/sqrt(k) - e_1, which maps 1/sqrt(k) to
	// e_1, so those columns are an orthonormal basis of {sum d = 0}.
	if f.h == nil || f.h.SymmetricDim() != dim {
		f.h = mat.NewSymDense(dim, nil)
	}
	f.r = resize(f.r, dim)
	if !s.simplex {
		for a, i := range fs {
			for b := a; b < k; b++ {
				f.h.SetSym(a, b, s.qij(i, fs[b]))
			}
		}
		copy(f.r, f.gF)
	} else {
		f.w = resize(f.w, k)
		f.qw = resize(f.qw, k)
		u := 1 / math.Sqrt(float64(k))
		for a := range f.w {
			f.w[a] = u
		}
		f.w[0] -= 1
		beta := 2 / (2 - 2*u)
		sigma, wg := 0.0, 0.0
		for a, i := range fs {
			v := 0.0
			for b, j := range fs {
				v += s.qij(i, j) * f.w[b]
			}
			f.qw[a] = v
			sigma += f.w[a] * v
			wg += f.w[a] * f.gF[a]
		}
		for a := 1; a < k; a++ {
			for b := a; b < k; b++ {
				h := s.qij(fs[a], fs[b]) - beta*(f.w[a]*f.qw[b]+f.qw[a]*f.w[b]) + beta*beta*sigma*f.w[a]*f.w[b]
				f.h.SetSym(a-1, b-1, h)
			}
			f.r[a-1] = f.gF[a] - beta*f.w[a]*wg
		}
	}
	if !f.eig.Factorize(f.h, true) {
		return nil, false, fmt.Errorf("qp: %w", ErrEigen)
	}
	vals := f.eig.RawValues()
	f.vecs.Reset()
	f.eig.VectorsTo(&f.vecs)
	lmax := max(math.Abs(vals[0]), math.Abs(vals[dim-1]))
	// The rounding error of the reduced Hessian scales with the entries of
	// Q_FF (bounded by its largest diagonal entry when Q is PSD), not with
	// its own eigenvalues, which are tiny when the free columns are nearly
	// collinear (e.g. UMKL's narrow Gaussians, all ~ I/n): the PSD test is
	// relative to the larger of the two.
	qmax := 0.0
	for _, i := range fs {
		qmax = max(qmax, s.qij(i, i))
	}
	if vals[0] < -1e-8*max(lmax, qmax) {
		return nil, false, inputErr("qp: Q is not PSD (eigenvalue %g of the reduced Hessian, largest %g, largest diagonal entry of Q %g)", vals[0], lmax, qmax)
	}
	zero := 1e-11 * lmax
	f.red = resize(f.red, dim)
	clear(f.red)
	// The component of -r in the null space first: a ray if it is not
	// rounding noise.
	nullNorm := 0.0
	for j, lam := range vals {
		if lam > zero {
			continue
		}
		cj := coef(&f.vecs, j, f.r)
		for a := range f.red {
			f.red[a] -= cj * f.vecs.At(a, j)
		}
	}
	for _, v := range f.red {
		nullNorm = max(nullNorm, math.Abs(v))
	}
	ray = nullNorm > 1e-12*scale
	if !ray {
		clear(f.red)
		for j, lam := range vals {
			if lam <= zero {
				continue
			}
			cj := coef(&f.vecs, j, f.r) / lam
			for a := range f.red {
				f.red[a] -= cj * f.vecs.At(a, j)
			}
		}
	}
	f.dir = resize(f.dir, k)
	if !s.simplex {
		copy(f.dir, f.red)
		return f.dir, ray, nil
	}
	// dir = H [0; red].
	wy := 0.0
	for a := 1; a < k; a++ {
		wy += f.w[a] * f.red[a-1]
	}
	beta := 2 / (2 - 2/math.Sqrt(float64(k)))
	f.dir[0] = -beta * f.w[0] * wy
	for a := 1; a < k; a++ {
		f.dir[a] = f.red[a-1] - beta*f.w[a]*wy
	}
	return f.dir, ray, nil
}

// coef returns column j of v dotted with r.
func coef(v *mat.Dense, j int, r []float64) float64 {
	s := 0.0
	for a, ra := range r {
		s += v.At(a, j) * ra
	}
	return s
}

func resize(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}

// gradientProjection runs FISTA with adaptive (gradient) restart from x,
// with step 1/L, L = lambda_max(Q) by Lanczos. It stops when the KKT
// certificate is at most tol or, with untilSupport, once the support has
// stayed the same for 50 iterations with the certificate below 1e-4 (the
// active-set method then finishes). It returns the number of iterations.
func (s *qpState) gradientProjection(maxIter int, tol float64, untilSupport bool) int {
	vals, _, err := TopK(SymOperator(s.qm), 1, Largest, LanczosOptions{Tol: 1e-6})
	if err != nil || !(vals[0] > 0) {
		return 0 // Q = 0 (or no estimate): leave it to the active-set method
	}
	step := 1 / (1.01 * vals[0])
	p := s.p
	prev := append([]float64(nil), s.x...)
	y := append([]float64(nil), s.x...)
	gy := make([]float64, p)
	gv, yv := mat.NewVecDense(p, gy), mat.NewVecDense(p, y)
	t := 1.0
	stable := 0
	for it := 1; it <= maxIter; it++ {
		// Gradient at y, then x+ = proj(y - step grad).
		gv.MulVec(s.qm, yv)
		floats.Add(gy, s.c)
		copy(prev, s.x)
		for i := range s.x {
			s.x[i] = y[i] - step*gy[i]
		}
		s.project(s.x)
		// Restart when the momentum points uphill.
		up, same := 0.0, true
		for i := range s.x {
			up += gy[i] * (s.x[i] - prev[i])
			same = same && (s.x[i] > 0) == (prev[i] > 0)
		}
		tNext := (1 + math.Sqrt(1+4*t*t)) / 2
		if up > 0 {
			tNext = 1
		}
		for i := range y {
			y[i] = s.x[i] + (t-1)/tNext*(s.x[i]-prev[i])
		}
		if up > 0 {
			copy(y, s.x)
		}
		t = tNext
		if same {
			stable++
		} else {
			stable = 0
		}
		if it%10 == 0 {
			kkt := s.certificate().KKT
			if kkt <= tol || untilSupport && stable >= 50 && kkt <= 1e-4 {
				return it
			}
		}
	}
	return maxIter
}

func (s *qpState) project(v []float64) {
	if s.simplex {
		ProjectSimplex(v)
		return
	}
	for i, x := range v {
		v[i] = max(x, 0)
	}
}
