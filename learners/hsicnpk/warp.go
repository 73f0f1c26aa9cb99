package hsicnpk

import (
	"errors"
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/mat"
)

// Warper evaluates the warped kernel of eq. 6.9 (Sindhwani, Niyogi and
// Belkin 2005), which extends a kernel learned over n training images to
// images outside that set:
//
//	k~(x, y) = k_x(x, y) - kappa_y^T (I + L K_x)^{-1} L kappa_x,
//
// kappa_x = (k_x(x, x_1), ..., k_x(x, x_n)), K_x the input kernel on the
// training images and L a PSD deformation built from the learned kernel.
// Restricted to the training images the warped kernel is (I + K_x L)^{-1} K_x,
// which equals (K_x^{-1} + L)^{-1} when K_x is invertible.
type Warper struct {
	n int
	g *mat.Dense // (I + L K_x)^{-1} L, factored once
}

// Warp prepares eq. 6.9 from the input kernel kx and the learned kernel,
// with L the graph Laplacian of the affinity W = max(learned, 0) (off the
// diagonal): L = diag(W 1) - W.
//
// Deviation from the thesis, which takes L = diag(K^ 1) - K^ of the learned
// kernel itself: the learned kernel is centred (its rows sum to 0), so that
// literal L equals -K^, which is negative semidefinite; (I + L K_x) can then
// be singular and the warped kernel indefinite, while Sindhwani et al.'s
// construction needs a PSD deformation. Clipping to the non-negative
// affinity (as the re-ranker does for VisualRank, spec A.4) gives a proper
// Laplacian. WarpLaplacian takes any L for callers that want another one.
func Warp(kx, learned *mat.SymDense) (*Warper, error) {
	if kx == nil || learned == nil {
		return nil, fmt.Errorf("%w: Warp needs the input and the learned kernel", learners.ErrInput)
	}
	return WarpLaplacian(kx, AffinityLaplacian(learned))
}

// AffinityLaplacian returns diag(W 1) - W for W = max(k, 0) off the diagonal.
func AffinityLaplacian(k *mat.SymDense) *mat.SymDense {
	n := k.SymmetricDim()
	l := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if w := k.At(i, j); w > 0 {
				l.SetSym(i, j, -w)
				l.SetSym(i, i, l.At(i, i)+w)
				l.SetSym(j, j, l.At(j, j)+w)
			}
		}
	}
	return l
}

// ErrSingularWarp is returned when I + L K_x is numerically singular (possible
// only for an L that is not PSD).
var ErrSingularWarp = errors.New("hsicnpk: I + L K_x is singular")

// WarpLaplacian prepares eq. 6.9 with a given deformation l: it factors
// I + L K_x once with LU and keeps G = (I + L K_x)^{-1} L, so that each
// Kernel call costs O(n^2).
func WarpLaplacian(kx, l *mat.SymDense) (*Warper, error) {
	if kx == nil || l == nil {
		return nil, fmt.Errorf("%w: WarpLaplacian needs the input kernel and a Laplacian", learners.ErrInput)
	}
	n := kx.SymmetricDim()
	if n == 0 || l.SymmetricDim() != n {
		return nil, fmt.Errorf("%w: input kernel is %d x %d, Laplacian %d x %d", learners.ErrInput, n, n, l.SymmetricDim(), l.SymmetricDim())
	}
	for _, m := range []*mat.SymDense{kx, l} {
		raw := m.RawSymmetric()
		for i := 0; i < n; i++ {
			for _, v := range raw.Data[i*raw.Stride+i : i*raw.Stride+n] {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("%w: warping input contains %v", learners.ErrInput, v)
				}
			}
		}
	}
	var a mat.Dense
	a.Mul(l, kx)
	for i := 0; i < n; i++ {
		a.Set(i, i, a.At(i, i)+1)
	}
	var lu mat.LU
	lu.Factorize(&a)
	if c := lu.Cond(); math.IsInf(c, 1) || c > 1e14 {
		return nil, fmt.Errorf("%w (condition number %.3g)", ErrSingularWarp, c)
	}
	g := mat.NewDense(n, n, nil)
	if err := lu.SolveTo(g, false, l); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSingularWarp, err)
	}
	return &Warper{n: n, g: g}, nil
}

// Kernel returns k~(x, y) from kappaX = k_x(x, x_i), kappaY = k_x(y, x_i) over
// the n training images and kxy = k_x(x, y). It panics if a vector does not
// have length n.
func (w *Warper) Kernel(kappaX, kappaY []float64, kxy float64) float64 {
	if len(kappaX) != w.n || len(kappaY) != w.n {
		panic(fmt.Sprintf("hsicnpk: Warper.Kernel: kappa vectors of length %d and %d, want %d", len(kappaX), len(kappaY), w.n))
	}
	raw := w.g.RawMatrix()
	s := 0.0
	for i, yi := range kappaY {
		if yi == 0 {
			continue
		}
		row := raw.Data[i*raw.Stride : i*raw.Stride+w.n]
		d := 0.0
		for j, xj := range kappaX {
			d += row[j] * xj
		}
		s += yi * d
	}
	return kxy - s
}
