package learners

import "gonum.org/v1/gonum/floats"

// addScaled sets dst[i] += a * x[i] for i < len(x) (len(dst) >= len(x)),
// each as a product rounded and then a sum rounded: the arithmetic, and so
// the bits, of gonum's floats.AddScaled (SSE2, two at a time), four at a
// time on amd64 CPUs with AVX (a multiply, then an add: no fused
// multiply-add, which would round once and change the bits), gonum's
// elsewhere or with the purego build tag.
func addScaled(dst []float64, a float64, x []float64) {
	if len(dst) < len(x) {
		panic("learners: addScaled: dst shorter than x")
	}
	if hasAVX {
		axpyAVX(a, x, dst)
		return
	}
	floats.AddScaled(dst[:len(x)], a, x)
}
