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
	bd, be             []float64
	lu, dl, du, du2, x []float64
	piv                []bool
	z                  []float64
	blockTmp           []int
	lastVal            []float64 // per block: the last eigenvalue processed
	clusterStart       []int     // per block: first column of the current cluster
	src                *rand.PCG
	ok                 bool
	zcols, lwq         int
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
	pe.lu = make([]float64, n)
	pe.dl = make([]float64, n)
	pe.du = make([]float64, n)
	pe.du2 = make([]float64, n)
	pe.x = make([]float64, n)
	pe.piv = make([]bool, n)
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
			pe.a[j*n+i] = raw.Data[i*raw.Stride+j]
		}
	}
	return pe.factorize()
}

// FactorizeDense is Factorize for a symmetric matrix held as a full n x n
// row-major slice (only its lower triangle is read); it is overwritten.
// This lets a caller that assembles its matrix in place skip a copy.
func (pe *PartialEigen) FactorizeDense(n int, data []float64) error {
	pe.resize(n)
	copy(pe.a, data[:n*n])
	return pe.factorize()
}

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

// inverseIteration fills rows 0..q-1 of z (q x n, row-major) with the
// eigenvectors of T for ascending eigenvalue indices wlo..whi-1, following
// LAPACK dstein: per block, in increasing order of eigenvalue, perturb
// coincident eigenvalues apart, iterate with a scaled random start and
// perturbed pivots, and orthogonalise against the earlier vectors of the
// same cluster.
func (pe *PartialEigen) inverseIteration(z []float64, q, wlo, whi int) error {
	n := pe.n
	const maxIts = 5
	const extra = 1 // dstein takes 2; the residual check below guards the vectors
	eps := dlamchE
	// Per block, eigenvalues come in ascending order (the global order is
	// ascending, and so is the order within each block).
	for bi := range pe.blocks {
		pe.clusterStart[bi] = -1
	}
	for c := 0; c < q; c++ {
		k := wlo + c
		bi := pe.block[k]
		b := pe.blocks[bi]
		m := b.end - b.start
		if m == 1 {
			z[c*n+b.start] = 1
			continue
		}
		xj := pe.vals[k]
		first := pe.clusterStart[bi] < 0
		if first || xj-pe.lastVal[bi] > clusterTol*b.norm {
			pe.clusterStart[bi] = c
		}
		if !first {
			// Coincident eigenvalues are pulled apart so that the
			// factorisations differ (dstein's pertol).
			if pertol := 10 * math.Abs(eps*xj); xj-pe.lastVal[bi] < pertol {
				xj = pe.lastVal[bi] + pertol
			}
		}
		pe.lastVal[bi] = xj
		gp := pe.clusterStart[bi]

		tol := eps * b.norm
		last := pe.factorTridiag(b, xj, tol)
		x := pe.x[:m]
		for r := range x {
			// rand.Rand's Float64 of the PCG's next value, without the
			// interface call per entry (a third of this loop's time).
			x[r] = 2*(float64(pe.src.Uint64()<<11>>11)/(1<<53)) - 1
		}
		dtpcrt := math.Sqrt(0.1 / float64(m))
		nrmchk := 0
		for its := 0; its < maxIts; its++ {
			asum := 0.0
			for _, v := range x {
				asum += math.Abs(v)
			}
			scale := float64(m) * b.norm * math.Max(eps, math.Abs(last)) / asum
			for r := range x {
				x[r] *= scale
			}
			pe.solveTridiag(m, x)
			// Orthogonalise against the earlier vectors of this cluster.
			for g := gp; g < c; g++ {
				zg := z[g*n+b.start : g*n+b.end]
				vecmath.AddScaled(x, -vecmath.Dot(x, zg), zg)
			}
			nrm := 0.0
			for _, v := range x {
				if v > nrm {
					nrm = v
				} else if -v > nrm {
					nrm = -v
				}
			}
			// A large solution means the shift is close to an eigenvalue;
			// then take extra iterations to purify the vector.
			if nrm >= dtpcrt {
				if nrmchk++; nrmchk > extra {
					break
				}
			}
		}
		s := 0.0
		jmax, big := 0, 0.0
		for r, v := range x {
			s += v * v
			if math.Abs(v) > big {
				big, jmax = math.Abs(v), r
			}
		}
		if !(s > 0) || math.IsInf(s, 0) {
			return ErrPartialEigen
		}
		s = 1 / math.Sqrt(s)
		if x[jmax] < 0 {
			s = -s
		}
		for r, v := range x {
			x[r] = v * s
		}
		copy(z[c*n+b.start:c*n+b.end], x)
		// Residual ||(T - lambda) x||: a failed iteration is an error, not
		// a wrong vector.
		res := 0.0
		lam := pe.vals[k]
		for r := 0; r < m; r++ {
			v := (pe.d[b.start+r] - lam) * x[r]
			if r > 0 {
				v += pe.e[b.start+r-1] * x[r-1]
			}
			if r < m-1 {
				v += pe.e[b.start+r] * x[r+1]
			}
			res += v * v
		}
		if math.Sqrt(res) > 1e-8*math.Max(b.norm, math.SmallestNonzeroFloat64)*float64(m) {
			return ErrPartialEigen
		}
	}
	return nil
}

