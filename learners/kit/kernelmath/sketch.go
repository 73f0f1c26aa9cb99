package kernelmath

import (
	"math"
	"math/rand/v2"
)

// Sketch adds to z (n x r, row-major) a random projection of the feature
// map of the kernel weight * k, when k has one in factored form (a Gram
// D X X' D or a low-rank D Z Z' D): row i gains sqrt(weight) d_i x_i W,
// W Gaussian with variance 1/r, so that E[z_i . z_j] gains weight K_ij,
// each entry of z z' an average of r independent estimates
// (Johnson-Lindenstrauss). Sketches of several kernels added to one z,
// each with its own draws, estimate their weighted sum. It reports false,
// leaving z, for a kernel with no such form (a sparse symmetric matrix,
// which need not be positive semi-definite; dense and other kernels) or a
// weight that is not positive.
func Sketch(z []float64, r int, k KernelMatrix, weight float64, rng *rand.Rand) bool {
	f, ok := factorOf(k)
	if !ok || f.sparse != nil || !(weight > 0) {
		return false
	}
	var rows int
	var row func(i int) ([]int32, []float64)
	if f.gram != nil {
		rows, row = f.gram.m, f.gram.x.row
	} else {
		rank := f.low.Rank()
		cols := make([]int32, rank)
		for c := range cols {
			cols[c] = int32(c)
		}
		rows, row = rank, func(i int) ([]int32, []float64) { return cols, f.low.z.RawRowView(i) }
	}
	w := make([]float64, rows*r)
	sd := 1 / math.Sqrt(float64(r))
	for i := range w {
		w[i] = rng.NormFloat64() * sd
	}
	for i := range k.Dim() {
		s := math.Sqrt(weight) * f.scale(i)
		cols, vals := row(i)
		zi := z[i*r : (i+1)*r]
		for p, c := range cols {
			x := s * vals[p]
			for j, wj := range w[int(c)*r : (int(c)+1)*r] {
				zi[j] += x * wj
			}
		}
	}
	return true
}
