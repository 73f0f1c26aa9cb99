package kernelmath

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/kernelrank/kernelrank/internal/vecmath"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"
)

// PartialEigen computes all eigenvalues of a dense symmetric matrix but the
// eigenvectors of a chosen index range only, which is what a PSD projection
// (the eigenvectors above 0) or a spectral embedding (the m lowest) needs:
// Householder tridiagonalisation (LAPACK dsytrd), root-free QL for the
// eigenvalues (dsterf), inverse iteration on the tridiagonal matrix for the
// wanted eigenvectors (as LAPACK dstein, which gonum lacks) and the
// Householder reflectors applied to them (as dormtr does, see applyQ).
//
// The reduction is a fused, unit-stride dsytd2 (tridiag) rather than gonum's
// Dsytrd, whose strided scalar Dsymv took half its time; its inner loops and
// the back-transform's run on internal/vecmath's kernels (AVX2 and FMA where
// the CPU has them).
//
// Cost: 4/3 n^3 flops for the values, plus about 2 n^2 p for p vectors,
// against roughly 9 n^3 for a full decomposition with vectors (mat.EigenSym);
// BenchmarkPartialEigen200 compares them. The workspace is
// kept between calls of the same size, so a PartialEigen used in a loop
// allocates almost nothing after the first call.
// Built with -tags openblas, Factorize and VectorsTo call OpenBLAS's LAPACK
// instead (partialeig_openblas.go); the results agree to rounding.
// The zero value is ready to use; a PartialEigen is not safe for concurrent use.
type PartialEigen struct {
	// GonumTridiag makes Factorize and VectorsTo use gonum's blocked
	// Dsytrd and Dormqr instead of the fused reduction (tridiag) and
	// back-transform (applyQ); both give the same factorisation up to
	// rounding. It is the reference path for tests and benchmarks.
	GonumTridiag bool
	// noLAPACK makes an openblas build take the pure-Go path too (tests and
	// benchmarks compare the two); without the tag there is only that path.
	noLAPACK bool
	lp       lapackState // the LAPACK path's workspace (openblas builds)
	// onePerStep makes inverse iteration compute one vector at a time,
	// never two together (tests compare the two).
	onePerStep bool

	n    int
	a    []float64 // the reflectors left by dsytrd (lower triangle), n x n
	tv   []float64 // scratch of tridiag (its reflector and update vectors) and applyQ
	d, e []float64 // the tridiagonal matrix T
	tau  []float64
	work []float64

	vals  []float64 // all eigenvalues, ascending
	block []int     // block[k]: index into blocks of the block eigenvalue k belongs to
	// blocks of the unreduced tridiagonal: rows [start, end).
	blocks []tblock
	order  []int // scratch for the merge of the block spectra

	// inverse iteration scratch
	bd, be       []float64
	lu           [2]tridiagLU // one a vector of a pair (inverseIteration)
	z            []float64
	blockTmp     []int
	lastVal      []float64 // per block: the last eigenvalue processed
	clusterStart []int     // per block: first column of the current cluster
	src          *rand.PCG
	ok           bool
	zcols, lwq   int
}

type tblock struct {
	start, end int
	norm       float64 // max absolute row sum of the block (LAPACK's onenrm)
}

// ErrPartialEigen is returned when the tridiagonal QL iteration or the
// inverse iteration fails to converge (never seen in practice; LAPACK reports
// the same conditions).
var ErrPartialEigen = errors.New("partial eigendecomposition did not converge")

func (pe *PartialEigen) resize(n int) {
	if pe.n == n && pe.a != nil {
		return
	}
	pe.n = n
	pe.a = make([]float64, n*n)
	pe.d = make([]float64, n)
	pe.e = make([]float64, max(n-1, 0))
	pe.tau = make([]float64, max(n-1, 0))
	pe.vals = make([]float64, n)
	pe.block = make([]int, n)
	pe.order = make([]int, n)
	pe.bd = make([]float64, n)
	pe.be = make([]float64, n)
	pe.lu[0].resize(n)
	pe.lu[1].resize(n)
	pe.blockTmp = make([]int, n)
	pe.lastVal = make([]float64, n)
	pe.clusterStart = make([]int, n)
	var impl gonum.Implementation
	q := []float64{0}
	if n > 1 {
		impl.Dsytrd(blas.Lower, n, pe.a, n, pe.d, pe.e, pe.tau, q, -1)
	}
	pe.work = make([]float64, max(int(q[0]), n, 1))
}

