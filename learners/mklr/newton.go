package mklr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

const (
	// newtonTol: a refit stops when half the squared Newton decrement is at
	// most newtonTol times the loss.
	newtonTol = 1e-14
	// stallTol: below this relative decrement, a step that does not lower
	// the loss beyond rounding ends a refit (see refit).
	stallTol  = 1e-8
	maxNewton = 50
	// chordRate: a step with an earlier point's Hessian is taken while the
	// decrement falls at least this much a step (see refit).
	chordRate = 1e-2
	// lossFloor: a refit whose loss is below it has every training pair on
	// its side with a margin of about 23 and stops: on pairs that the
	// unpenalised terms separate, those would otherwise grow without bound
	// and the loss halve forever.
	lossFloor = 1e-10
	// chunkPairs is the number of training pairs a worker takes at a time
	// in the Hessian and candidate products.
	chunkPairs = 4096
)

// regAt returns alpha' P_SS beta over the first len(beta) imports.
func (t *trainer) regAt(alpha, beta []float64) float64 {
	s := 0.0
	for a, x := range alpha {
		s += x * floats.Dot(t.kss[a*t.capS:a*t.capS+len(beta)], beta)
	}
	return s
}

// evalPairs returns the mean logistic loss of scores f and sets r and w,
// the loss's first and second derivatives in f (see gradient), with one
// exponential and one logarithm a pair, in parallel over chunks of pairs
// whose partial sums are added in chunk order.
func (t *trainer) evalPairs(f, r, w []float64) (float64, error) {
	nPairs := len(f)
	chunks := (nPairs + chunkPairs - 1) / chunkPairs
	partial := make([]float64, chunks)
	err := parallel(t.ctx, chunks, func() func(int) {
		return func(c int) {
			lo, hi := c*chunkPairs, min(nPairs, (c+1)*chunkPairs)
			s := 0.0
			for i, fi := range f[lo:hi] {
				// e = exp(-|f|): sigmoid(f) and sigmoid(-f) are 1/(1+e) and
				// e/(1+e) in the order of f's sign, and
				// ln(1 + exp(-y f)) = max(-y f, 0) + ln(1 + e).
				e := math.Exp(-math.Abs(fi))
				p, q := 1/(1+e), e/(1+e) // sigmoid(f), sigmoid(-f)
				if fi < 0 {
					p, q = q, p
				}
				y := t.y[lo+i]
				s += max(-y*fi, 0) + math.Log1p(e)
				if y > 0 {
					r[lo+i] = -q
				} else {
					r[lo+i] = p
				}
				w[lo+i] = p * q
			}
			partial[c] = s
		}
	})
	return floats.Sum(partial) / float64(nPairs), err
}

// gradient sets loss, r, w and grad at theta (t.f being the scores of theta):
//
//	grad_alpha = (1/N) Kt r + C P_SS alpha,   grad_beta = (1/N) F' r,
//
// with r_t = sigmoid(f_t) - [y_t = 1] and w_t = sigmoid(f_t) sigmoid(-f_t).
func (t *trainer) gradient() error {
	l, err := t.evalPairs(t.f, t.r, t.w)
	if err != nil {
		return err
	}
	alpha := t.theta[:t.m()]
	t.loss = l + t.opts.C/2*t.regAt(alpha, alpha)
	return t.setGrad()
}

// setGrad sets grad from r and theta: one pass over [Kt; F] in chunks of
// pairs.
func (t *trainer) setGrad() error {
	m, q, d := t.m(), len(t.fixed), t.dim()
	invN := 1 / float64(len(t.pairs))
	t.grad = make([]float64, d)
	if d == 0 {
		return nil
	}
	err := t.overPairs(d, 1, t.grad, func() func(int, int, []float64) {
		return func(lo, hi int, dst []float64) {
			r := blas64.Vector{N: hi - lo, Inc: 1, Data: t.r[lo:hi]}
			if m > 0 {
				blas64.Gemv(blas.NoTrans, 1, t.ktCols(lo, hi), r, 0, blas64.Vector{N: m, Inc: 1, Data: dst})
			}
			if q > 0 {
				blas64.Gemv(blas.NoTrans, 1, t.fixedCols(lo, hi), r, 0, blas64.Vector{N: q, Inc: 1, Data: dst[m:]})
			}
		}
	})
	if err != nil {
		return err
	}
	floats.Scale(invN, t.grad)
	alpha := t.theta[:m]
	for a := 0; a < m; a++ {
		t.grad[a] += t.opts.C * floats.Dot(t.kss[a*t.capS:a*t.capS+m], alpha)
	}
	return nil
}

