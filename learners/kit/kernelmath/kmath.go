package kernelmath

import (
	"errors"
	"math"
	"sort"
	"sync"

	"github.com/kernelrank/kernelrank/internal/vecmath"
	"gonum.org/v1/gonum/mat"
)

// Center returns H K H with H = I - 11^T/n: the kernel of the centred features.
func Center(k *mat.SymDense) *mat.SymDense {
	c := mat.NewSymDense(k.SymmetricDim(), nil)
	CenterInto(c, k)
	return c
}

// CenterInto writes Center(k) into the upper triangle of c (n x n, for
// instance a ScratchSym, and not k itself).
func CenterInto(c, k *mat.SymDense) {
	raw := k.RawSymmetric()
	n, st := raw.N, raw.Stride
	// Row sums from the upper triangle, row by row: sum i receives K_ji
	// from rows j < i first, then K_ij for j >= i from its own row, the
	// order j = 0..n-1 of a walk along the full row.
	sum := make([]float64, n)
	for i := 0; i < n; i++ {
		row := raw.Data[i*st : i*st+n]
		for j := i + 1; j < n; j++ {
			sum[j] += row[j]
		}
		s := sum[i]
		for _, x := range row[i:] {
			s += x
		}
		sum[i] = s
	}
	total := 0.0
	for i, s := range sum {
		sum[i] = s / float64(n) // the row mean
		total += s
	}
	mean := total / float64(n*n)
	out := c.RawSymmetric()
	for i := 0; i < n; i++ {
		row := raw.Data[i*st : i*st+n]
		dst := out.Data[i*out.Stride : i*out.Stride+n]
		for j := i; j < n; j++ {
			dst[j] = row[j] - sum[i] - sum[j] + mean
		}
	}
}

// NormalizeCosine returns K_ij / sqrt(K_ii K_jj), with rows of zero (or
// negative) self-similarity set to 0 rather than NaN.
func NormalizeCosine(k *mat.SymDense) *mat.SymDense {
	n := k.SymmetricDim()
	s := make([]float64, n)
	for i := range s {
		if d := k.At(i, i); d > 0 {
			s[i] = 1 / math.Sqrt(d)
		}
	}
	out := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			out.SetSym(i, j, k.At(i, j)*s[i]*s[j])
		}
	}
	return out
}

// Frobenius returns <A, B>_F = tr(A B) for symmetric A and B.
func Frobenius(a, b *mat.SymDense) float64 {
	n := a.SymmetricDim()
	s := 0.0
	for i := 0; i < n; i++ {
		s += a.At(i, i) * b.At(i, i)
		for j := i + 1; j < n; j++ {
			s += 2 * a.At(i, j) * b.At(i, j)
		}
	}
	return s
}

// Alignment returns the kernel alignment <A,B>_F / (||A||_F ||B||_F)
// (Cristianini et al.), 0 when either kernel is zero.
func Alignment(a, b *mat.SymDense) float64 {
	den := math.Sqrt(Frobenius(a, a) * Frobenius(b, b))
	if den == 0 {
		return 0
	}
	return Frobenius(a, b) / den
}

// CenteredAlignment is Alignment of the centred kernels (Cortes et al. 2010).
func CenteredAlignment(a, b *mat.SymDense) float64 {
	return Alignment(Center(a), Center(b))
}

// HSIC returns the biased empirical HSIC tr(K H L H) / (n-1)^2 (Gretton et al. 2005).
func HSIC(k, l *mat.SymDense) float64 {
	n := k.SymmetricDim()
	if n < 2 {
		return 0
	}
	return Frobenius(Center(k), l) / float64((n-1)*(n-1))
}

// Clip returns max(k, 0) entrywise.
func Clip(k *mat.SymDense) *mat.SymDense {
	n := k.SymmetricDim()
	out := mat.NewSymDense(n, nil)
	src, dst := k.RawSymmetric(), out.RawSymmetric()
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			dst.Data[i*dst.Stride+j] = math.Max(src.Data[i*src.Stride+j], 0)
		}
	}
	return out
}

// ProjectPSD returns the nearest PSD matrix in Frobenius norm, V max(Λ, 0) V^T,
// and the eigenvalues of k (ascending).
func ProjectPSD(k *mat.SymDense) (*mat.SymDense, []float64, error) {
	vals, vecs, err := Eigen(k)
	if err != nil {
		return nil, nil, err
	}
	return FromEigen(vals, vecs, 0), vals, nil
}

