package mklr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Options configures Train. The zero value is the default.
type Options struct {
	// Pair is the pair kernel (default PairTensor).
	Pair PairKernel
	// C weighs the regulariser (C/2) alpha' P_SS alpha against the mean
	// logistic loss (default 1e-5); it must be positive.
	C float64
	// MaxImport caps the import set |S| (default 100).
	MaxImport int
	// Candidates is the number of pairs drawn and scored each round
	// (default 40); their columns take Candidates x N floats.
	Candidates int
	// Tol stops the growth when a round lowers the loss by less than Tol
	// relative (default 1e-3, the spec's 0.1%); a negative Tol never stops
	// it (only MaxImport or running out of candidates do).
	Tol float64
	// NoIntercept drops the intercept b, giving objective (7.3) exactly.
	NoIntercept bool
	// KernelTerm adds gamma K_u(i, j) to the score, gamma unpenalised.
	KernelTerm bool
	// Base adds gamma_t K^t(i, j) to the score for each kernel K^t, each
	// gamma_t unpenalised: typically the base kernels K_u combines, whose
	// weights the logistic loss then refits (then KernelTerm, a combination
	// of them, would only make the fixed features dependent).
	Base []kernelmath.KernelMatrix
	// Seed seeds the draws of candidates.
	Seed uint64
}

func (o *Options) setDefaults() error {
	if o.C == 0 {
		o.C = 1e-5
	}
	if o.MaxImport == 0 {
		o.MaxImport = 100
	}
	if o.Candidates == 0 {
		o.Candidates = 40
	}
	if o.Tol == 0 {
		o.Tol = 1e-3
	}
	switch {
	case o.Pair < PairTensor || o.Pair > PairDifference:
		return fmt.Errorf("%w: mklr: unknown pair kernel %v", learners.ErrInput, o.Pair)
	case !(o.C > 0) || math.IsInf(o.C, 0):
		return fmt.Errorf("%w: mklr: C must be positive and finite, got %v", learners.ErrInput, o.C)
	case o.MaxImport < 0 || o.Candidates < 0:
		return fmt.Errorf("%w: mklr: MaxImport (%d) and Candidates (%d) must be positive", learners.ErrInput, o.MaxImport, o.Candidates)
	case math.IsNaN(o.Tol):
		return fmt.Errorf("%w: mklr: Tol is NaN", learners.ErrInput)
	}
	return nil
}

// depTol: a candidate whose pair-kernel Schur complement against the import
// set is at most depTol times its diagonal is dependent.
const depTol = 1e-8

// Train fits the model on the positive pairs pos (friends) and negative
// pairs neg over the users of k, the combined user kernel (any
// kernelmath.KernelMatrix: rows, entries and the diagonal are read). See the
// package doc for the model and the algorithm. Errors wrap
// learners.ErrInput (a nil kernel, a non-finite diagonal or row, empty pos
// or neg, a pair out of range or of one user twice, bad options), are
// ctx's, or wrap learners.ErrNotConverged, returned with the model of the
// last refit when a Newton refit fails to converge.
func Train(ctx context.Context, k kernelmath.KernelMatrix, pos, neg []learners.Pair, opts Options) (*Model, error) {
	t, err := newTrainer(ctx, k, pos, neg, opts)
	if err != nil {
		return nil, err
	}
	return t.run()
}

// trainer is one training run. The import set S holds m pairs; the fit's
// parameters are theta = (alpha_1..alpha_m, beta_1..beta_q): the import
// coefficients, then those of the q fixed (unpenalised) features.
type trainer struct {
	ctx  context.Context
	k    kernelmath.KernelMatrix
	n    int
	opts Options

	pairs []learners.Pair
	y     []float64 // +1 friends, -1 not
	// fixed holds the unpenalised features over the pairs: the intercept's
	// ones, K_u(i, j) and the base kernels' K^t(i, j), as the options ask;
	// each a row of fbuf (q x N, row-major), so that they are one matrix F.
	fixed [][]float64
	fbuf  []float64

	capS int
	imp  []int          // indices of the imported pairs
	rows [][2][]float64 // K(., s1) and K(., s2) for each import s
	kt   []float64      // m x N, row-major: kt[s*N+t] = P(pair t, import s); capacity doubles
	kss  []float64      // capS x capS: P over the imports (both triangles)
	lk   []float64      // capS x capS: lower Cholesky factor of kss
	rest []int          // pairs still candidates: not imported, not dependent

	theta   []float64
	f, r, w []float64 // scores, loss derivative and curvature per pair
	loss    float64
	grad    []float64
	hess    mat.Cholesky // of the Hessian at theta, or near it (refit)
	hmat    []float64    // the Hessian factorised, dim() x dim()
	rng     *rand.Rand
	stats   Stats
}

