package hsicnpk

import (
	"errors"
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// problem is eq. 6.2 after scaling, over a q x q PSD matrix P with K = V P V^T:
// V = I (q = n) for full rank, V the m smoothest Laplacian eigenvectors
// (q = m) for low rank (section 6.3.4). With w_e = V^T (e_i - e_j) the pair
// constraint reads w_e^T P w_e <= d_e^2 + xi_e, and everything the solvers
// need is
//
//	A(alpha) = M~ - sum_e alpha_e w_e w_e^T = V^T (M - L_alpha) V,   M~ = V^T M V,
//
// with L_alpha the Laplacian of the pair graph weighted by alpha.
type problem struct {
	n, q  int
	pairs []learners.Pair
	dd    []float64 // d_e^2, scaled to mean 1 over the pairs
	c     float64
	sqrtB float64
	m     []float64  // M~, q x q row-major (both triangles)
	v     *mat.Dense // the basis V (n x q); nil for full rank (V = I)

	// workspace, allocated once
	lv   *mat.Dense // L_alpha V, n x q (low rank only)
	wt   []float64  // W^T for the SYRK of addLaplacian, q x n/2 (low rank only)
	vt   []float64  // V^T, q x n row-major (low rank only)
	yt   []float64  // (V z)^T, p x n (low rank only)
	pe   kernelmath.PartialEigen
	vals []float64
	zbuf []float64  // backing of z
	ybuf []float64  // backing of a candidate's V z
	z    *mat.Dense // positive eigenvectors of A, q x p (a view of zbuf)

	// state of the last value call
	lo  int     // index of the first eigenvalue of A counted as positive
	nrm float64 // ||A_+||_F
}

// errNoTags reports a tag kernel with nothing left after centring: M = 0, so
// the objective is (C/2) sum xi^2 >= 0 and K = 0 is optimal.
var errNoTags = errors.New("the target (tag) kernel is constant after centring")

// setup scales the data (see the package doc) and builds the problem;
// gram, when not nil, is in.Features' Gram matrix X X^T, from which the
// pair distances are read instead of computed again.
func setup(in *learners.Input, gram *mat.SymDense, cfg config) (*problem, error) {
	n := in.N()
	if n < 2 {
		return nil, fmt.Errorf("%w: hsicnpk needs at least 2 points, got %d", learners.ErrInput, n)
	}
	// d2 and mc are workspaces of setup alone: the problem keeps what it
	// needs of them.
	d2 := kernelmath.ScratchSym(n)
	defer kernelmath.ReleaseSym(d2)
	if gram != nil {
		kernelmath.KernelDistancesInto(d2, gram)
	} else {
		kernelmath.SqDistancesInto(d2, in.Features)
	}
	pairs := kernelmath.NeighborPairs(kernelmath.NearestNeighbors(d2, cfg.k), cfg.mutual)
	if len(pairs) == 0 {
		// Only possible with mutual neighbours.
		return nil, fmt.Errorf("%w: no pair of candidates is among each other's %d nearest neighbours; use neighbors=union or a larger k", learners.ErrInput, cfg.k)
	}
	pr := &problem{n: n, pairs: pairs, c: cfg.c}
	pr.pe.GonumTridiag = cfg.legacy

	// Distances: scaled to mean 1 over the constrained pairs, so that C and
	// the budget mean the same for features of any scale.
	pr.dd = make([]float64, len(pairs))
	mean := 0.0
	for e, p := range pairs {
		pr.dd[e] = d2.At(p.I, p.J)
		mean += pr.dd[e]
	}
	mean /= float64(len(pairs))
	if mean > 0 {
		for e := range pr.dd {
			pr.dd[e] /= mean
		}
	}

	// M = H K_t H scaled to unit Frobenius norm.
	mc := kernelmath.ScratchSym(n)
	defer kernelmath.ReleaseSym(mc)
	kernelmath.CenterInto(mc, in.Target)
	fro := math.Sqrt(kernelmath.Frobenius(mc, mc))
	scale := 0.0
	for i := 0; i < n; i++ {
		scale = math.Max(scale, math.Abs(in.Target.At(i, i)))
	}
	if !(fro > 1e-12*scale*float64(n)) {
		return nil, errNoTags
	}
	mc.ScaleSym(1/fro, mc)

	// Budget: B = budget / dbar^2 with dbar the mean over the constrained
	// pairs of the squared distance M_ii + M_jj - 2 M_ij under the scaled
	// tag kernel. With budget = 1 the solution at alpha = 0 (the tag kernel
	// scaled into the budget, Theorem 6.34) stretches the visual neighbours
	// by their visual distance on average, so the constraints bind on the
	// pairs the tags pull apart. The low-rank problem keeps the same B: it
	// approximates the same problem (there the smooth basis itself keeps
	// neighbours close and fewer constraints bind). (The thesis leaves B as
	// an absolute constant; this relative form is our choice.)
	dbar := 0.0
	for _, p := range pairs {
		dbar += mc.At(p.I, p.I) + mc.At(p.J, p.J) - 2*mc.At(p.I, p.J)
	}
	dbar /= float64(len(pairs))
	if dbar < 1e-12 {
		// The neighbours all share their tags: use the mean over all pairs,
		// 2 tr(M) / (n-1) for a centred M.
		tr := 0.0
		for i := 0; i < n; i++ {
			tr += mc.At(i, i)
		}
		dbar = 2 * tr / float64(n-1)
	}
	pr.sqrtB = math.Sqrt(cfg.budget) / dbar

	if cfg.rank == 0 {
		pr.q = n
		pr.m = make([]float64, n*n)
		raw := mc.RawSymmetric()
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				x := raw.Data[i*raw.Stride+j]
				pr.m[i*n+j], pr.m[j*n+i] = x, x
			}
		}
	} else {
		pr.q = min(cfg.rank, n)
		ritz, err := pr.lowRankBasis(d2, mean, mc, cfg.basis)
		if err != nil {
			return nil, err
		}
		q := pr.q
		pr.m = make([]float64, q*q)
		if ritz != nil {
			// V holds Ritz vectors of M: V^T M V is their Ritz values.
			for i, x := range ritz {
				pr.m[i*q+i] = x
			}
		} else {
			var mv, mt mat.Dense
			mv.Mul(mc, pr.v)
			mt.Mul(pr.v.T(), &mv)
			for i := 0; i < q; i++ {
				for j := i; j < q; j++ {
					x := (mt.At(i, j) + mt.At(j, i)) / 2
					pr.m[i*q+j], pr.m[j*q+i] = x, x
				}
			}
		}
		mtNorm := 0.0
		for _, x := range pr.m {
			mtNorm = math.Max(mtNorm, math.Abs(x))
		}
		pr.lv = mat.NewDense(n, q, nil)
		pr.wt = make([]float64, q*(n/2+1))
		pr.vt = make([]float64, q*n)
		for i := 0; i < n; i++ {
			for c := 0; c < q; c++ {
				pr.vt[c*n+i] = pr.v.At(i, c)
			}
		}
		pr.yt = make([]float64, q*n)
		if mtNorm < 1e-12 {
			return nil, fmt.Errorf("%w: the tag kernel has no component in the %d-dimensional low-rank basis; raise rank", learners.ErrInput, q)
		}
	}

	pr.vals = make([]float64, pr.q)
	pr.zbuf = make([]float64, pr.q*pr.q)
	if pr.v != nil {
		pr.ybuf = make([]float64, n*pr.q)
	}
	return pr, nil
}

