// Package vecmath holds the level-1 kernels the eigensolver's tridiagonal
// reduction and back-transformation spend their time in, y += a x and
// x . y (and their fusions for one row of the reduction and for one
// reflector applied to four vectors), on short vectors that sit in cache. gonum's assembly
// uses SSE2 (two float64 a multiply, then an add); on amd64 CPUs with AVX2
// and FMA these kernels take four a fused multiply-add, and fall back to
// gonum's everywhere else (or with the purego build tag). Fused rounding
// makes the results differ from gonum's in the last bits, not in accuracy.
package vecmath

import "gonum.org/v1/gonum/floats"

// AddScaled sets dst[i] += a * x[i] for every i < len(x); dst must be at
// least as long as x.
func AddScaled(dst []float64, a float64, x []float64) {
	if len(dst) < len(x) {
		panic("vecmath: AddScaled: dst shorter than x")
	}
	if fma {
		axpyFMA(a, x, dst)
		return
	}
	floats.AddScaled(dst[:len(x)], a, x)
}

// Dot returns x . y; x and y must have one length.
func Dot(x, y []float64) float64 {
	if len(x) != len(y) {
		panic("vecmath: Dot: slices of different lengths")
	}
	if fma {
		return dotFMA(x, y)
	}
	return floats.Dot(x, y)
}

// Rank2DotAxpy sets x -= a u + b w, then y += c x, and returns x . v (x
// after its update): the three passes a symmetric rank-2 update followed by
// a symmetric matrix-vector product makes over one row, fused into one.
// All five slices must have one length.
func Rank2DotAxpy(x, u, w, v, y []float64, a, b, c float64) float64 {
	n := len(x)
	if len(u) != n || len(w) != n || len(v) != n || len(y) != n {
		panic("vecmath: Rank2DotAxpy: slices of different lengths")
	}
	if fma {
		return rank2DotAxpyFMA(x, u, w, v, y, a, b, c)
	}
	floats.AddScaled(x, -a, u)
	floats.AddScaled(x, -b, w)
	floats.AddScaled(y, c, x)
	return floats.Dot(x, v)
}

// Reflect4 applies the Householder reflector I - tau v v^T to four vectors,
// z_k -= tau (v . z_k) v, sharing each load of v among the four: the
// eigensolver's back-transformation applies every reflector to dozens of
// eigenvectors. Every z_k must be as long as v.
func Reflect4(tau float64, v, z0, z1, z2, z3 []float64) {
	n := len(v)
	if len(z0) != n || len(z1) != n || len(z2) != n || len(z3) != n {
		panic("vecmath: Reflect4: slices of different lengths")
	}
	if fma {
		reflect4FMA(tau, v, z0, z1, z2, z3)
		return
	}
	for _, z := range [4][]float64{z0, z1, z2, z3} {
		floats.AddScaled(z, -tau*floats.Dot(v, z), v)
	}
}

// Rank2x2DotAxpy is Rank2DotAxpy for two rows x1 and x2 that share u, w, v
// and y, each load of those shared between the rows: x_k -= a_k u + b_k w,
// then y += c1 x1 and y += c2 x2, in that order; it returns x1 . v and
// x2 . v. All six slices must have one length.
func Rank2x2DotAxpy(x1, x2, u, w, v, y []float64, a1, b1, c1, a2, b2, c2 float64) (d1, d2 float64) {
	n := len(x1)
	if len(x2) != n || len(u) != n || len(w) != n || len(v) != n || len(y) != n {
		panic("vecmath: Rank2x2DotAxpy: slices of different lengths")
	}
	if fma {
		return rank2x2DotAxpyFMA(x1, x2, u, w, v, y, a1, b1, c1, a2, b2, c2)
	}
	floats.AddScaled(x1, -a1, u)
	floats.AddScaled(x1, -b1, w)
	floats.AddScaled(x2, -a2, u)
	floats.AddScaled(x2, -b2, w)
	floats.AddScaled(y, c1, x1)
	floats.AddScaled(y, c2, x2)
	return floats.Dot(x1, v), floats.Dot(x2, v)
}