// Factorize tridiagonalises a (only its upper triangle is read) and computes
// all its eigenvalues.
func (pe *PartialEigen) Factorize(a *mat.SymDense) error {
	n := a.SymmetricDim()
	pe.resize(n)
	raw := a.RawSymmetric()
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			x := raw.Data[i*raw.Stride+j]
			pe.a[j*n+i], pe.a[i*n+j] = x, x
		}
	}
	return pe.factorize()
}

// FactorizeDense is Factorize for a symmetric matrix held as a full n x n
// row-major slice (only its lower triangle is read); it is overwritten.
// This lets a caller that assembles its matrix in place skip a copy.
func (pe *PartialEigen) FactorizeDense(n int, data []float64) error {
	pe.resize(n)
	a := pe.a
	copy(a, data[:n*n])
	for i := 0; i < n; i++ { // the upper triangle from the lower
		for j, x := range a[i*n : i*n+i] {
			a[j*n+i] = x
		}
	}
	return pe.factorize()
}

// Matrix returns the n x n row-major storage FactorizeFull factorises,
// for a caller to assemble a symmetric matrix in (both triangles): that
// saves FactorizeDense's copy and its mirroring of the lower triangle, a
// strided pass over the matrix. Its contents on return are undefined.
func (pe *PartialEigen) Matrix(n int) []float64 {
	pe.resize(n)
	return pe.a
}

// FactorizeFull is FactorizeDense for the symmetric matrix assembled in
// Matrix's storage, both triangles set; it is overwritten.
func (pe *PartialEigen) FactorizeFull() error {
	return pe.factorize()
}

// factorize tridiagonalises pe.a, which holds both triangles of the
// matrix, and computes its eigenvalues.
func (pe *PartialEigen) factorize() error {
	n := pe.n
	pe.ok = false
	if n == 0 {
		pe.ok = true
		return nil
	}
	if n == 1 {
		pe.d[0] = pe.a[0]
		pe.vals[0] = pe.a[0]
		pe.blocks = append(pe.blocks[:0], tblock{0, 1, math.Abs(pe.a[0])})
		pe.block[0] = 0
		pe.ok = true
		return nil
	}
	if err := pe.tridiagonalize(); err != nil {
		return err
	}

	// Split T where an off-diagonal is negligible (the test of dsteqr), so
	// that inverse iteration works on unreduced blocks: within one, the
	// eigenvalues are distinct in exact arithmetic.
	pe.blocks = pe.blocks[:0]
	start := 0
	eps := dlamchE
	for i := 0; i < n; i++ {
		if i == n-1 || math.Abs(pe.e[i]) <= math.Sqrt(math.Abs(pe.d[i]))*math.Sqrt(math.Abs(pe.d[i+1]))*eps {
			if i < n-1 {
				pe.e[i] = 0
			}
			b := tblock{start: start, end: i + 1}
			for r := start; r <= i; r++ {
				s := math.Abs(pe.d[r])
				if r > start {
					s += math.Abs(pe.e[r-1])
				}
				if r < i {
					s += math.Abs(pe.e[r])
				}
				b.norm = math.Max(b.norm, s)
			}
			pe.blocks = append(pe.blocks, b)
			start = i + 1
		}
	}
	// Eigenvalues block by block, then merged in ascending order.
	var impl gonum.Implementation
	k := 0
	for bi, b := range pe.blocks {
		m := b.end - b.start
		copy(pe.bd[k:k+m], pe.d[b.start:b.end])
		copy(pe.be[k:k+m-1], pe.e[b.start:b.end-1])
		if m > 1 && !impl.Dsterf(m, pe.bd[k:k+m], pe.be[k:k+m-1]) {
			return ErrPartialEigen
		}
		for c := 0; c < m; c++ {
			pe.block[k+c] = bi
		}
		k += m
	}
	for i := range pe.order {
		pe.order[i] = i
	}
	slices.SortStableFunc(pe.order, func(a, b int) int { return cmp.Compare(pe.bd[a], pe.bd[b]) })
	for i, o := range pe.order {
		pe.vals[i] = pe.bd[o]
		pe.blockTmp[i] = pe.block[o]
	}
	copy(pe.block, pe.blockTmp)
	pe.ok = true
	return nil
}