// The randomised subspace iteration of the tag basis.
const (
	tagOversample = 10
	tagPowerSteps = 2
)

// lowRankBasis sets V, n x q, to the low-rank basis cfg.basis names, and
// returns for the tag basis its Ritz values (V^T M V is their diagonal).
//
// laplacian (section 6.3.4): the q eigenvectors of the kNN graph Laplacian
// with the smallest eigenvalues. Edges are the constrained pairs, weighted
// by the heat kernel exp(-d^2 / mean d^2) (the thesis does not say which
// weights; these keep the basis smooth along the visual manifold). A dense
// partial eigensolver is used rather than Lanczos: the low end of a kNN
// Laplacian is tightly clustered, which makes Lanczos need nearly n steps
// and lose to the dense solve at a search's window sizes.
//
// tags: the q leading eigenvectors of the centred, scaled tag kernel mc,
// to the accuracy of kernelmath.LeadingSubspace with tagOversample extra
// vectors and tagPowerSteps steps (a basis needs the subspace, not exact
// eigenvectors: it ranks as well as a basis from the dense eigensolver,
// which costs a full tridiagonalisation; docs/evaluation.md).
// DEVIATION from section 6.3.4, an option: where the visual constraints are
// slack the full-rank solution lies in mc's leading eigenspace (the kernel
// maximising tr(K M) under tr(K K) <= B), which a smooth Laplacian basis
// cannot carry (it ranks worse: docs/evaluation.md).
//
// mixed: the ceil(q/2) leading tag eigenvectors and the q/2 smoothest
// Laplacian ones, orthonormalised.
func (pr *problem) lowRankBasis(d2 *mat.SymDense, mean float64, mc *mat.SymDense, basis string) (ritz []float64, err error) {
	n, q := pr.n, pr.q
	pr.v = mat.NewDense(n, q, nil)
	tagsQ := 0
	switch basis {
	case "tags":
		tagsQ = q
	case "mixed":
		tagsQ = (q + 1) / 2
	}
	if tagsQ > 0 {
		vals, vecs, err := kernelmath.LeadingSubspace(mc, tagsQ, tagOversample, tagPowerSteps, 1)
		if err != nil {
			return nil, err
		}
		pr.v.Slice(0, n, 0, tagsQ).(*mat.Dense).Copy(vecs)
		if tagsQ == q {
			return vals, nil
		}
	}
	if mean <= 0 {
		mean = 1
	}
	w := make([]float64, len(pr.pairs))
	for e, p := range pr.pairs {
		w[e] = math.Exp(-d2.At(p.I, p.J) / mean)
	}
	lap := make([]float64, n*n)
	pairLaplacian(lap, n, pr.pairs, 1, w)
	if err := pr.pe.FactorizeDense(n, lap); err != nil {
		return nil, err
	}
	if err := pr.pe.VectorsTo(pr.v.Slice(0, n, tagsQ, q).(*mat.Dense), 0, q-tagsQ); err != nil {
		return nil, err
	}
	if tagsQ > 0 {
		var vt mat.Dense
		vt.CloneFrom(pr.v.T())
		kernelmath.OrthonormalizeRows(&vt)
		pr.v.Copy(vt.T())
	}
	return nil, nil
}