// scoreStep sets df to the change of the scores along the parameter step
// dir: Kt' dir_alpha + F' dir_beta, in parallel over chunks of pairs.
func (t *trainer) scoreStep(dir, df []float64) error {
	m, q, nPairs := t.m(), len(t.fixed), len(t.pairs)
	chunks := (nPairs + chunkPairs - 1) / chunkPairs
	return parallel(t.ctx, chunks, func() func(int) {
		return func(c int) {
			lo, hi := c*chunkPairs, min(nPairs, (c+1)*chunkPairs)
			out := blas64.Vector{N: hi - lo, Inc: 1, Data: df[lo:hi]}
			beta := 0.0
			if m > 0 {
				blas64.Gemv(blas.Trans, 1, t.ktCols(lo, hi), blas64.Vector{N: m, Inc: 1, Data: dir[:m]}, 0, out)
				beta = 1
			}
			if q > 0 {
				blas64.Gemv(blas.Trans, 1, t.fixedCols(lo, hi), blas64.Vector{N: q, Inc: 1, Data: dir[m:]}, beta, out)
			}
		}
	})
}

// hessian factorises the Hessian at theta (after gradient, whose w it uses):
//
//	H = (1/N) B W B' + C [P_SS, 0; 0, 0],   B = [Kt; F],
//
// B W B' formed as (B W^1/2)(B W^1/2)', one triangle, over chunks of pairs.
func (t *trainer) hessian() error {
	m, d, nPairs := t.m(), t.dim(), len(t.pairs)
	if d == 0 {
		return nil
	}
	bwb := make([]float64, d*d)
	err := t.overPairs(d, d, bwb, func() func(int, int, []float64) {
		scaled := make([]float64, d*chunkPairs)
		sw := make([]float64, chunkPairs)
		return func(lo, hi int, dst []float64) {
			width := hi - lo
			for i, w := range t.w[lo:hi] {
				sw[i] = math.Sqrt(w)
			}
			for s := 0; s < m; s++ {
				floats.MulTo(scaled[s*width:(s+1)*width], sw[:width], t.kt[s*nPairs+lo:s*nPairs+hi])
			}
			for j, fj := range t.fixed {
				floats.MulTo(scaled[(m+j)*width:(m+j+1)*width], sw[:width], fj[lo:hi])
			}
			blas64.Syrk(blas.NoTrans, 1, blas64.General{Rows: d, Cols: width, Stride: width, Data: scaled},
				0, blas64.Symmetric{Uplo: blas.Upper, N: d, Stride: d, Data: dst})
		}
	})
	if err != nil {
		return err
	}
	invN := 1 / float64(nPairs)
	hd := make([]float64, d*d)
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			v := invN * bwb[a*d+b]
			if b < m {
				v += t.opts.C * t.kss[a*t.capS+b]
			}
			hd[a*d+b], hd[b*d+a] = v, v
		}
	}
	t.stats.Hessians++
	t.hmat = hd
	return t.factorHessian(mat.NewSymDense(d, hd))
}

