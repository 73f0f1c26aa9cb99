package learners

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Center returns H K H with H = I - 11^T/n: the kernel of the centred features.
func Center(k *mat.SymDense) *mat.SymDense {
	n := k.SymmetricDim()
	rowMean := make([]float64, n)
	total := 0.0
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < n; j++ {
			s += k.At(i, j)
		}
		rowMean[i] = s / float64(n)
		total += s
	}
	mean := total / float64(n*n)
	c := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			c.SetSym(i, j, k.At(i, j)-rowMean[i]-rowMean[j]+mean)
		}
	}
	return c
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

// ProjectPSD returns the nearest PSD matrix in Frobenius norm, V max(Λ, 0) V^T,
// and the eigenvalues of k (ascending).
func ProjectPSD(k *mat.SymDense) (*mat.SymDense, []float64, error) {
	vals, vecs, err := Eigen(k)
	if err != nil {
		return nil, nil, err
	}
	return FromEigen(vals, vecs, 0), vals, nil
}

// FromEigen rebuilds sum over eigenvalues > floor of lambda v v^T, the
// projection onto the span of those eigenvectors with the rest dropped.
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
	w := mat.NewDense(n, len(cols), nil)
	for c, idx := range cols {
		s := math.Sqrt(vals[idx])
		for r := 0; r < n; r++ {
			w.Set(r, c, vecs.At(r, idx)*s)
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