// addLaplacian adds coef * V^T L_w V to the q x q row-major dst.
func (pr *problem) addLaplacian(dst []float64, coef float64, w []float64) {
	q := pr.q
	if pr.v == nil {
		pairLaplacian(dst, q, pr.pairs, coef, w)
		return
	}
	vr := pr.v.RawMatrix()
	nnz := 0
	for _, x := range w {
		if x != 0 {
			nnz++
		}
	}
	if nnz == 0 {
		return
	}
	if nnz < pr.n/2 && nonNegative(w) {
		// Few active pairs (the usual low-rank case): sum_e w_e w_e w_e^T =
		// W^T W with the rows sqrt(w_e) w_e, one SYRK of nnz q^2 flops
		// against n q^2 for the GEMM below.
		wt := pr.wt[:q*nnz] // W^T, q x nnz, so that SYRK runs along rows
		k := 0
		for e, p := range pr.pairs {
			if w[e] == 0 {
				continue
			}
			sw := math.Sqrt(w[e])
			ri := vr.Data[p.I*vr.Stride : p.I*vr.Stride+q]
			rj := vr.Data[p.J*vr.Stride : p.J*vr.Stride+q]
			for c := range ri {
				wt[c*nnz+k] = sw * (ri[c] - rj[c])
			}
			k++
		}
		blas64.Syrk(blas.NoTrans, coef, blas64.General{Rows: q, Cols: nnz, Stride: nnz, Data: wt}, 1,
			blas64.Symmetric{Uplo: blas.Lower, N: q, Stride: q, Data: dst})
		for i := 0; i < q; i++ { // mirror: callers use both triangles
			for j := 0; j < i; j++ {
				dst[j*q+i] = dst[i*q+j]
			}
		}
		return
	}
	// L_w V row by row, then V^T (L_w V) with one GEMM.
	lv := pr.lv.RawMatrix()
	for i := range lv.Data {
		lv.Data[i] = 0
	}
	for e, p := range pr.pairs {
		x := w[e]
		if x == 0 {
			continue
		}
		ri := vr.Data[p.I*vr.Stride : p.I*vr.Stride+q]
		rj := vr.Data[p.J*vr.Stride : p.J*vr.Stride+q]
		li := lv.Data[p.I*lv.Stride : p.I*lv.Stride+q]
		lj := lv.Data[p.J*lv.Stride : p.J*lv.Stride+q]
		for c := range ri {
			d := x * (ri[c] - rj[c])
			li[c] += d
			lj[c] -= d
		}
	}
	blas64.Gemm(blas.Trans, blas.NoTrans, coef, vr, lv, 1, blas64.General{Rows: q, Cols: q, Stride: q, Data: dst})
}