// newTrainer checks the input and sets up a run.
func newTrainer(ctx context.Context, k kernelmath.KernelMatrix, pos, neg []learners.Pair, opts Options) (*trainer, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	if k == nil {
		return nil, fmt.Errorf("%w: mklr: no kernel", learners.ErrInput)
	}
	n := k.Dim()
	for i, v := range k.Diag() {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: mklr: the kernel's diagonal holds %v at %d", learners.ErrInput, v, i)
		}
	}
	for b, kb := range opts.Base {
		if kb == nil || kb.Dim() != n {
			return nil, fmt.Errorf("%w: mklr: base kernel %d is nil or not %d x %d", learners.ErrInput, b, n, n)
		}
	}
	if len(pos) == 0 || len(neg) == 0 {
		return nil, fmt.Errorf("%w: mklr: %d positive and %d negative pairs: both classes are needed", learners.ErrInput, len(pos), len(neg))
	}
	nPairs := len(pos) + len(neg)
	t := &trainer{
		ctx: ctx, k: k, n: n, opts: opts,
		pairs: make([]learners.Pair, 0, nPairs), y: make([]float64, 0, nPairs),
		rng:   rand.New(rand.NewPCG(opts.Seed, 0x6976_6d)),
		stats: Stats{Pairs: nPairs, Positives: len(pos)},
	}
	for c, set := range [][]learners.Pair{pos, neg} {
		what, y := "positive", 1.0
		if c == 1 {
			what, y = "negative", -1
		}
		for _, p := range set {
			if err := checkPair(what, p, n); err != nil {
				return nil, err
			}
			t.pairs = append(t.pairs, p)
			t.y = append(t.y, y)
		}
	}
	return t, nil
}

func (t *trainer) m() int { return len(t.imp) }

// dim is the number of parameters.
func (t *trainer) dim() int { return t.m() + len(t.fixed) }

// initFixed sets up the fixed features and starts theta at the best
// constant (the log-odds of the positives) when there is an intercept.
func (t *trainer) initFixed() error {
	nPairs := len(t.pairs)
	kernels := t.termKernels()
	q := len(kernels)
	if !t.opts.NoIntercept {
		q++
	}
	t.fbuf = make([]float64, q*nPairs)
	for j := 0; j < q; j++ {
		t.fixed = append(t.fixed, t.fbuf[j*nPairs:(j+1)*nPairs])
	}
	feats := t.fixed
	if !t.opts.NoIntercept {
		p := float64(t.stats.Positives)
		b := math.Log(p / (float64(nPairs) - p))
		for i := range feats[0] {
			feats[0][i] = 1
			t.f[i] = b
		}
		t.theta = append(t.theta, b)
		feats = feats[1:]
	}
	chunks := (nPairs + chunkPairs - 1) / chunkPairs
	err := parallel(t.ctx, chunks, func() func(int) {
		return func(c int) {
			lo, hi := c*chunkPairs, min(nPairs, (c+1)*chunkPairs)
			for j, k := range kernels {
				for i, p := range t.pairs[lo:hi] {
					feats[j][lo+i] = k.At(p.I, p.J)
				}
			}
		}
	})
	if err != nil {
		return err
	}
	for j := range kernels {
		for i, v := range feats[j] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				p := t.pairs[i]
				return fmt.Errorf("%w: mklr: a kernel holds %v at (%d, %d)", learners.ErrInput, v, p.I, p.J)
			}
		}
		t.theta = append(t.theta, 0)
	}
	return nil
}

