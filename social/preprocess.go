package social

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
)

// Thesis-mode PSD test: a smallest eigenvalue below -psdTol (entries are at
// most 1 after the row scaling) counts as negative, and the shift is
// |lambda_min| + psdEps.
const (
	psdTol = 1e-9
	psdEps = 1e-8
)

// lanczosMaxIter caps the Krylov dimension of the smallest-eigenvalue
// search (its memory is lanczosMaxIter n floats).
const lanczosMaxIter = 400

// preprocess turns a base kernel into the kernel BuildKernels returns.
//
// Default mode: K n / tr K, cosine mode: K_ij / sqrt(K_ii K_jj), unless
// the diagonal is already unit or bounded; no shift, since every base
// kernel is PSD by construction.
//
// Thesis mode (section 7.5.1): divide each row by its maximum (rows whose
// maximum is not positive stay zero), symmetrise, giving
// K_ij (1/m_i + 1/m_j)/2, then add delta I when the smallest eigenvalue is
// negative. For the set-intersection kernels m_i = K_ii (no one shares more
// friends with i than i has), so common friends becomes
// CN_ij (1/deg_i + 1/deg_j)/2, which favours low-degree users, and the
// shift puts a large multiple of I into the kernel: both are why this mode
// is not the default.
func preprocess(ctx context.Context, name string, b base, opts KernelOptions) (NamedKernel, error) {
	switch {
	case b.unit && opts.Mode != ModeThesis:
		return NamedKernel{Name: name, K: b.k, fold: b.fold}, nil
	case opts.Mode == ModeCosine:
		k := kernelmath.CosineScaled(b.k)
		if b.fold == nil {
			return NamedKernel{Name: name, K: k}, nil
		}
		s := b.k.Diag()
		for i, d := range s {
			s[i] = invSqrt(d)
		}
		return NamedKernel{Name: name, K: k, fold: scaledFold(b.fold, s, s, func(d float64) (float64, float64) { return invSqrt(d), invSqrt(d) })}, nil
	case opts.Mode == ModeDefault:
		diag := b.k.Diag()
		tr := floats.Sum(diag)
		if !(tr > 0) {
			return NamedKernel{Name: name, K: b.k, fold: b.fold}, nil // a zero kernel stays zero
		}
		c, ones := make([]float64, len(diag)), make([]float64, len(diag))
		for i := range c {
			c[i], ones[i] = float64(len(diag))/tr, 1
		}
		s, err := kernelmath.RowScaled(b.k, c) // a constant scale: PSD kept
		nk := NamedKernel{Name: name, K: s}
		if b.fold != nil {
			nk.fold = scaledFold(b.fold, c, ones, func(float64) (float64, float64) { return c[0], 1 })
		}
		return nk, err
	}
	rowMax, err := kernelmath.KernelRowMax(ctx, b.k)
	if err != nil {
		return NamedKernel{}, err
	}
	d := make([]float64, len(rowMax))
	for i, m := range rowMax {
		if m > 0 {
			d[i] = 1 / m
		}
	}
	s, err := kernelmath.RowScaled(b.k, d)
	if err != nil {
		return NamedKernel{}, err
	}
	lo, res, err := smallestEigenvalue(s, opts.Seed)
	if err != nil {
		return NamedKernel{}, err
	}
	check := &PSDCheck{MinEig: lo, Residual: res}
	if lo < -psdTol {
		check.Shift = -lo + psdEps
		s = s.Shifted(check.Shift)
	}
	return NamedKernel{Name: name, K: s, PSD: check}, nil
}

// invSqrt is CosineScaled's scale of a row with diagonal d.
func invSqrt(d float64) float64 {
	if d > 0 {
		return 1 / math.Sqrt(d)
	}
	return 0
}

// smallestEigenvalue returns the smallest Ritz value of k after Lanczos
// (converged to 1e-8 relative to the largest eigenvalue, or the best after
// lanczosMaxIter steps) and the residual ||K v - theta v|| of its Ritz
// vector. A Ritz value is never below the smallest eigenvalue.
func smallestEigenvalue(k kernelmath.KernelMatrix, seed uint64) (theta, residual float64, err error) {
	vals, vecs, err := kernelmath.TopK(k, 1, kernelmath.Smallest, kernelmath.LanczosOptions{
		Tol: 1e-8, MaxIter: lanczosMaxIter, Seed: seed,
	})
	if err != nil && !errors.Is(err, learners.ErrNotConverged) || vals == nil {
		return 0, 0, fmt.Errorf("smallest eigenvalue: %w", err)
	}
	v := mat.Col(nil, 0, vecs)
	kv := make([]float64, len(v))
	k.Apply(kv, v)
	floats.AddScaled(kv, -vals[0], v)
	return vals[0], floats.Norm(kv, 2), nil
}
