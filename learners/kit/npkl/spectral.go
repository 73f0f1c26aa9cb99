package npkl

import (
	"errors"
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// PairKind says which matrix M_p a pair p = (i, j) adds to A.
type PairKind int

const (
	// Entry is M_p = E_ij + E_ji, so <M_p, K> = 2 K_ij: the constraint
	// matrix T_ij of eq. 3.1 counted for both orders (i, j) and (j, i).
	Entry PairKind = iota
	// Distance is M_p = (e_i - e_j)(e_i - e_j)^T, so <M_p, K> = K_ii + K_jj
	// - 2 K_ij, the squared feature-space distance: the T_ij of section 3.4.
	Distance
)

// Eigensolver selects how the positive eigenpairs of A are computed.
type Eigensolver int

const (
	// Auto uses Dense up to AutoDenseMax points (and for the low-rank
	// variant) and Lanczos above.
	Auto Eigensolver = iota
	// Dense uses kernelmath.PartialEigen: all eigenvalues (Householder
	// tridiagonalisation, 4/3 n^3 flops) and the eigenvectors of the
	// positive ones only, at accepted iterates only.
	Dense
	// Lanczos uses kernelmath.TopK on the operator A, never forming it,
	// asking for more eigenpairs until one is not positive (spec 1.4(b)); it
	// falls back to Dense for good when more than half the spectrum is
	// positive or Lanczos does not converge.
	Lanczos
)

// AutoDenseMax is the size up to which Auto uses the dense eigensolver:
// at such sizes A keeps hundreds of positive eigenvalues, and Lanczos
// (kernelmath.TopK) pays only for a few dozen of them (a1a, in
// docs/evaluation.md).
const AutoDenseMax = 2000

// Problem is the kernel side of Protocol 1: for pair weights w it gives
//
//	A(w) = A0 + sum_p w_p M_p,
//	K(w) = argmax { tr(A K) : K PSD, tr K^p <= B }             (B-form, Prop. 3.25)
//	K(w) = argmax { tr(A K) - (G/p) tr K^p : K PSD }           (G-form, Prop. 3.26, when G > 0)
//
// as a factor K = Y diag(lambda) Y^T over the positive eigenpairs of A.
// With a Basis V (n x r, orthonormal columns) K = V E V^T and E solves the
// same problem for V^T A V (section 3.3.4, algorithm A6; tr K^p = tr E^p).
type Problem struct {
	Base    Term
	Pairs   []learners.Pair
	Kind    PairKind
	B, P    float64
	G       float64 // > 0: the G-form with this G (B is then ignored; needs p > 1)
	Basis   *mat.Dense
	MaxRank int // keep at most this many eigenpairs (0: all positive ones)
	Solver  Eigensolver
	Seed    uint64 // Lanczos start vector
}

func (pr *Problem) check() error {
	if pr.Base == nil || !(pr.P >= 1) || math.IsInf(pr.P, 0) || !(pr.B > 0 || pr.G > 0 && pr.P > 1) {
		return errors.New("simplenpkl: a problem needs a base term, finite p >= 1 and B > 0 (or G > 0 with p > 1)")
	}
	n := pr.Base.Dim()
	for _, p := range pr.Pairs {
		if p.I < 0 || p.J < 0 || p.I >= n || p.J >= n || p.I == p.J {
			return fmt.Errorf("simplenpkl: pair (%d, %d) out of range for %d points", p.I, p.J, n)
		}
	}
	if pr.Basis != nil {
		if r, _ := pr.Basis.Dims(); r != n {
			return fmt.Errorf("simplenpkl: basis has %d rows, want %d", r, n)
		}
	}
	return nil
}

// ClosedForm returns the eigenvalues lambda of K* = argmax {tr(A K) : K
// PSD, tr K^p <= B} for the positive eigenvalues sig of A (Prop. 3.25), in
// the same order, and the optimal value h = tr(A K*):
//
//	p > 1: lambda_i = (B / sum_j sig_j^q)^(1/p) sig_i^(1/(p-1)), h = B^(1/p) ||sig||_q, q = p/(p-1);
//	p = 1: B spread evenly over the largest eigenvalue(s), h = B max sig.
//
// With no positive eigenvalue K* = 0 and h = 0 (the degenerate case the
// thesis leaves out). The powers are taken of sig / max sig, so that
// p close to 1 neither overflows nor underflows.
func ClosedForm(sig []float64, b, p float64) (lambda []float64, h float64) {
	lambda = make([]float64, len(sig))
	top := 0.0
	for _, s := range sig {
		top = math.Max(top, s)
	}
	if top <= 0 {
		return lambda, 0
	}
	if p == 1 {
		// Ties within rounding share the budget (I_max of Prop. 3.25).
		var ties []int
		for i, s := range sig {
			if s >= top*(1-1e-10) {
				ties = append(ties, i)
			}
		}
		for _, i := range ties {
			lambda[i] = b / float64(len(ties))
		}
		return lambda, b * top
	}
	e := 1 / (p - 1)
	q := p * e
	s := 0.0
	for _, v := range sig {
		if v > 0 {
			s += math.Pow(v/top, q)
		}
	}
	c := math.Pow(b/s, 1/p)
	for i, v := range sig {
		if v > 0 {
			lambda[i] = c * math.Pow(v/top, e)
		}
	}
	return lambda, math.Pow(b, 1/p) * top * math.Pow(s, 1/q)
}

// ClosedFormG is ClosedForm for the G-form (Prop. 3.26, p > 1):
// lambda_i = (sig_i / G)^(1/(p-1)) and h = max {tr(A K) - (G/p) tr K^p} =
// (1 - 1/p) G^(-1/(p-1)) sum_i sig_i^(p/(p-1)).
func ClosedFormG(sig []float64, g, p float64) (lambda []float64, h float64) {
	lambda = make([]float64, len(sig))
	e := 1 / (p - 1)
	for i, v := range sig {
		if v > 0 {
			lambda[i] = math.Pow(v/g, e)
			h += lambda[i] * v
		}
	}
	return lambda, (1 - 1/p) * h
}

// closedForm dispatches to the form of the problem; reg is the value of
// the penalty (G/p) tr K^p of the G-form (0 in the B-form).
func (pr *Problem) closedForm(sig []float64) (lambda []float64, h, reg float64) {
	if pr.G > 0 {
		lambda, h = ClosedFormG(sig, pr.G, pr.P)
	} else {
		lambda, h = ClosedForm(sig, pr.B, pr.P)
	}
	return lambda, h, pr.Penalty(lambda)
}

// Penalty returns (G/p) tr K^p for a kernel of eigenvalues lambda in the
// G-form, 0 in the B-form.
func (pr *Problem) Penalty(lambda []float64) float64 {
	if pr.G == 0 {
		return 0
	}
	s := 0.0
	for _, l := range lambda {
		s += math.Pow(l, pr.P)
	}
	return pr.G / pr.P * s
}

// spectral evaluates K(w) for a Problem, keeping its workspace between calls.
type spectral struct {
	pr   *Problem
	n, q int
	w    []float64 // pair weights of the current A

	a      []float64 // dense A (q x q)
	baseQ  []float64 // V^T A0 V (low rank)
	pe     kernelmath.PartialEigen
	vals   []float64
	lo     int        // dense path: index of the first kept eigenvalue
	sig    []float64  // kept positive eigenvalues
	u      *mat.Dense // their eigenvectors (q x len(sig)) once haveU
	haveU  bool
	dense  bool // use the dense path (sticky once Lanczos gave up)
	start  []float64
	evals  int // eigen-evaluations, for the tests and traces
	nDense int // of which dense
}

func newSpectral(pr *Problem) (*spectral, error) {
	if err := pr.check(); err != nil {
		return nil, err
	}
	n := pr.Base.Dim()
	s := &spectral{pr: pr, n: n, q: n, w: make([]float64, len(pr.Pairs))}
	s.dense = pr.Solver == Dense || pr.Solver == Auto && n <= AutoDenseMax
	if pr.Basis != nil {
		_, s.q = pr.Basis.Dims()
		s.dense = true
		// V^T A0 V, column by column through the operator.
		s.baseQ = make([]float64, s.q*s.q)
		col := make([]float64, n)
		img := make([]float64, n)
		for c := 0; c < s.q; c++ {
			mat.Col(col, c, pr.Basis)
			pr.Base.Apply(img, col)
			for r := 0; r < s.q; r++ {
				d := 0.0
				for i := 0; i < n; i++ {
					d += pr.Basis.At(i, r) * img[i]
				}
				s.baseQ[r*s.q+c] = d
			}
		}
		for r := 0; r < s.q; r++ { // symmetrise rounding
			for c := 0; c < r; c++ {
				v := (s.baseQ[r*s.q+c] + s.baseQ[c*s.q+r]) / 2
				s.baseQ[r*s.q+c], s.baseQ[c*s.q+r] = v, v
			}
		}
	}
	return s, nil
}

var _ kernelmath.Operator = (*spectral)(nil)

// Dim and Apply make the current A(w) an operator (full rank only).
func (s *spectral) Dim() int { return s.n }

func (s *spectral) Apply(dst, x []float64) {
	s.pr.Base.Apply(dst, x)
	for e, p := range s.pr.Pairs {
		w := s.w[e]
		if w == 0 {
			continue
		}
		if s.pr.Kind == Entry {
			dst[p.I] += w * x[p.J]
			dst[p.J] += w * x[p.I]
		} else {
			d := w * (x[p.I] - x[p.J])
			dst[p.I] += d
			dst[p.J] -= d
		}
	}
}

// eval sets A = A(w), finds its kept positive eigenvalues and returns the
// optimal value h = max {tr(A K)} of Prop. 3.25. The eigenvectors are
// computed by vectors (the dense path skips them for line-search trials).
func (s *spectral) eval(w []float64) (float64, error) {
	copy(s.w, w)
	s.haveU = false
	s.evals++
	if !s.dense {
		ok, err := s.lanczos()
		if err != nil {
			return 0, err
		}
		if !ok {
			s.dense = true
		}
	}
	if s.dense {
		s.nDense++
		if err := s.factorDense(); err != nil {
			return 0, err
		}
	}
	_, h, _ := s.pr.closedForm(s.sig)
	return h, nil
}

// keep returns how many of npos positive eigenvalues are kept.
func (s *spectral) keep(npos int) int {
	if s.pr.MaxRank > 0 {
		return min(npos, s.pr.MaxRank)
	}
	return npos
}

func (s *spectral) factorDense() error {
	q := s.q
	if s.a == nil {
		s.a = make([]float64, q*q)
	}
	a := s.a
	if s.pr.Basis == nil {
		for i := range a {
			a[i] = 0
		}
		s.pr.Base.AddTo(a)
		for e, p := range s.pr.Pairs {
			w := s.w[e]
			if s.pr.Kind == Entry {
				a[p.I*q+p.J] += w
				a[p.J*q+p.I] += w
			} else {
				a[p.I*q+p.I] += w
				a[p.J*q+p.J] += w
				a[p.I*q+p.J] -= w
				a[p.J*q+p.I] -= w
			}
		}
	} else {
		copy(a, s.baseQ)
		s.addProjectedPairs(a)
	}
	if err := s.pe.FactorizeDense(q, a); err != nil {
		return err
	}
	s.vals = s.pe.Values(s.vals)
	floor := positiveFloor(math.Max(math.Abs(s.vals[0]), math.Abs(s.vals[q-1])))
	npos := 0
	for npos < q && s.vals[q-1-npos] > floor {
		npos++
	}
	s.lo = q - s.keep(npos)
	s.sig = s.vals[s.lo:]
	return nil
}

// positiveFloor is the magnitude below which an eigenvalue of a matrix of
// spectral scale top counts as zero: rounding (and the Lanczos tolerance)
// leaves such eigenvalues with either sign, and they weigh nothing in K.
func positiveFloor(top float64) float64 { return 1e-9 * top }

// addProjectedPairs adds sum_p w_p V^T M_p V to the q x q matrix a, with
// V^T M_p V = v_i v_j^T + v_j v_i^T (Entry) or (v_i - v_j)(v_i - v_j)^T
// (Distance), v_i the rows of V: as W^T D W with one GEMM, W the 2m x q
// (Entry) or m x q (Distance) matrix of those rows.
func (s *spectral) addProjectedPairs(a []float64) {
	q := s.q
	vr := s.pr.Basis.RawMatrix()
	rows := len(s.pr.Pairs)
	if s.pr.Kind == Entry {
		rows *= 2
	}
	lhs := make([]float64, rows*q) // rows of W scaled by their weights
	rhs := make([]float64, rows*q)
	r := 0
	for e, p := range s.pr.Pairs {
		w := s.w[e]
		vi := vr.Data[p.I*vr.Stride : p.I*vr.Stride+q]
		vj := vr.Data[p.J*vr.Stride : p.J*vr.Stride+q]
		if s.pr.Kind == Entry {
			// w (v_i v_j^T + v_j v_i^T): two rank-one terms.
			for c := 0; c < q; c++ {
				lhs[r*q+c], rhs[r*q+c] = vi[c], w*vj[c]
				lhs[(r+1)*q+c], rhs[(r+1)*q+c] = vj[c], w*vi[c]
			}
			r += 2
		} else {
			for c := 0; c < q; c++ {
				d := vi[c] - vj[c]
				lhs[r*q+c], rhs[r*q+c] = d, w*d
			}
			r++
		}
	}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1,
		blas64.General{Rows: rows, Cols: q, Stride: q, Data: lhs},
		blas64.General{Rows: rows, Cols: q, Stride: q, Data: rhs}, 1,
		blas64.General{Rows: q, Cols: q, Stride: q, Data: a})
}