// factorTridiag computes the LU factorisation with partial pivoting of
// T_block - lambda I (as LAPACK dgttrf): U has superdiagonals du and du2 and
// its pivots, those below tol in magnitude replaced by +-tol, are stored as
// reciprocals in lu; dl holds the multipliers and piv the row interchanges.
// It returns the last pivot before perturbation (dstein's scale).
func (pe *PartialEigen) factorTridiag(b tblock, lambda, tol float64) (lastPivot float64) {
	m := b.end - b.start
	d, dl, du, du2 := pe.lu[:m], pe.dl[:m], pe.du[:m], pe.du2[:m]
	for r := 0; r < m; r++ {
		d[r] = pe.d[b.start+r] - lambda
		du2[r] = 0
		if r < m-1 {
			dl[r] = pe.e[b.start+r]
			du[r] = pe.e[b.start+r]
		}
	}
	for i := 0; i < m-1; i++ {
		if math.Abs(d[i]) >= math.Abs(dl[i]) {
			pe.piv[i] = false
			if d[i] != 0 {
				f := dl[i] / d[i]
				dl[i] = f
				d[i+1] -= f * du[i]
			} else {
				dl[i] = 0
			}
		} else {
			pe.piv[i] = true
			f := d[i] / dl[i]
			d[i] = dl[i]
			dl[i] = f
			t := du[i]
			du[i] = d[i+1]
			d[i+1] = t - f*d[i+1]
			if i < m-2 {
				du2[i] = du[i+1]
				du[i+1] = -f * du[i+1]
			}
		}
	}
	lastPivot = d[m-1]
	for i, v := range d {
		switch {
		case v >= tol:
		case v <= -tol:
		case v < 0:
			v = -tol
		default:
			v = tol
		}
		d[i] = 1 / v
	}
	return lastPivot
}

// solveTridiag solves (T_block - lambda I) x = x with the factors of
// factorTridiag, whose pivots smaller than tol were replaced by +-tol (LAPACK
// dlagts with job -1): the perturbation that makes inverse iteration work at
// an exact eigenvalue. lu holds the reciprocals of the pivots.
func (pe *PartialEigen) solveTridiag(m int, x []float64) {
	inv, dl, du, du2 := pe.lu[:m], pe.dl[:m], pe.du[:m], pe.du2[:m]
	piv := pe.piv[:m]
	for i := 0; i < m-1; i++ {
		if !piv[i] {
			x[i+1] -= dl[i] * x[i]
		} else {
			t := x[i]
			x[i] = x[i+1]
			x[i+1] = t - dl[i]*x[i]
		}
	}
	x[m-1] *= inv[m-1]
	if m > 1 {
		x[m-2] = (x[m-2] - du[m-2]*x[m-1]) * inv[m-2]
	}
	for i := m - 3; i >= 0; i-- {
		x[i] = (x[i] - du[i]*x[i+1] - du2[i]*x[i+2]) * inv[i]
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
		for c := 0; c < q; c++ {
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
//     product reads it, in one pass with the product (vecmath.Rank2DotAxpy),
//     so each row is loaded once a step (it stays in L1).
//
// The arithmetic is that of dsytd2 (same reflectors, same update order per
// element up to the association of the two rank-1 terms), so the eigenvalues
// agree with Dsytrd's to rounding (checked in the tests).
func (pe *PartialEigen) tridiag() {
	n := pe.n
	if cap(pe.tv) < 4*n {
		pe.tv = make([]float64, 4*n)
	}
	// The reduction works on upper rows, w[i*n+j] = A(i,j) for j >= i, a
	// mirror of the lower triangle in place; the strict lower triangle then
	// only receives the reflectors, column k after step k has read it.
	a := pe.a
	w := a
	for i := 0; i < n; i++ {
		row := a[i*n : i*n+i]
		for j, x := range row {
			w[j*n+i] = x
		}
	}
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