// tridiagonalizeGo reduces pe.a to T in pe.d, pe.e by tridiag, or gonum's
// Dsytrd with GonumTridiag.
func (pe *PartialEigen) tridiagonalizeGo() {
	if pe.GonumTridiag {
		var impl gonum.Implementation
		impl.Dsytrd(blas.Lower, pe.n, pe.a, pe.n, pe.d, pe.e, pe.tau, pe.work, len(pe.work))
		return
	}
	pe.tridiag()
}

// clusterTol is the relative eigenvalue distance below which inverse
// iteration orthogonalises a vector against its neighbours. LAPACK's dstein
// uses 1e-3; inverse iteration with a shift accurate to eps ||T|| leaves a
// component of at most about eps ||T|| / gap along a neighbour at distance
// gap, so 1e-5 still gives vectors orthogonal to 1e-11, and it spares the
// O(n * cluster) Gram-Schmidt per step when a PSD projection wants dozens of
// eigenvalues packed near zero, where that Gram-Schmidt dominates the
// inverse iteration.
const clusterTol = 1e-5

// dlamchE is the unit roundoff LAPACK calls eps.
const dlamchE = 1.0 / (1 << 53)

// Values returns the eigenvalues in ascending order, in dst if it is long enough.
func (pe *PartialEigen) Values(dst []float64) []float64 {
	if len(dst) < pe.n {
		dst = make([]float64, pe.n)
	}
	copy(dst, pe.vals[:pe.n])
	return dst[:pe.n]
}

// Dim returns the order of the last factorised matrix.
func (pe *PartialEigen) Dim() int { return pe.n }

// VectorsTo writes the orthonormal eigenvectors of the eigenvalues with
// ascending indices lo..hi-1 into the columns of dst (resized to n x (hi-lo)
// when it is empty; otherwise it must be n x (hi-lo)).
func (pe *PartialEigen) VectorsTo(dst *mat.Dense, lo, hi int) error {
	n := pe.n
	if !pe.ok || lo < 0 || hi > n || lo > hi {
		return errors.New("partialeigen: no factorisation or bad index range")
	}
	p := hi - lo
	if p == 0 {
		return nil
	}
	if dst.IsEmpty() {
		dst.ReuseAs(n, p)
	} else if r, c := dst.Dims(); r != n || c != p {
		panic(mat.ErrShape)
	}
	if n == 1 {
		dst.Set(0, 0, 1)
		return nil
	}
	// Only the wanted vectors are computed (as dsyevx calls dstein): with an
	// accurate shift, inverse iteration separates even close eigenvalues,
	// and the vectors of a cluster are orthogonalised against each other.
	wlo, whi := lo, hi
	q := whi - wlo
	if cap(pe.z) < n*q {
		pe.z = make([]float64, n*q)
	}
	z := pe.z[:n*q]
	for i := range z {
		z[i] = 0
	}
	if pe.src == nil {
		pe.src = rand.NewPCG(1, 3)
	}
	pe.src.Seed(1, 3) // deterministic start vectors, as LAPACK's fixed iseed
	if err := pe.inverseIteration(z, q, wlo, whi); err != nil {
		return err
	}
	if err := pe.backTransform(z, q); err != nil {
		return err
	}
	// z holds the vectors as rows; dst wants them as columns.
	raw := dst.RawMatrix()
	for c := 0; c < p; c++ {
		zc := z[c*n : c*n+n]
		for r, v := range zc {
			raw.Data[r*raw.Stride+c] = v
		}
	}
	return nil
}