// lanczos finds the kept positive eigenpairs with kernelmath.TopK, asking
// for twice as many until a returned Ritz value is not positive (then all
// positive eigenvalues are in hand) or the rank cap is reached. It reports
// false when the dense path should take over: Lanczos did not converge, or
// more than a quarter of the spectrum would be wanted, where the dense
// solver is faster (see AutoDenseMax).
func (s *spectral) lanczos() (bool, error) {
	n := s.n
	limit := n
	if s.pr.MaxRank > 0 {
		limit = min(n, s.pr.MaxRank)
	}
	r := min(limit, max(8, len(s.sig)+8))
	for {
		if r > n/4 {
			return false, nil
		}
		vals, vecs, err := kernelmath.TopK(s, r, kernelmath.Largest, kernelmath.LanczosOptions{Tol: 1e-10, Start: s.start, Seed: s.pr.Seed})
		if errors.Is(err, learners.ErrNotConverged) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		floor := positiveFloor(math.Abs(vals[0]))
		npos := 0
		for npos < r && vals[npos] > floor {
			npos++
		}
		if npos < r || r == limit {
			s.sig = append(s.sig[:0], vals[:npos]...)
			s.u = nil
			if npos > 0 {
				s.u = mat.DenseCopyOf(vecs.Slice(0, n, 0, npos))
			}
			s.haveU = true
			s.warm()
			return true, nil
		}
		r = min(2*r, limit)
	}
}