// termKernels lists the kernels of the unpenalised kernel terms, in the
// order of their coefficients: K_u (KernelTerm), then Options.Base.
func (t *trainer) termKernels() []kernelmath.KernelMatrix {
	var ks []kernelmath.KernelMatrix
	if t.opts.KernelTerm {
		ks = append(ks, t.k)
	}
	return append(ks, t.opts.Base...)
}

func (t *trainer) run() (*Model, error) {
	nPairs := len(t.pairs)
	t.capS = min(t.opts.MaxImport, nPairs)
	t.kt = make([]float64, 0, min(t.capS, 16)*nPairs)
	t.kss = make([]float64, t.capS*t.capS)
	t.lk = make([]float64, t.capS*t.capS)
	t.rest = make([]int, nPairs)
	for i := range t.rest {
		t.rest[i] = i
	}
	t.f, t.r, t.w = make([]float64, nPairs), make([]float64, nPairs), make([]float64, nPairs)
	if err := t.initFixed(); err != nil {
		return nil, err
	}
	err := t.refit()
	t.stats.Losses = append(t.stats.Losses, t.loss)
	for err == nil {
		if t.m() == t.capS {
			t.stats.Stop = "cap"
			break
		}
		if len(t.rest) == 0 {
			t.stats.Stop = "exhausted"
			break
		}
		var best *candidate
		if best, err = t.pickCandidate(); err != nil {
			break
		}
		if best == nil {
			continue // every candidate drawn was dependent: draw again
		}
		t.add(best)
		prev := t.loss
		if err = t.refit(); err != nil {
			break
		}
		t.stats.Losses = append(t.stats.Losses, t.loss)
		if t.opts.Tol >= 0 && prev-t.loss < t.opts.Tol*t.loss {
			t.stats.Stop = "tol"
			break
		}
	}
	if err != nil && !errors.Is(err, learners.ErrNotConverged) {
		return nil, err
	}
	t.stats.Loss = t.loss
	m := t.m()
	imports := make([]learners.Pair, m)
	for s, idx := range t.imp {
		imports[s] = t.pairs[idx]
	}
	st := State{Pair: t.opts.Pair, Imports: imports, Alpha: slices.Clone(t.theta[:m]), KernelTerm: t.opts.KernelTerm, Stats: t.stats}
	beta := t.theta[m:]
	if !t.opts.NoIntercept {
		st.Bias, beta = beta[0], beta[1:]
	}
	if t.opts.KernelTerm {
		st.Gamma = beta[0]
	}
	if len(t.opts.Base) > 0 {
		st.BaseWeights = slices.Clone(beta[len(beta)-len(t.opts.Base):])
	}
	md, merr := newModel(st, t.k, t.opts.Base, t.rows)
	if merr != nil {
		return nil, merr
	}
	return md, err
}

// candidate is a pair scored for import.
type candidate struct {
	idx   int       // pair index
	a, b  []float64 // K(., l1) and K(., l2)
	kS    []float64 // P(l, s) for s in S
	kll   float64   // P(l, l)
	z     []float64 // L_K^-1 kS
	schur float64   // kll - z'z
	h     []float64 // the Hessian's entries of l against the parameters
	hll   float64   // and its diagonal entry
	dep   bool      // in the span of the imports
	err   error
}

