package kernelmath

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Base kernels over the rows of a feature matrix X (n x d).

// Linear returns X X^T (from the non-zeros alone when x is sparse).
func Linear(x *mat.Dense) *mat.SymDense {
	n, _ := x.Dims()
	k := mat.NewSymDense(n, nil)
	linearInto(k, x)
	return k
}

// linearInto overwrites the upper triangle of k (n x n) with X X^T.
func linearInto(k *mat.SymDense, x *mat.Dense) {
	if sparseGram(x, k) == nil {
		k.SymOuterK(1, x)
	}
}

// Polynomial returns (c + x_i.x_j)^degree.
func Polynomial(x *mat.Dense, degree int, c float64) *mat.SymDense {
	return PolynomialOfGram(Linear(x), degree, c)
}

// PolynomialOfGram overwrites the Gram matrix g = X X^T with (c + g_ij)^degree,
// Polynomial's kernel, and returns it: for a caller that needs the Gram
// matrix for something else too.
func PolynomialOfGram(g *mat.SymDense, degree int, c float64) *mat.SymDense {
	apply(g, func(v float64) float64 { return intPow(c+v, degree) })
	return g
}

// intPow returns x^d for d >= 0 by binary powering: the products math.Pow
// forms for an integer exponent (so the same value), without its
// decomposition and recomposition of x around them.
func intPow(x float64, d int) float64 {
	r := 1.0
	for ; d > 0; d >>= 1 {
		if d&1 == 1 {
			r *= x
		}
		x *= x
	}
	return r
}

// RBF returns exp(-||x_i - x_j||^2 / sigma).
func RBF(x *mat.Dense, sigma float64) *mat.SymDense {
	d := SqDistances(x)
	apply(d, func(v float64) float64 { return math.Exp(-v / sigma) })
	return d
}

// Cosine returns x_i.x_j / (||x_i|| ||x_j||); a zero row has similarity 0 to
// everything, itself included.
func Cosine(x *mat.Dense) *mat.SymDense {
	return NormalizeCosine(Linear(x))
}

// Intersection returns the histogram intersection sum_f min(x_if, x_jf),
// which is PSD for non-negative features.
func Intersection(x *mat.Dense) *mat.SymDense {
	n, d := x.Dims()
	k := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		ri := x.RawRowView(i)
		for j := i; j < n; j++ {
			rj := x.RawRowView(j)
			s := 0.0
			for f := 0; f < d; f++ {
				s += math.Min(ri[f], rj[f])
			}
			k.SetSym(i, j, s)
		}
	}
	return k
}

// HistogramIntersection scales each row of x to sum 1 and returns the
// intersection kernel of these histograms (on 0/1 features the unscaled
// intersection would equal the linear kernel). Negative features are an
// input error: the kernel compares histograms.
func HistogramIntersection(x *mat.Dense) (*mat.SymDense, error) {
	h := mat.DenseCopyOf(x)
	for i := 0; i < h.RawMatrix().Rows; i++ {
		row := h.RawRowView(i)
		sum := 0.0
		for _, v := range row {
			if v < 0 {
				return nil, inputErr("histogram intersection needs non-negative features; this corpus has negative values")
			}
			sum += v
		}
		if sum > 0 {
			for j := range row {
				row[j] /= sum
			}
		}
	}
	return Intersection(h), nil
}

// SqDistances returns the squared Euclidean distances between the rows of x.
func SqDistances(x *mat.Dense) *mat.SymDense {
	n, _ := x.Dims()
	d := mat.NewSymDense(n, nil)
	SqDistancesInto(d, x)
	return d
}

// SqDistancesInto is SqDistances written into d (n x n, for instance a
// ScratchSym), whose contents it overwrites.
func SqDistancesInto(d *mat.SymDense, x *mat.Dense) {
	linearInto(d, x)
	toDistances(d)
}

// KernelDistances returns the squared feature-space distances
// K_ii + K_jj - 2 K_ij of a kernel, clamped at 0 against rounding.
func KernelDistances(k *mat.SymDense) *mat.SymDense {
	d := mat.NewSymDense(k.SymmetricDim(), nil)
	KernelDistancesInto(d, k)
	return d
}

// KernelDistancesInto is KernelDistances written into d (n x n, for
// instance a ScratchSym), whose contents it overwrites. Of a Gram matrix
// X X^T it gives SqDistances(x), the same numbers.
func KernelDistancesInto(d, k *mat.SymDense) {
	d.CopySym(k)
	toDistances(d)
}

// toDistances overwrites the kernel k with KernelDistances(k).
func toDistances(k *mat.SymDense) {
	raw := k.RawSymmetric()
	diag := make([]float64, raw.N)
	for i := range diag {
		diag[i] = raw.Data[i*raw.Stride+i]
	}
	for i, kii := range diag {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.N]
		row[i] = 0
		for j := i + 1; j < raw.N; j++ {
			row[j] = math.Max(0, kii+diag[j]-2*row[j])
		}
	}
}

// MeanOffDiagonal returns the mean of the off-diagonal entries of a symmetric
// matrix: the usual bandwidth heuristic when applied to squared distances.
func MeanOffDiagonal(d *mat.SymDense) float64 {
	n := d.SymmetricDim()
	if n < 2 {
		return 0
	}
	s := 0.0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			s += d.At(i, j)
		}
	}
	return s / float64(n*(n-1)/2)
}

// apply maps f over the upper triangle (and so the whole) of a symmetric matrix.
func apply(k *mat.SymDense, f func(float64) float64) {
	raw := k.RawSymmetric()
	for i := 0; i < raw.N; i++ {
		row := raw.Data[i*raw.Stride+i : i*raw.Stride+raw.N]
		for j := range row {
			row[j] = f(row[j])
		}
	}
}