// warm keeps the sum of the current eigenvectors as the next Lanczos start:
// it has a component along every one of them.
func (s *spectral) warm() {
	if s.pr.Basis != nil || len(s.sig) == 0 {
		return
	}
	if s.start == nil {
		s.start = make([]float64, s.n)
	}
	for i := range s.start {
		s.start[i] = 0
		for c := range s.sig {
			s.start[i] += s.u.At(i, c)
		}
	}
}

// vectors computes the eigenvectors of the kept eigenvalues of the last eval.
func (s *spectral) vectors() error {
	if s.haveU {
		return nil
	}
	p := len(s.sig)
	s.u = &mat.Dense{}
	if p > 0 {
		if err := s.pe.VectorsTo(s.u, s.lo, s.q); err != nil {
			return err
		}
	}
	s.haveU = true
	s.warm()
	return nil
}

// factor returns K(w) of the last eval as Y diag(lambda) Y^T: Y (n x p)
// holds the eigenvectors (mapped through the basis), lambda the closed form;
// reg is the G-form penalty (G/p) tr K^p (0 in the B-form).
func (s *spectral) factor() (Factor, float64, error) {
	if err := s.vectors(); err != nil {
		return Factor{}, 0, err
	}
	lam, _, reg := s.pr.closedForm(s.sig)
	if len(lam) == 0 {
		return Factor{Lambda: lam}, 0, nil
	}
	if s.pr.Basis == nil {
		return Factor{Y: s.u, Lambda: lam}, reg, nil
	}
	var y mat.Dense
	y.Mul(s.pr.Basis, s.u)
	return Factor{Y: &y, Lambda: lam}, reg, nil
}

