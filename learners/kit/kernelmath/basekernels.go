package kernelmath

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Standardize returns x with every column shifted to mean 0 and divided by
// its sample standard deviation (n-1 denominator, as MATLAB's zscore), and
// the means and deviations used, to transform test rows alike. A column of
// zero variance becomes 0 (its deviation is reported as 0). This is the
// preprocessing of the MKL experiments (Zhuang thesis 4.5.1, UMKL spec B.4).
func Standardize(x *mat.Dense) (z *mat.Dense, mean, std []float64) {
	n, d := x.Dims()
	z = mat.NewDense(n, d, nil)
	mean, std = make([]float64, d), make([]float64, d)
	for f := range d {
		for i := range n {
			mean[f] += x.At(i, f)
		}
		mean[f] /= float64(n)
		ss := 0.0
		for i := range n {
			v := x.At(i, f) - mean[f]
			ss += v * v
		}
		if n > 1 {
			std[f] = math.Sqrt(ss / float64(n-1))
		}
		if std[f] > 0 {
			for i := range n {
				z.Set(i, f, (x.At(i, f)-mean[f])/std[f])
			}
		}
	}
	return z, mean, std
}

// The Gaussian widths sigma (2^-3 .. 2^6) and polynomial degrees of
// MKLBaseKernels (arrays, so that MKLGroupSize is a constant).
var (
	mklWidths  = [...]float64{0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64}
	mklDegrees = [...]int{1, 2, 3}
)

// MKLGroupSize is the number of MKLBaseKernels built on one feature set
// (13): its first MKLGroupSize kernels are those on all features, the
// initial antecedent layer of 2LMKL^Inf (thesis 4.5.1, spec 4.3).
const MKLGroupSize = len(mklWidths) + len(mklDegrees)

// MKLBaseKernels returns the base kernel set of Xu et al. (2008) used by the
// MKL experiments of Zhuang's thesis (ch. 4-5) and the UMKL paper: Gaussian
// kernels exp(-|x-y|^2 / (2 sigma^2)) for sigma in {2^-3, ..., 2^6} and
// polynomial kernels (x'y + 1)^q for q in {1, 2, 3}, each on all features and on each
// single feature: 13(d+1) kernels, each divided by its trace (unit trace;
// the spec's reading of the width and of the polynomial offset). The order
// is all features first (the 10 Gaussians by increasing sigma, then the 3
// polynomials), then feature 0, feature 1, ... in the same order. Memory is
// 13(d+1) n^2 floats: 450 MB for ionosphere (n = 351, d = 34).
func MKLBaseKernels(x *mat.Dense) []*mat.SymDense {
	n, d := x.Dims()
	out := make([]*mat.SymDense, 0, MKLGroupSize*(d+1))
	col := mat.NewDense(n, 1, nil)
	for f := -1; f < d; f++ {
		view := x
		if f >= 0 {
			col.Copy(x.Slice(0, n, f, f+1))
			view = col
		}
		gram := Linear(view)
		dist := KernelDistances(gram)
		for _, s := range mklWidths {
			out = append(out, unitTrace(mapSym(dist, func(v float64) float64 { return math.Exp(-v / (2 * s * s)) })))
		}
		for _, q := range mklDegrees {
			out = append(out, unitTrace(mapSym(gram, func(v float64) float64 { return math.Pow(v+1, float64(q)) })))
		}
	}
	return out
}

// mapSym returns f applied to every entry of a symmetric matrix.
func mapSym(a *mat.SymDense, f func(float64) float64) *mat.SymDense {
	out := mat.NewSymDense(a.SymmetricDim(), nil)
	out.CopySym(a)
	apply(out, f)
	return out
}

// unitTrace divides k by its trace in place (a kernel of zero trace is left
// as it is) and returns it.
func unitTrace(k *mat.SymDense) *mat.SymDense {
	tr := 0.0
	for i := range k.SymmetricDim() {
		tr += k.At(i, i)
	}
	if tr != 0 {
		k.ScaleSym(1/tr, k)
	}
	return k
}