// pickCandidate draws candidates, drops the dependent ones from the pool
// and returns the one with the largest predicted decrease (nil if all
// drawn were dependent, so that every call shrinks the pool or finds one).
func (t *trainer) pickCandidate() (*candidate, error) {
	c := min(t.opts.Candidates, len(t.rest))
	for a := 0; a < c; a++ {
		b := a + t.rng.IntN(len(t.rest)-a)
		t.rest[a], t.rest[b] = t.rest[b], t.rest[a]
	}
	cands := make([]*candidate, c)
	for a := range cands {
		cands[a] = &candidate{idx: t.rest[a]}
	}
	if err := parallel(t.ctx, c, func() func(int) {
		return func(a int) { t.prepare(cands[a]) }
	}); err != nil {
		return nil, err
	}
	for _, cd := range cands {
		if cd.err != nil {
			return nil, cd.err
		}
	}
	defer t.dropDependent(cands)
	live := make([]*candidate, 0, c)
	for _, cd := range cands {
		if !cd.dep {
			live = append(live, cd)
		}
	}
	sums, err := t.candidateSums(live)
	if err != nil {
		return nil, err
	}
	// One Newton step on S + {l} from the fit on S (new coefficient 0): with
	// v = H^-1 g and u = H^-1 h, the quadratic model falls by
	// (g_l - h'v)^2 / (2 (h_ll - h'u)).
	m, d := t.m(), t.dim()
	invN := 1 / float64(len(t.pairs))
	v, err := t.solveHessian(t.grad)
	if err != nil {
		return nil, err
	}
	h := make([]float64, d)
	var best *candidate
	bestGain := math.Inf(-1)
	for a, cd := range live {
		row := sums[a*(d+2) : (a+1)*(d+2)]
		for s := range h {
			h[s] = invN * row[s]
		}
		floats.AddScaled(h[:m], t.opts.C, cd.kS)
		hu, err := t.solveHessian(h)
		if err != nil {
			return nil, err
		}
		cd.h, cd.hll = slices.Clone(h), invN*row[d+1]+t.opts.C*cd.kll
		schur := cd.hll - floats.Dot(h, hu)
		num := invN*row[d] + t.opts.C*floats.Dot(cd.kS, t.theta[:m]) - floats.Dot(h, v)
		if !(schur > 0) {
			cd.dep = true // dependent in the Hessian's metric: rounding
			continue
		}
		if gain := num * num / (2 * schur); gain > bestGain {
			best, bestGain = cd, gain
		}
	}
	return best, nil
}

// candidateSums returns, for each candidate l, a row of dim() + 2 sums over
// the training pairs t: sum_t w_t P(t, l) B(t) for each row B of the
// parameters' features [Kt; F] (the coupling with the imports, then with
// the fixed features), sum_t r_t P(t, l) and sum_t w_t P(t, l)^2. The
// candidates' user-kernel rows are laid out user by user, so that a pair
// reads two short rows for all the candidates' P(t, .) rather than four
// scattered entries a candidate; each worker forms the candidates' weighted
// columns for one chunk of pairs at a time, so no column over all the pairs
// is stored.
func (t *trainer) candidateSums(cands []*candidate) ([]float64, error) {
	c, m, d := len(cands), t.m(), t.dim()
	cols := d + 2
	out := make([]float64, c*cols)
	if c == 0 {
		return out, nil
	}
	rows := make([]float64, t.n*2*c) // rows[u*2c+2a], rows[u*2c+2a+1]: K(u, l1), K(u, l2) of candidate a
	for a, cd := range cands {
		for u := range cd.a {
			rows[u*2*c+2*a], rows[u*2*c+2*a+1] = cd.a[u], cd.b[u]
		}
	}
	err := t.overPairs(c, cols, out, func() func(int, int, []float64) {
		wv := make([]float64, c*chunkPairs)
		v, g, hll := make([]float64, c), make([]float64, c), make([]float64, c)
		return func(lo, hi int, dst []float64) {
			width := hi - lo
			clear(g)
			clear(hll)
			for i, q := range t.pairs[lo:hi] {
				t.opts.Pair.values(v, rows[q.I*2*c:(q.I+1)*2*c], rows[q.J*2*c:(q.J+1)*2*c])
				w, r := t.w[lo+i], t.r[lo+i]
				for a, va := range v {
					x := w * va
					wv[a*width+i] = x
					g[a] += r * va
					hll[a] += x * va
				}
			}
			for a := range cands {
				dst[a*cols+d], dst[a*cols+d+1] = g[a], hll[a]
			}
			wvm := blas64.General{Rows: c, Cols: width, Stride: width, Data: wv}
			if m > 0 {
				blas64.Gemm(blas.NoTrans, blas.Trans, 1, wvm, t.ktCols(lo, hi), 0, blas64.General{Rows: c, Cols: m, Stride: cols, Data: dst})
			}
			if q := len(t.fixed); q > 0 {
				blas64.Gemm(blas.NoTrans, blas.Trans, 1, wvm, t.fixedCols(lo, hi), 0, blas64.General{Rows: c, Cols: q, Stride: cols, Data: dst[m:]})
			}
		}
	})
	return out, err
}