// backTransformGo overwrites the q x n row-major z, whose rows are
// eigenvectors of T, with Z Q^T, rows the eigenvectors of A: Q = diag(1, Q~)
// from tridiagonalizeGo, Q~ the reflectors in A[1:n, 0:n-1].
func (pe *PartialEigen) backTransformGo(z []float64, q int) {
	n := pe.n
	if pe.GonumTridiag {
		var impl gonum.Implementation
		if pe.lwq < q || pe.zcols != q {
			w := []float64{0}
			impl.Dormqr(blas.Right, blas.Trans, q, n-1, n-1, pe.a[n:], n, pe.tau, z[1:], n, w, -1)
			pe.lwq = int(w[0])
			pe.zcols = q
			if len(pe.work) < pe.lwq {
				pe.work = make([]float64, pe.lwq)
			}
		}
		impl.Dormqr(blas.Right, blas.Trans, q, n-1, n-1, pe.a[n:], n, pe.tau, z[1:], n, pe.work, len(pe.work))
	} else {
		pe.applyQ(z, q)
	}
}

// applyQ overwrites the q x n row-major z with Z Q^T, Q = diag(1, Q~) and
// Q~ = H_0 ... H_{n-2} the reflectors tridiag leaves, as Dormqr(Right, Trans)
// on z's columns 1.. would: H_i = I - tau_i v_i v_i^T acts on entries i+1..
// of each row, v_i(i+1) = 1 and v_i(r) = A(r, i) below. Each row is an
// eigenvector, so every reflector is one dot product and one AXPY along it
// (the reflector gathered once into a contiguous vector): long unit-stride
// kernels rather than one short one a row of the reflector.
func (pe *PartialEigen) applyQ(z []float64, q int) {
	n := pe.n
	if cap(pe.tv) < n {
		pe.tv = make([]float64, n)
	}
	for i := n - 2; i >= 0; i-- {
		tau := pe.tau[i]
		if tau == 0 {
			continue
		}
		v := pe.tv[i+1 : n]
		v[0] = 1
		for r := i + 2; r < n; r++ {
			v[r-i-1] = pe.a[r*n+i]
		}
		// Four vectors a call, which share the loads of v.
		c := 0
		for ; c+4 <= q; c += 4 {
			row := func(k int) []float64 { return z[(c+k)*n+i+1 : (c+k)*n+n] }
			vecmath.Reflect4(tau, v, row(0), row(1), row(2), row(3))
		}
		for ; c < q; c++ {
			zc := z[c*n+i+1 : c*n+n]
			vecmath.AddScaled(zc, -tau*vecmath.Dot(v, zc), v)
		}
	}
}