// border returns the Hessian t.hmat (over m imports) with the row and
// column of a new import inserted at m: h its entries against the other
// parameters (in their order) and hll its diagonal.
func (t *trainer) border(h []float64, hll float64) []float64 {
	m, d := t.m(), len(h)
	at := func(a int) int { // index of parameter a of the new order in the old
		if a > m {
			return a - 1
		}
		return a
	}
	out := make([]float64, (d+1)*(d+1))
	for a := 0; a <= d; a++ {
		for b := 0; b <= d; b++ {
			switch {
			case a == m && b == m:
				out[a*(d+1)+b] = hll
			case a == m:
				out[a*(d+1)+b] = h[at(b)]
			case b == m:
				out[a*(d+1)+b] = h[at(a)]
			default:
				out[a*(d+1)+b] = t.hmat[at(a)*d+at(b)]
			}
		}
	}
	return out
}

// factorHessian factorises h, adding a growing multiple of the identity if
// rounding has made it indefinite (it is positive definite in exact
// arithmetic when the fixed features are independent on the pairs: P_SS is,
// by the dependence test, and C > 0).
func (t *trainer) factorHessian(h *mat.SymDense) error {
	d := h.SymmetricDim()
	scale := 0.0
	for a := 0; a < d; a++ {
		scale = max(scale, h.At(a, a))
	}
	hj := mat.NewSymDense(d, nil)
	for jitter := 0.0; jitter <= 1e-6*scale; jitter = max(1e-14*scale, 10*jitter) {
		hj.CopySym(h)
		for a := 0; a < d; a++ {
			hj.SetSym(a, a, h.At(a, a)+jitter)
		}
		if t.hess.Factorize(hj) {
			return nil
		}
	}
	return fmt.Errorf("mklr: %w: the Hessian is not positive definite (are the fixed features constant on the pairs?)", learners.ErrNotConverged)
}

// solveHessian returns H^-1 b (empty when there are no parameters). A
// large condition number is not an error: the solve is still the best
// available, and the line search guards the Newton step.
func (t *trainer) solveHessian(b []float64) ([]float64, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var x mat.VecDense
	if err := t.hess.SolveVecTo(&x, mat.NewVecDense(len(b), b)); err != nil && !errors.As(err, new(mat.Condition)) {
		return nil, fmt.Errorf("mklr: %w", err)
	}
	return x.RawVector().Data, nil
}

