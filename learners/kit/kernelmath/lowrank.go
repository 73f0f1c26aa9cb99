package kernelmath

import (
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// LowRank is the kernel K = Z Z^T of a dense n x r factor Z (for example
// random Fourier features of an RBF kernel): 8 n r bytes instead of 8 n^2.
// Row, Apply and RowSums cost O(n r), At O(r), Diag O(n r). It is safe for
// concurrent use as long as Z is not modified.
type LowRank struct{ z *mat.Dense }

// NewLowRank wraps Z (not copied).
func NewLowRank(z *mat.Dense) *LowRank { return &LowRank{z} }

var _ KernelMatrix = (*LowRank)(nil)

// Dim returns n.
func (l *LowRank) Dim() int { n, _ := l.z.Dims(); return n }

// Rank returns r, the number of columns of Z.
func (l *LowRank) Rank() int { _, r := l.z.Dims(); return r }

// At returns z_i . z_j.
func (l *LowRank) At(i, j int) float64 { return floats.Dot(l.z.RawRowView(i), l.z.RawRowView(j)) }

// Row sets dst = Z z_i.
func (l *LowRank) Row(i int, dst []float64) {
	mat.NewVecDense(len(dst), dst).MulVec(l.z, mat.NewVecDense(l.Rank(), l.z.RawRowView(i)))
}

// Apply sets dst = Z (Z^T x).
func (l *LowRank) Apply(dst, x []float64) {
	var y mat.VecDense
	y.MulVec(l.z.T(), mat.NewVecDense(len(x), x))
	mat.NewVecDense(len(dst), dst).MulVec(l.z, &y)
}

// Diag returns the squared row norms of Z.
func (l *LowRank) Diag() []float64 {
	out := make([]float64, l.Dim())
	for i := range out {
		r := l.z.RawRowView(i)
		out[i] = floats.Dot(r, r)
	}
	return out
}

// RowSums returns Z (Z^T 1).
func (l *LowRank) RowSums() []float64 { return RowSumsByApply(l) }