func nonNegative(w []float64) bool {
	for _, x := range w {
		if x < 0 {
			return false
		}
	}
	return true
}

// pairLaplacian adds coef * L_w, the Laplacian of the pair graph weighted
// by w, to the n x n row-major dst.
func pairLaplacian(dst []float64, n int, pairs []learners.Pair, coef float64, w []float64) {
	for e, p := range pairs {
		x := coef * w[e]
		if x == 0 {
			continue
		}
		i, j := p.I, p.J
		dst[i*n+i] += x
		dst[j*n+j] += x
		dst[i*n+j] -= x
		dst[j*n+i] -= x
	}
}

// value computes the dual function D(alpha) = -sqrt(B) ||A_+||_F - alpha.d^2
// - ||alpha||^2 / (2C), factorising A(alpha) (eigenvalues only).
func (pr *problem) value(alpha []float64) (float64, error) {
	a := pr.pe.Matrix(pr.q)
	copy(a, pr.m)
	pr.addLaplacian(a, -1, alpha)
	if err := pr.pe.FactorizeFull(); err != nil {
		return 0, err
	}
	pr.vals = pr.pe.Values(pr.vals)
	top := math.Max(math.Abs(pr.vals[0]), math.Abs(pr.vals[pr.q-1]))
	floor := 100 * 0x1p-52 * top // rounding level of the eigenvalues
	pr.lo = pr.q
	for pr.lo > 0 && pr.vals[pr.lo-1] > floor {
		pr.lo--
	}
	s := 0.0
	for _, l := range pr.vals[pr.lo:] {
		s += l * l
	}
	pr.nrm = math.Sqrt(s)
	d := -pr.sqrtB * pr.nrm
	for e, a := range alpha {
		d -= a*pr.dd[e] + a*a/(2*pr.c)
	}
	return d, nil
}

// candidate is a primal point K = Y diag(w) Y^T (Y = V Z, n x p), or with
// atZero the start's K(0) = sqrt(B) M / ||M||_F times the solver's best
// scaling, not factorised (problem.atZero, solver.factorised).
type candidate struct {
	buf    []float64
	y      *mat.Dense // nil when K = 0
	w      []float64
	atZero bool
}