// refit minimises the loss over theta by Newton steps with Armijo
// backtracking from the current theta, until half the squared Newton
// decrement is at most newtonTol of the loss.
//
// DEVIATION (speed; the optimum is the same within that tolerance, which is
// checked on the exact gradient with a Hessian at most one step old, as
// before): a step reuses the Hessian of an earlier point (a chord step)
// while the decrement keeps falling by chordRate a step, and the Hessian is
// recomputed when it does not. A refit after an import starts from the
// previous Hessian bordered by the import's row and column (t.hmat, set by
// add from the sums its choice computed at the current theta), so it forms
// none before its first step. The Hessian changes little between nearby
// points: on BlogCatalog a decrement estimated with the previous step's
// Hessian is within 30% of the exact one, and the whole friend task forms
// 108 Hessians in 187 steps instead of 152 in 152, with the same imports
// and losses (docs/scaling.md).
func (t *trainer) refit() error {
	m, nPairs := t.m(), len(t.pairs)
	df := make([]float64, nPairs)
	trial, tr, tw := make([]float64, nPairs), make([]float64, nPairs), make([]float64, nPairs)
	if err := t.gradient(); err != nil {
		return err
	}
	// age: the steps taken since the factor's Hessian was formed (the
	// bordered one counts as formed here); prev: the last step's decrement.
	age, prev := 0, math.Inf(1)
	if d := t.dim(); d > 0 && len(t.hmat) == d*d {
		if err := t.factorHessian(mat.NewSymDense(d, t.hmat)); err != nil {
			return err
		}
	} else if err := t.hessian(); err != nil {
		return err
	}
steps:
	for it := 0; ; {
		if err := t.ctx.Err(); err != nil {
			return err
		}
		dir, err := t.solveHessian(t.grad)
		if err != nil {
			return err
		}
		floats.Scale(-1, dir)
		dec := -floats.Dot(t.grad, dir)
		// The decrement is trusted for the end from a Hessian at most one
		// step old, as without chord steps.
		converged := dec/2 <= newtonTol*t.loss
		if converged && age <= 1 || t.loss < lossFloor {
			return nil
		}
		if age > 0 && (converged || dec > chordRate*prev) {
			if err := t.hessian(); err != nil {
				return err
			}
			age = 0
			continue
		}
		if it == maxNewton {
			return fmt.Errorf("mklr: %w: Newton refit with %d imports: decrement %.3g after %d steps", learners.ErrNotConverged, m, dec, it)
		}
		it++
		t.stats.Newton++
		// The change of the scores along dir, and the regulariser as a
		// quadratic in the step length s.
		if err := t.scoreStep(dir, df); err != nil {
			return err
		}
		alpha := t.theta[:m]
		r0, r1, r2 := t.regAt(alpha, alpha), t.regAt(alpha, dir[:m]), t.regAt(dir[:m], dir[:m])
		// Near the optimum of an ill-conditioned problem the decrement can
		// stay above tolerance by rounding (H^-1 amplifies the rounding of
		// g); a Newton step that lowers the loss by no more than rounding,
		// with a decrement already tiny, ends the refit. A chord step that
		// does so is retried as a Newton step: its direction may be poor.
		resolved := dec/2 <= stallTol*t.loss
		s, l := 1.0, 0.0
		for ls := 0; ; ls++ {
			floats.AddScaledTo(trial, t.f, s, df)
			lt, err := t.evalPairs(trial, tr, tw)
			if err != nil {
				return err
			}
			l = lt + t.opts.C/2*(r0+2*s*r1+s*s*r2)
			if l <= t.loss-1e-4*s*dec {
				resolved = resolved && t.loss-l <= 1e-14*t.loss
				break
			}
			if ls == 60 {
				switch {
				case age > 0:
					if err := t.hessian(); err != nil {
						return err
					}
					age = 0
					continue steps
				case resolved:
					return nil
				}
				return fmt.Errorf("mklr: %w: line search failed with %d imports (decrement %.3g)", learners.ErrNotConverged, m, dec)
			}
			s /= 2
		}
		// The accepted trial's scores, derivatives and loss are the new
		// point's: only the gradient is left to form.
		floats.AddScaled(t.theta, s, dir)
		t.f, trial = trial, t.f
		t.r, tr = tr, t.r
		t.w, tw = tw, t.w
		t.loss = l
		if err := t.setGrad(); err != nil {
			return err
		}
		if resolved && age == 0 {
			return nil
		}
		age, prev = age+1, dec
		if resolved {
			prev = 0 // a Newton step next
		}
	}
}

// parallel runs body(a) for a in [0, count) on GOMAXPROCS workers, each
// with its own scratch from newBody, and returns ctx's error if cancelled.
func parallel(ctx context.Context, count int, newBody func() func(int)) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), count); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := newBody()
			for ctx.Err() == nil {
				a := int(next.Add(1)) - 1
				if a >= count {
					return
				}
				body(a)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// overPairs sums a rows x cols product over the training pairs in chunks of
// chunkPairs: each worker gets its part function (and scratch) from
// newPart, part(lo, hi, dst) writes the chunk's product into dst, and the
// chunks' products are added into out in chunk order, so that the result
// does not depend on the number of workers.
func (t *trainer) overPairs(rows, cols int, out []float64, newPart func() func(lo, hi int, dst []float64)) error {
	nPairs := len(t.pairs)
	chunks := (nPairs + chunkPairs - 1) / chunkPairs
	size := rows * cols
	partial := make([]float64, chunks*size)
	err := parallel(t.ctx, chunks, func() func(int) {
		part := newPart()
		return func(c int) {
			part(c*chunkPairs, min(nPairs, (c+1)*chunkPairs), partial[c*size:(c+1)*size])
		}
	})
	if err != nil {
		return err
	}
	clear(out)
	for c := 0; c < chunks; c++ {
		floats.Add(out, partial[c*size:(c+1)*size])
	}
	return nil
}
