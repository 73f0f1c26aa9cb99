package learners

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Base kernels over the rows of a feature matrix X (n x d).

// Linear returns X X^T (from the non-zeros alone when x is sparse).
func Linear(x *mat.Dense) *mat.SymDense {
	if g := sparseGram(x); g != nil {
		return g
	}
	n, _ := x.Dims()
	k := mat.NewSymDense(n, nil)
	k.SymOuterK(1, x)
	return k
}

// Polynomial returns (c + x_i.x_j)^degree.
func Polynomial(x *mat.Dense, degree int, c float64) *mat.SymDense {
	k := Linear(x)
	apply(k, func(v float64) float64 { return math.Pow(c+v, float64(degree)) })
	return k
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
	return KernelDistances(Linear(x))
}

// KernelDistances returns the squared feature-space distances
// K_ii + K_jj - 2 K_ij of a kernel, clamped at 0 against rounding.
func KernelDistances(k *mat.SymDense) *mat.SymDense {
	n := k.SymmetricDim()
	d := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d.SetSym(i, j, math.Max(0, k.At(i, i)+k.At(j, j)-2*k.At(i, j)))
		}
	}
	return d
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