// PSDPart returns the same projection as ProjectPSD, from the eigenpairs on
// the cheaper side of zero (PartialEigen): sum over lambda > 0 of
// lambda v v^T, or, when fewer eigenvalues are not positive, A minus the sum
// over lambda < 0. A nearly PSD matrix, such as a clipped kernel, costs the
// tridiagonalisation and its few negative pairs.
func PSDPart(a *mat.SymDense) (*mat.SymDense, error) {
	pe := psdEigen.Get().(*PartialEigen)
	defer psdEigen.Put(pe)
	if err := pe.Factorize(a); err != nil {
		return nil, err
	}
	vals := pe.Values(nil)
	n := len(vals)
	lo := sort.Search(n, func(i int) bool { return vals[i] > 0 })
	var v mat.Dense
	if lo == n {
		return mat.NewSymDense(n, nil), nil
	}
	if n-lo <= lo {
		if err := pe.VectorsTo(&v, lo, n); err != nil {
			return nil, err
		}
		return FromEigen(vals[lo:], &v, 0), nil
	}
	out := mat.NewSymDense(n, nil)
	out.CopySym(a)
	if lo == 0 {
		return out, nil
	}
	vn := mat.NewDense(n, lo, Scratch(n*lo))
	defer Release(vn.RawMatrix().Data)
	if err := pe.VectorsTo(vn, 0, lo); err != nil {
		return nil, err
	}
	neg := vals[:lo]
	for c := range neg {
		neg[c] = -neg[c]
	}
	AddWeightedOuter(out, vn, neg)
	return out, nil
}

// AddWeightedOuter adds sum over c of w_c y_c y_c^T to the upper triangle
// of out, y_c the columns of y (n x p). It goes row by row of out, one
// AXPY along y_c (copied to be contiguous) a row and column: long
// unit-stride kernels, where Dsyrk (SymOuterK, FromEigen) forms each entry
// from a short dot product; the sums agree to rounding.
func AddWeightedOuter(out *mat.SymDense, y *mat.Dense, w []float64) {
	n, p := y.Dims()
	yt := Scratch(p * n)
	defer Release(yt)
	yr := y.RawMatrix()
	for r := 0; r < n; r++ {
		for c, x := range yr.Data[r*yr.Stride : r*yr.Stride+p] {
			yt[c*n+r] = x
		}
	}
	raw := out.RawSymmetric()
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride+i : i*raw.Stride+n]
		for c, wc := range w {
			yc := yt[c*n : c*n+n]
			if a := wc * yc[i]; a != 0 {
				vecmath.AddScaled(row, a, yc[i:])
			}
		}
	}
}

// psdEigen keeps PSDPart's eigensolver workspaces between calls.
var psdEigen = sync.Pool{New: func() any { return new(PartialEigen) }}

// FromEigen rebuilds sum over eigenvalues > floor of lambda v v^T, the
// projection onto the span of those eigenvectors with the rest dropped.
// With floor -Inf it is Y diag(w) Y^T for any non-negative weights w and
// columns Y (the learners' low-rank kernel factors).
func FromEigen(vals []float64, vecs *mat.Dense, floor float64) *mat.SymDense {
	n, _ := vecs.Dims()
	var cols []int
	for i, v := range vals {
		if v > floor {
			cols = append(cols, i)
		}
	}
	out := mat.NewSymDense(n, nil)
	if len(cols) == 0 {
		return out
	}
	// Scale the kept eigenvectors by sqrt(lambda) and form W W^T.
	p := len(cols)
	w := mat.NewDense(n, p, Scratch(n*p))
	defer Release(w.RawMatrix().Data)
	wd := w.RawMatrix().Data
	for c, idx := range cols {
		s := math.Sqrt(vals[idx])
		for r := 0; r < n; r++ {
			wd[r*p+c] = vecs.At(r, idx) * s
		}
	}
	out.SymOuterK(1, w)
	return out
}

// ErrEigen reports that an eigendecomposition failed to converge.
var ErrEigen = errors.New("eigendecomposition did not converge")

// Eigen returns all eigenvalues of a symmetric matrix in ascending order and
// the matching eigenvectors as columns (LAPACK dsyev via gonum).
func Eigen(k *mat.SymDense) ([]float64, *mat.Dense, error) {
	var es mat.EigenSym
	if !es.Factorize(k, true) {
		return nil, nil, ErrEigen
	}
	var v mat.Dense
	es.VectorsTo(&v)
	return es.Values(nil), &v, nil
}

// MinEigenvalue returns the smallest eigenvalue of a symmetric matrix: with a
// dense solve for small n, with Lanczos otherwise.
func MinEigenvalue(k *mat.SymDense) (float64, error) {
	vals, _, err := TopK(SymOperator(k), 1, Smallest, LanczosOptions{})
	if err != nil {
		return 0, err
	}
	return vals[0], nil
}

// IsPSD reports whether the smallest eigenvalue of k is >= -tol * max(1, max|K_ii|).
func IsPSD(k *mat.SymDense, tol float64) (bool, error) {
	lo, err := MinEigenvalue(k)
	if err != nil {
		return false, err
	}
	scale := 1.0
	for i := 0; i < k.SymmetricDim(); i++ {
		scale = math.Max(scale, math.Abs(k.At(i, i)))
	}
	return lo >= -tol*scale, nil
}
