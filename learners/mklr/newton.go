package mklr

import (
	"context"
	"errors"
	"fmt"
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

// lossAt returns the mean logistic loss of scores f.
func (t *trainer) lossAt(f []float64) float64 {
	s := 0.0
	for i, fi := range f {
		s += softplus(-t.y[i] * fi)
	}
	return s / float64(len(f))
}

// gradient sets loss, r, w and grad at theta (t.f being the scores of theta):
//
//	grad_alpha = (1/N) Kt r + C P_SS alpha,   grad_beta = (1/N) F' r,
//
// with r_t = sigmoid(f_t) - [y_t = 1] and w_t = sigmoid(f_t) sigmoid(-f_t).
func (t *trainer) gradient() {
	m, nPairs := t.m(), len(t.pairs)
	invN := 1 / float64(nPairs)
	alpha := t.theta[:m]
	t.loss = t.lossAt(t.f) + t.opts.C/2*t.regAt(alpha, alpha)
	for i, fi := range t.f {
		p := sigmoid(fi)
		t.r[i] = p
		if t.y[i] > 0 {
			t.r[i] = p - 1
		}
		t.w[i] = p * (1 - p)
	}
	t.grad = make([]float64, t.dim())
	for j, fj := range t.fixed {
		t.grad[m+j] = invN * floats.Dot(t.r, fj)
	}
	if m > 0 {
		blas64.Gemv(blas.NoTrans, invN, t.ktCols(0, nPairs), blas64.Vector{N: nPairs, Inc: 1, Data: t.r}, 0, blas64.Vector{N: m, Inc: 1, Data: t.grad})
		for a := 0; a < m; a++ {
			t.grad[a] += t.opts.C * floats.Dot(t.kss[a*t.capS:a*t.capS+m], alpha)
		}
	}
}

// hessian factorises the Hessian at theta (after gradient, whose w it uses):
//
//	H = [(1/N) Kt W Kt' + C P_SS, (1/N) Kt W F; ., (1/N) F' W F].
func (t *trainer) hessian() error {
	m, d, nPairs := t.m(), t.dim(), len(t.pairs)
	if d == 0 {
		return nil
	}
	invN := 1 / float64(nPairs)
	hd := make([]float64, d*d)
	wf := make([]float64, nPairs)
	for j, fj := range t.fixed {
		floats.MulTo(wf, t.w, fj)
		for l := j; l < len(t.fixed); l++ {
			v := invN * floats.Dot(wf, t.fixed[l])
			hd[(m+j)*d+m+l], hd[(m+l)*d+m+j] = v, v
		}
		if m > 0 {
			col := make([]float64, m)
			blas64.Gemv(blas.NoTrans, invN, t.ktCols(0, nPairs), blas64.Vector{N: nPairs, Inc: 1, Data: wf}, 0, blas64.Vector{N: m, Inc: 1, Data: col})
			for a, v := range col {
				hd[a*d+m+j], hd[(m+j)*d+a] = v, v
			}
		}
	}
	if m > 0 {
		kwk := make([]float64, m*m)
		err := t.overPairs(m, m, kwk, func() func(int, int, []float64) {
			scaled := make([]float64, m*chunkPairs)
			return func(lo, hi int, dst []float64) {
				width := hi - lo
				for s := 0; s < m; s++ {
					floats.MulTo(scaled[s*width:(s+1)*width], t.w[lo:hi], t.kt[s*nPairs+lo:s*nPairs+hi])
				}
				blas64.Gemm(blas.NoTrans, blas.Trans, 1, blas64.General{Rows: m, Cols: width, Stride: width, Data: scaled},
					t.ktCols(lo, hi), 0, blas64.General{Rows: m, Cols: m, Stride: m, Data: dst})
			}
		})
		if err != nil {
			return err
		}
		for a := 0; a < m; a++ {
			for b := 0; b < m; b++ {
				hd[a*d+b] = invN*kwk[a*m+b] + t.opts.C*t.kss[a*t.capS+b]
			}
		}
	}
	return t.factorHessian(mat.NewSymDense(d, hd))
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
// decrement is at most newtonTol of the loss. After a step, the decrement is
// first estimated with the Hessian of the step's start and the Hessian is
// recomputed only when that estimate is not yet small enough, which saves
// one Hessian a refit; so the factor left in place (that the candidates of
// the next round are scored with) may be that of the last step's start.
func (t *trainer) refit() error {
	m, nPairs := t.m(), len(t.pairs)
	df := make([]float64, nPairs)
	trial := make([]float64, nPairs)
	t.gradient()
	if err := t.hessian(); err != nil {
		return err
	}
	fresh := true
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
		if dec/2 <= newtonTol*t.loss || t.loss < lossFloor {
			return nil
		}
		if !fresh {
			if err := t.hessian(); err != nil {
				return err
			}
			fresh = true
			continue
		}
		if it == maxNewton {
			return fmt.Errorf("mklr: %w: Newton refit with %d imports: decrement %.3g after %d steps", learners.ErrNotConverged, m, dec, it)
		}
		it++
		t.stats.Newton++
		// The change of the scores along dir, and the regulariser as a
		// quadratic in the step length s.
		clear(df)
		if m > 0 {
			blas64.Gemv(blas.Trans, 1, t.ktCols(0, nPairs), blas64.Vector{N: m, Inc: 1, Data: dir[:m]}, 0, blas64.Vector{N: nPairs, Inc: 1, Data: df})
		}
		for j, fj := range t.fixed {
			floats.AddScaled(df, dir[m+j], fj)
		}
		alpha := t.theta[:m]
		r0, r1, r2 := t.regAt(alpha, alpha), t.regAt(alpha, dir[:m]), t.regAt(dir[:m], dir[:m])
		// Near the optimum of an ill-conditioned problem the decrement can
		// stay above tolerance by rounding (H^-1 amplifies the rounding of
		// g); a step that lowers the loss by no more than rounding, with a
		// decrement already tiny, ends the refit.
		resolved := dec/2 <= stallTol*t.loss
		s := 1.0
		for ls := 0; ; ls++ {
			floats.AddScaledTo(trial, t.f, s, df)
			l := t.lossAt(trial) + t.opts.C/2*(r0+2*s*r1+s*s*r2)
			if l <= t.loss-1e-4*s*dec {
				resolved = resolved && t.loss-l <= 1e-14*t.loss
				break
			}
			if ls == 60 {
				if resolved {
					return nil
				}
				return fmt.Errorf("mklr: %w: line search failed with %d imports (decrement %.3g)", learners.ErrNotConverged, m, dec)
			}
			s /= 2
		}
		floats.AddScaled(t.theta, s, dir)
		copy(t.f, trial)
		t.gradient()
		fresh = false
		if resolved {
			return nil
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
