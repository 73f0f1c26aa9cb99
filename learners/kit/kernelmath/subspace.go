package kernelmath

import (
	"math/rand/v2"

	"github.com/kernelrank/kernelrank/internal/vecmath"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// LeadingSubspace returns an orthonormal basis (n x q, columns) of the
// approximate leading eigenspace of the symmetric PSD matrix a, ordered by
// Ritz value, largest first, with the Ritz values: randomised subspace
// iteration (Halko, Martinsson & Tropp 2011, algorithm 4.4 with the
// Rayleigh-Ritz step of section 5.3) from q + oversample Gaussian start
// vectors drawn from seed, with iters power steps. A block method, it finds
// the whole eigenspace of a repeated eigenvalue, which single-vector Lanczos
// does not; it costs iters + 2 products of a with an n x (q + oversample)
// block, where a dense partial eigensolver costs 4/3 n^3 for the
// tridiagonalisation alone. The part of an eigenvector i <= q left outside
// the subspace shrinks as (lambda_{q+oversample+1} / lambda_i)^(iters+1).
// Past the rank of a the basis is completed with directions of its null
// space, so it always has q orthonormal columns.
func LeadingSubspace(a *mat.SymDense, q, oversample, iters int, seed uint64) ([]float64, *mat.Dense, error) {
	n := a.SymmetricDim()
	q = min(q, n)
	l := min(q+oversample, n)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	// The block is kept transposed, l x n, so that each vector is a
	// contiguous row: Y^T = Omega^T A, then Q^T A.
	qt := mat.NewDense(l, n, Scratch(l*n))
	defer Release(qt.RawMatrix().Data)
	for i := range qt.RawMatrix().Data {
		qt.RawMatrix().Data[i] = rng.NormFloat64()
	}
	// A as a general matrix: gonum's Dgemm runs on its assembly kernels,
	// its Dsymm (a SymDense operand) in plain Go, 5 times slower here.
	// Both triangles, filled from the upper one.
	dd := Scratch(n * n)
	defer Release(dd)
	ar := a.RawSymmetric()
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			x := ar.Data[i*ar.Stride+j]
			dd[i*n+j], dd[j*n+i] = x, x
		}
	}
	ad := mat.NewDense(n, n, dd)
	yt := mat.NewDense(l, n, Scratch(l*n)) // mulBlock overwrites it
	defer Release(yt.RawMatrix().Data)
	for range iters + 1 {
		mulBlock(yt, qt, ad)
		qt.Copy(yt)
		OrthonormalizeRows(qt)
		// A of rank below l maps the block into a smaller space: rows that
		// fell into the span of the others restart from random vectors,
		// so that the basis keeps its l dimensions (and so, past A's rank,
		// directions of A's null space).
		for i := 0; i < l; i++ {
			if floats.Norm(qt.RawRowView(i), 2) == 0 {
				for j := range qt.RawRowView(i) {
					qt.RawRowView(i)[j] = rng.NormFloat64()
				}
				OrthonormalizeRows(qt)
			}
		}
	}
	// Rayleigh-Ritz: the eigenpairs of B = Q^T A Q give the Ritz vectors Q U.
	mulBlock(yt, qt, ad)
	var b mat.Dense
	b.Mul(yt, qt.T())
	bs := mat.NewSymDense(l, nil)
	for i := 0; i < l; i++ {
		for j := i; j < l; j++ {
			bs.SetSym(i, j, (b.At(i, j)+b.At(j, i))/2)
		}
	}
	vals, u, err := Eigen(bs) // ascending
	if err != nil {
		return nil, nil, err
	}
	top := mat.NewDense(l, q, nil)
	out := make([]float64, q)
	for c := 0; c < q; c++ {
		out[c] = vals[l-1-c]
		for r := 0; r < l; r++ {
			top.Set(r, c, u.At(r, l-1-c))
		}
	}
	var v mat.Dense
	v.Mul(qt.T(), top)
	return out, &v, nil
}

// mulBlock sets y (l x n) to x a for x l x n and a n x n, one row of a at a
// time: each row of y takes x_il a_l as AXPYs in the order l = 0..n-1 (the
// order gonum's Dgemm sums each entry in too; vecmath's fused multiply-adds
// round each term once), on one core and with row l of a in
// the first-level cache for all l rows of y (Dgemm's blocks of 64 columns
// over two goroutines take as long at a search's sizes, and hold a second
// core).
func mulBlock(y, x, a *mat.Dense) {
	yr, xr, ar := y.RawMatrix(), x.RawMatrix(), a.RawMatrix()
	for i := 0; i < yr.Rows; i++ {
		clear(yr.Data[i*yr.Stride : i*yr.Stride+yr.Cols])
	}
	for l := 0; l < xr.Cols; l++ {
		row := ar.Data[l*ar.Stride : l*ar.Stride+ar.Cols]
		for i := 0; i < xr.Rows; i++ {
			if v := xr.Data[i*xr.Stride+l]; v != 0 { // as Dgemm: a zero adds nothing
				vecmath.AddScaled(yr.Data[i*yr.Stride:i*yr.Stride+yr.Cols], v, row)
			}
		}
	}
}

// OrthonormalizeRows makes the rows of v orthonormal in place by modified
// Gram-Schmidt, run twice ("twice is enough": Giraud, Langou & Rozloznik
// 2005). A row in the span of the rows before it (its norm falling below
// 1e-10 of what it was) becomes zero.
func OrthonormalizeRows(v *mat.Dense) {
	r, _ := v.Dims()
	for i := 0; i < r; i++ {
		row := v.RawRowView(i)
		norm0 := floats.Norm(row, 2)
		for range 2 {
			for p := 0; p < i; p++ {
				prev := v.RawRowView(p)
				vecmath.AddScaled(row, -floats.Dot(prev, row), prev)
			}
		}
		if norm := floats.Norm(row, 2); norm > 1e-10*norm0 {
			floats.Scale(1/norm, row)
		} else {
			clear(row)
		}
	}
}