// Factor is a PSD kernel K = Y diag(Lambda) Y^T.
type Factor struct {
	Y      *mat.Dense // n x p (nil when K = 0)
	Lambda []float64  // p non-negative weights
}

// Kernel returns K as an n x n matrix.
func (f Factor) Kernel(n int) *mat.SymDense {
	if f.Y == nil {
		return mat.NewSymDense(n, nil)
	}
	return kernelmath.FromEigen(f.Lambda, f.Y, math.Inf(-1))
}

// PairValues writes <M_p, K> for every pair into f: 2 K_ij (Entry) or
// K_ii + K_jj - 2 K_ij (Distance).
func (f Factor) PairValues(dst []float64, pairs []learners.Pair, kind PairKind) {
	if f.Y == nil {
		for e := range dst[:len(pairs)] {
			dst[e] = 0
		}
		return
	}
	raw := f.Y.RawMatrix()
	p := len(f.Lambda)
	for e, pr := range pairs {
		ri := raw.Data[pr.I*raw.Stride : pr.I*raw.Stride+p]
		rj := raw.Data[pr.J*raw.Stride : pr.J*raw.Stride+p]
		v := 0.0
		if kind == Entry {
			for c, l := range f.Lambda {
				v += l * ri[c] * rj[c]
			}
			v *= 2
		} else {
			for c, l := range f.Lambda {
				d := ri[c] - rj[c]
				v += l * d * d
			}
		}
		dst[e] = v
	}
}