// dropDependent removes the dependent candidates (rest[:len(cands)]) from
// the pool for good: they can lower nothing now or later.
func (t *trainer) dropDependent(cands []*candidate) {
	kept := t.rest[:0]
	for a, idx := range t.rest {
		if a >= len(cands) || !cands[a].dep {
			kept = append(kept, idx)
		} else {
			t.stats.Dependent++
		}
	}
	t.rest = kept
}

// prepare computes a candidate's user-kernel rows and its pair kernel
// against itself and the imports, which tell whether it is dependent.
func (t *trainer) prepare(cd *candidate) {
	p := t.pairs[cd.idx]
	cd.a, cd.b = make([]float64, t.n), make([]float64, t.n)
	t.k.Row(p.I, cd.a)
	t.k.Row(p.J, cd.b)
	for u := range cd.a {
		if math.IsNaN(cd.a[u]-cd.b[u]) || math.IsInf(cd.a[u]-cd.b[u], 0) {
			cd.err = fmt.Errorf("%w: mklr: kernel rows %d and %d hold a non-finite entry at column %d", learners.ErrInput, p.I, p.J, u)
			return
		}
	}
	m := t.m()
	cd.kS = make([]float64, m)
	cd.z = make([]float64, m)
	cd.kll = t.pairValue(cd.a, cd.b, p)
	cd.schur = cd.kll
	for s, idx := range t.imp {
		cd.kS[s] = t.pairValue(cd.a, cd.b, t.pairs[idx])
		row := t.lk[s*t.capS : s*t.capS+s]
		cd.z[s] = (cd.kS[s] - floats.Dot(row, cd.z[:s])) / t.lk[s*t.capS+s]
		cd.schur -= cd.z[s] * cd.z[s]
	}
	if !(cd.kll > 0) || cd.schur <= depTol*cd.kll {
		cd.dep = true
	}
}

// pairValue is the pair kernel between pair q and the pair whose user-kernel
// rows are a and b.
func (t *trainer) pairValue(a, b []float64, q learners.Pair) float64 {
	return t.opts.Pair.value(a, b, q)
}

// add imports a candidate, with coefficient 0.
func (t *trainer) add(cd *candidate) {
	m, nPairs := t.m(), len(t.pairs)
	if cap(t.kt) < (m+1)*nPairs {
		t.kt = append(make([]float64, 0, min(2*(m+1), t.capS)*nPairs), t.kt...)
	}
	t.kt = t.kt[:(m+1)*nPairs]
	row := t.kt[m*nPairs:]
	for i, q := range t.pairs {
		row[i] = t.pairValue(cd.a, cd.b, q)
	}
	for s, v := range cd.kS {
		t.kss[s*t.capS+m] = v
		t.kss[m*t.capS+s] = v
		t.lk[m*t.capS+s] = cd.z[s]
	}
	t.kss[m*t.capS+m] = cd.kll
	t.lk[m*t.capS+m] = math.Sqrt(cd.schur)
	t.hmat = t.border(cd.h, cd.hll)
	t.imp = append(t.imp, cd.idx)
	t.rows = append(t.rows, [2][]float64{cd.a, cd.b})
	t.theta = slices.Insert(t.theta, m, 0)
	t.rest = slices.DeleteFunc(t.rest, func(i int) bool { return i == cd.idx })
}

// ktCols is the block of Kt (m x N) for the pairs [lo, hi).
func (t *trainer) ktCols(lo, hi int) blas64.General {
	return blas64.General{Rows: t.m(), Cols: hi - lo, Stride: len(t.pairs), Data: t.kt[lo:]}
}

// fixedCols is the block of F (q x N, the fixed features) for the pairs
// [lo, hi).
func (t *trainer) fixedCols(lo, hi int) blas64.General {
	return blas64.General{Rows: len(t.fixed), Cols: hi - lo, Stride: len(t.pairs), Data: t.fbuf[lo:]}
}
