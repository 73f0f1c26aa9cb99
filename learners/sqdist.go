package learners

import (
	"gonum.org/v1/gonum/mat"
)

// sparseGram writes X X^T, computed from the non-zeros of each row, into the
// upper triangle of out (n x n; nil: a new matrix) and returns it when x is
// sparse (fewer than 1 in 8 entries non-zero, as for bag-of-visual-words or
// blob-indicator features), and returns nil otherwise. For the Corel5k blob
// features (about 8 of 499 non-zero) at n = 200 it is about ten times faster
// than the dense product.
func sparseGram(x *mat.Dense, out *mat.SymDense) *mat.SymDense {
	n, d := x.Dims()
	raw := x.RawMatrix()
	nnz := 0
	for i := 0; i < n; i++ {
		for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			if v != 0 {
				nnz++
			}
		}
	}
	if nnz*8 > n*d {
		return nil
	}
	// Compressed rows.
	ptr := make([]int, n+1)
	idx := make([]int, 0, nnz)
	val := make([]float64, 0, nnz)
	for i := 0; i < n; i++ {
		for k, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			if v != 0 {
				idx = append(idx, k)
				val = append(val, v)
			}
		}
		ptr[i+1] = len(idx)
	}
	if out == nil {
		out = mat.NewSymDense(n, nil)
	}
	od := out.RawSymmetric()
	dense := make([]float64, d) // row i scattered
	for i := 0; i < n; i++ {
		for p := ptr[i]; p < ptr[i+1]; p++ {
			dense[idx[p]] = val[p]
		}
		for j := i; j < n; j++ {
			dot := 0.0
			for p := ptr[j]; p < ptr[j+1]; p++ {
				dot += val[p] * dense[idx[p]]
			}
			od.Data[i*od.Stride+j] = dot
		}
		for p := ptr[i]; p < ptr[i+1]; p++ {
			dense[idx[p]] = 0
		}
	}
	return out
}