// tridiag reduces the symmetric matrix in the lower triangle of pe.a to the
// tridiagonal T (pe.d, pe.e) by Householder reflectors, leaving them where
// gonum's Dsytrd(Lower) leaves them (v_k(k+2:n) in column k of pe.a below the
// subdiagonal, tau_k in pe.tau), so that VectorsTo's Dormqr applies Q
// unchanged. It is LAPACK's unblocked dsytd2 with two changes that make it
// several times as fast as gonum's blocked Dsytrd at n = 200 (where half of
// that time goes to a strided, scalar Dsymv):
//   - the trailing matrix is kept as contiguous upper rows (the lower
//     triangle mirrored), so that the symmetric matrix-vector product and the rank-2
//     update are unit-stride vector kernels;
//   - the rank-2 update of step k-1 is applied to a row just before step k's
//     product reads it, in one pass with the product, so each row is loaded
//     once a step (it stays in L1); two rows a pass (vecmath.Rank2x2DotAxpy),
//     which share the loads of the vectors of the update and the product.
//
// The arithmetic is that of dsytd2 (same reflectors, same update order per
// element up to the association of the two rank-1 terms and of the dot
// products' sums), so the eigenvalues agree with Dsytrd's to rounding
// (checked in the tests).
func (pe *PartialEigen) tridiag() {
	n := pe.n
	if cap(pe.tv) < 4*n {
		pe.tv = make([]float64, 4*n)
	}
	// The reduction works on upper rows, w[i*n+j] = A(i,j) for j >= i; the
	// strict lower triangle then only receives the reflectors, column k
	// after step k has read it.
	a := pe.a
	w := a
	v, p := pe.tv[0:n], pe.tv[n:2*n]
	vp, wp := pe.tv[2*n:3*n], pe.tv[3*n:4*n] // step k-1's v and w
	pending := false
	var impl gonum.Implementation
	for k := 0; k < n-1; k++ {
		// Row k, with the update of step k-1, gives the reflector.
		rk := w[k*n+k : k*n+n]
		if pending {
			vecmath.AddScaled(rk, -vp[k], wp[k:n])
			vecmath.AddScaled(rk, -wp[k], vp[k:n])
		}
		pe.d[k] = rk[0]
		m := n - k - 1
		beta, tau := impl.Dlarfg(m, rk[1], rk[2:], 1)
		pe.e[k] = beta
		pe.tau[k] = tau
		v[k+1] = 1
		copy(v[k+2:n], rk[2:])
		for r := k + 2; r < n; r++ {
			a[r*n+k] = v[r]
		}
		// p = A22 v over the trailing rows, each first brought up to date.
		pr := p[k+1 : n]
		for i := range pr {
			pr[i] = 0
		}
		for r := k + 1; r < n; r++ {
			row := w[r*n+r : r*n+n]
			if pending && tau != 0 && r+1 < n {
				// Rows r and r+1 together, sharing the loads of the
				// vectors: row r's entry r alone, then the two rows from
				// column r+1 on. The scatter's term at r+1 from row r+1 is
				// p[r+1]'s own, as below; row r's term there is kept.
				x := math.FMA(-vp[r], wp[r], row[0])
				x = math.FMA(-wp[r], vp[r], x)
				row[0] = x
				pr, pr1 := p[r], p[r+1]
				d1, d2 := vecmath.Rank2x2DotAxpy(row[1:], w[(r+1)*n+r+1:(r+1)*n+n], wp[r+1:n], vp[r+1:n], v[r+1:n], p[r+1:n],
					vp[r], wp[r], v[r], vp[r+1], wp[r+1], v[r+1])
				p[r] = pr + (x*v[r] + d1)
				p[r+1] = math.FMA(v[r], row[1], pr1) + d2
				r++
				continue
			}
			if pending && tau != 0 {
				// The update, the product and the scatter in one pass over
				// the row; the scatter's term at r (row[0]) is p[r]'s own,
				// which the dot gives, so p[r] is restored first.
				pr := p[r]
				p[r] = pr + vecmath.Rank2DotAxpy(row, wp[r:n], vp[r:n], v[r:n], p[r:n], vp[r], wp[r], v[r])
				continue
			}
			if pending {
				vecmath.AddScaled(row, -vp[r], wp[r:n])
				vecmath.AddScaled(row, -wp[r], vp[r:n])
			}
			if tau != 0 {
				vr := v[r:n]
				p[r] += vecmath.Dot(row, vr)
				if x := v[r]; x != 0 && r+1 < n {
					vecmath.AddScaled(p[r+1:n], x, row[1:])
				}
			}
		}
		if tau == 0 {
			pending = false
			continue
		}
		// w = tau p - (tau^2 / 2) (p.v) v; the update is A22 -= v w^T + w v^T.
		vk := v[k+1 : n]
		floats.Scale(tau, pr)
		c := -0.5 * tau * vecmath.Dot(pr, vk)
		vecmath.AddScaled(pr, c, vk)
		copy(vp[k+1:n], vk)
		copy(wp[k+1:n], pr)
		pending = true
	}
	pe.d[n-1] = w[n*n-1]
	if n >= 2 {
		pe.tau[n-2] = 0
	}
}