// set makes c hold a copy of y with weights w.
func (c *candidate) set(y *mat.Dense, w []float64) {
	c.atZero = false
	c.w = append(c.w[:0], w...)
	if y == nil || len(w) == 0 {
		c.y = nil
		return
	}
	r, p := y.Dims()
	if cap(c.buf) < r*p {
		c.buf = make([]float64, r*p)
	}
	c.y = mat.NewDense(r, p, c.buf[:r*p])
	c.y.Copy(y)
}

// gradient completes the last value call at the same alpha: it computes
// K(alpha) = sqrt(B) A_+ / ||A_+||_F (Theorem 6.34), its pair distances t,
// the dual gradient g_e = t_e - d_e^2 - alpha_e / C and returns the primal
// value P(K(alpha)) and the scaling s in [0, 1] that minimises P(s K(alpha)).
func (pr *problem) gradient(alpha, g, t []float64) (pk, best, s float64, err error) {
	p := pr.q - pr.lo
	if p == 0 {
		// A_+ = 0: K = 0 is a minimiser of -tr(A K) over the feasible set,
		// so t = 0 gives a supergradient (Danskin).
		for e := range g {
			t[e] = 0
			g[e] = -pr.dd[e] - alpha[e]/pr.c
		}
		return 0, 0, 0, nil
	}
	if err := pr.positiveVectors(); err != nil {
		return 0, 0, 0, err
	}
	scale := pr.sqrtB / pr.nrm
	lam := pr.vals[pr.lo:]
	at := 0.0
	if pr.v == nil {
		raw := pr.z.RawMatrix()
		for e, pair := range pr.pairs {
			ri := raw.Data[pair.I*raw.Stride : pair.I*raw.Stride+p]
			rj := raw.Data[pair.J*raw.Stride : pair.J*raw.Stride+p]
			s := 0.0
			for c, l := range lam {
				d := ri[c] - rj[c]
				s += l * d * d
			}
			t[e] = scale * s
		}
	} else {
		// (V z)^T row by row (long AXPYs along n rather than short ones
		// along p), then the pair distances one eigenvector at a time.
		n, q := pr.n, pr.q
		zr := pr.z.RawMatrix()
		for e := range t {
			t[e] = 0
		}
		for c, l := range lam {
			row := pr.yt[c*n : c*n+n]
			for i := range row {
				row[i] = 0
			}
			for k := 0; k < q; k++ {
				if x := zr.Data[k*zr.Stride+c]; x != 0 {
					floats.AddScaled(row, x, pr.vt[k*n:k*n+n])
				}
			}
			f := scale * l
			for e, pair := range pr.pairs {
				d := row[pair.I] - row[pair.J]
				t[e] += f * d * d
			}
		}
	}
	for e := range t {
		g[e] = t[e] - pr.dd[e] - alpha[e]/pr.c
		at += alpha[e] * t[e]
	}
	// tr(M K) = tr(A K) + tr(L_alpha K) = sqrt(B) ||A_+|| + alpha.t.
	trMK := pr.sqrtB*pr.nrm + at
	pk = pr.primal(trMK, t, 1)
	s = pr.bestScale(trMK, t)
	return pk, pr.primal(trMK, t, s), s, nil
}

// positiveVectors sets z to the eigenvectors of the last value call's
// positive eigenvalues (q x p, p > 0).
func (pr *problem) positiveVectors() error {
	p := pr.q - pr.lo
	pr.z = mat.NewDense(pr.q, p, pr.zbuf[:pr.q*p])
	return pr.pe.VectorsTo(pr.z, pr.lo, pr.q)
}