// Dot returns <A0, K> = sum_c lambda_c y_c^T A0 y_c through the operator.
func (f Factor) Dot(t Term) float64 {
	if f.Y == nil {
		return 0
	}
	n, p := f.Y.Dims()
	col := make([]float64, n)
	img := make([]float64, n)
	s := 0.0
	for c := 0; c < p; c++ {
		mat.Col(col, c, f.Y)
		t.Apply(img, col)
		d := 0.0
		for i, v := range col {
			d += v * img[i]
		}
		s += f.Lambda[c] * d
	}
	return s
}

// Scaled returns the factor of s K (sharing Y).
func (f Factor) Scaled(s float64) Factor {
	lam := make([]float64, len(f.Lambda))
	for i, l := range f.Lambda {
		lam[i] = s * l
	}
	return Factor{Y: f.Y, Lambda: lam}
}

func (f Factor) clone() Factor {
	out := Factor{Lambda: append([]float64(nil), f.Lambda...)}
	if f.Y != nil {
		out.Y = mat.DenseCopyOf(f.Y)
	}
	return out
}

// String returns "auto", "dense" or "lanczos".
func (e Eigensolver) String() string {
	switch e {
	case Dense:
		return "dense"
	case Lanczos:
		return "lanczos"
	}
	return "auto"
}