// atZero is value and gradient at alpha = 0 for full rank, without a
// factorisation: there A = M = H K_t H, which is PSD, so A_+ = M,
// K(0) = sqrt(B) M / ||M||_F and its pair distances are M's own,
// t_e = sqrt(B) (M_ii + M_jj - 2 M_ij) / ||M||_F (the factorisation gave
// the same to rounding: M's eigenvalues below zero are rounding). It sets g
// and t as gradient does and nrm as value does, and returns D(0), the
// primal value of the best scaling of K(0) and that scaling.
func (pr *problem) atZero(g, t []float64) (d, best, s float64) {
	n := pr.n
	pr.nrm = math.Sqrt(floats.Dot(pr.m, pr.m))
	scale := pr.sqrtB / pr.nrm
	for e, p := range pr.pairs {
		i, j := p.I, p.J
		t[e] = scale * (pr.m[i*n+i] + pr.m[j*n+j] - 2*pr.m[i*n+j])
		g[e] = t[e] - pr.dd[e]
	}
	// tr(M K(0)) = sqrt(B) ||M||_F.
	trMK := pr.sqrtB * pr.nrm
	s = pr.bestScale(trMK, t)
	return -pr.sqrtB * pr.nrm, pr.primal(trMK, t, s), s
}

// primal returns P(sK) = -s tr(M K) + C/2 sum max(0, s t_e - d_e^2)^2.
func (pr *problem) primal(trMK float64, t []float64, s float64) float64 {
	pen := 0.0
	for e, te := range t {
		if v := s*te - pr.dd[e]; v > 0 {
			pen += v * v
		}
	}
	return -s*trMK + pr.c/2*pen
}

// bestScale minimises the convex piecewise quadratic P(sK) over s in [0, 1].
// At the optimum of a problem whose budget binds s = 1; when the primal
// optimum lies inside the budget (spec A.4) the scaled point is the better
// primal candidate.
func (pr *problem) bestScale(trMK float64, t []float64) float64 {
	// P'(s) = -tr(MK) + C sum_{s t_e > d_e} t_e (s t_e - d_e^2), increasing.
	deriv := func(s float64) float64 {
		d := -trMK
		for e, te := range t {
			if v := s*te - pr.dd[e]; v > 0 {
				d += pr.c * te * v
			}
		}
		return d
	}
	if deriv(1) <= 0 {
		return 1
	}
	if deriv(0) >= 0 {
		return 0
	}
	// P' is piecewise linear, increasing and convex in s, so Newton from
	// the right (s = 1) decreases monotonically to the root in a few steps.
	s := 1.0
	for it := 0; it < 50; it++ {
		d, h := -trMK, 0.0
		for e, te := range t {
			if v := s*te - pr.dd[e]; v > 0 {
				d += pr.c * te * v
				h += pr.c * te * te
			}
		}
		if d <= 1e-14*math.Abs(trMK) || h == 0 {
			break
		}
		s -= d / h
	}
	return math.Max(0, math.Min(1, s))
}

// saveCandidate stores the current K(alpha), scaled by s, in c.
func (pr *problem) saveCandidate(c *candidate, s float64) {
	if pr.lo == pr.q {
		c.set(nil, nil)
		return
	}
	scale := s * pr.sqrtB / pr.nrm
	w := c.w[:0]
	for _, l := range pr.vals[pr.lo:] {
		w = append(w, scale*l)
	}
	if pr.v == nil {
		c.set(pr.z, w)
		return
	}
	// Y = V z from its transpose.
	p, n := len(w), pr.n
	y := mat.NewDense(n, p, pr.ybuf[:n*p])
	for c := 0; c < p; c++ {
		row := pr.yt[c*n : c*n+n]
		for i, v := range row {
			y.Set(i, c, v)
		}
	}
	c.set(y, w)
}

// kernel returns K = Y diag(w) Y^T as an n x n matrix.
func (pr *problem) kernel(c *candidate) *mat.SymDense {
	if c.y == nil {
		return mat.NewSymDense(pr.n, nil)
	}
	k := mat.NewSymDense(pr.n, nil)
	kernelmath.AddWeightedOuter(k, c.y, c.w)
	return k
}
