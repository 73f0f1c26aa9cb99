package kernelmath

import (
	"math"

	"github.com/kernelrank/kernelrank/internal/vecmath"
)

// inverseIteration fills rows 0..q-1 of z (q x n, row-major) with the
// eigenvectors of T for ascending eigenvalue indices wlo..whi-1, following
// LAPACK dstein: per block, in increasing order of eigenvalue, perturb
// coincident eigenvalues apart, iterate with a scaled random start and
// perturbed pivots, and orthogonalise against the earlier vectors of the
// same cluster.
//
// Two consecutive vectors of one block whose second starts a cluster do not
// depend on each other, so they are computed together (iteratePair): their
// factorisations and solves, chains of dependent divisions and
// multiply-adds along the block, run interleaved, which the CPU overlaps.
// Each vector gets the arithmetic, random start and iterations it gets
// alone (iterate), so the result is the same bit for bit.
func (pe *PartialEigen) inverseIteration(z []float64, q, wlo, whi int) error {
	// Per block, eigenvalues come in ascending order (the global order is
	// ascending, and so is the order within each block).
	for bi := range pe.blocks {
		pe.clusterStart[bi] = -1
	}
	n := pe.n
	for c := 0; c < q; c++ {
		v := pe.shift(c, wlo+c)
		if v.m == 1 {
			z[c*n+v.b.start] = 1
			continue
		}
		if c+1 < q && pe.block[wlo+c+1] == v.bi && pe.startsCluster(v.bi, wlo+c+1) && !pe.onePerStep {
			// The next vector starts a cluster of its own: it is not
			// orthogonalised against this one.
			w := pe.shift(c+1, wlo+c+1)
			if err := pe.iteratePair(z, &v, &w); err != nil {
				return err
			}
			c++
			continue
		}
		if err := pe.iterate(z, &v); err != nil {
			return err
		}
	}
	return nil
}

// invVector is the state of one eigenvector's inverse iteration.
type invVector struct {
	c, k   int // row of z, eigenvalue index
	bi     int // block
	b      tblock
	m      int
	xj     float64 // the shift (the eigenvalue, perturbed off its predecessor's)
	gp     int     // first row of its cluster
	last   float64 // last pivot of T - xj I, before perturbation
	nrmchk int
	done   bool
}

// shift does dstein's bookkeeping for row c, eigenvalue k: its block, the
// cluster it belongs to, and its shift.
func (pe *PartialEigen) shift(c, k int) invVector {
	bi := pe.block[k]
	b := pe.blocks[bi]
	v := invVector{c: c, k: k, bi: bi, b: b, m: b.end - b.start, xj: pe.vals[k]}
	if v.m == 1 {
		return v
	}
	first := pe.clusterStart[bi] < 0
	if pe.startsCluster(bi, k) {
		pe.clusterStart[bi] = c
	}
	if !first {
		// Coincident eigenvalues are pulled apart so that the
		// factorisations differ (dstein's pertol).
		if pertol := 10 * math.Abs(dlamchE*v.xj); v.xj-pe.lastVal[bi] < pertol {
			v.xj = pe.lastVal[bi] + pertol
		}
	}
	pe.lastVal[bi] = v.xj
	v.gp = pe.clusterStart[bi]
	return v
}

// startsCluster reports whether eigenvalue k, the next of block bi, starts
// a cluster: the block's first, or more than clusterTol of the block's norm
// above the last one processed.
func (pe *PartialEigen) startsCluster(bi, k int) bool {
	return pe.clusterStart[bi] < 0 || pe.vals[k]-pe.lastVal[bi] > clusterTol*pe.blocks[bi].norm
}

const (
	invMaxIts = 5
	invExtra  = 1 // dstein takes 2; the residual check of finish guards the vectors
)

// draw fills x with a random start, uniform in [-1, 1).
func (pe *PartialEigen) draw(x []float64) {
	for r := range x {
		// rand.Rand's Float64 of the PCG's next value, without the
		// interface call per entry (a third of this loop's time).
		x[r] = 2*(float64(pe.src.Uint64()<<11>>11)/(1<<53)) - 1
	}
}

// scale scales f.x as dstein does before a solve.
func (v *invVector) scale(f *tridiagLU) {
	x := f.x[:v.m]
	asum := 0.0
	for _, e := range x {
		asum += math.Abs(e)
	}
	s := float64(v.m) * v.b.norm * math.Max(dlamchE, math.Abs(v.last)) / asum
	for r := range x {
		x[r] *= s
	}
}

// check orthogonalises f.x, just solved, against the earlier vectors of v's
// cluster and marks v done when its norm has shown enough growth.
func (v *invVector) check(z []float64, n int, f *tridiagLU) {
	x := f.x[:v.m]
	for g := v.gp; g < v.c; g++ {
		zg := z[g*n+v.b.start : g*n+v.b.end]
		vecmath.AddScaled(x, -vecmath.Dot(x, zg), zg)
	}
	nrm := 0.0
	for _, e := range x {
		if e > nrm {
			nrm = e
		} else if -e > nrm {
			nrm = -e
		}
	}
	// A large solution means the shift is close to an eigenvalue; then take
	// extra iterations to purify the vector.
	if nrm >= math.Sqrt(0.1/float64(v.m)) {
		if v.nrmchk++; v.nrmchk > invExtra {
			v.done = true
		}
	}
}

// iterate computes v's eigenvector into row v.c of z.
func (pe *PartialEigen) iterate(z []float64, v *invVector) error {
	f := &pe.lu[0]
	v.last = f.factor(pe.d[v.b.start:v.b.end], pe.e[v.b.start:v.b.end-1], v.xj, dlamchE*v.b.norm)
	pe.draw(f.x[:v.m])
	for its := 0; its < invMaxIts && !v.done; its++ {
		v.scale(f)
		f.solve(v.m)
		v.check(z, pe.n, f)
	}
	return pe.finish(z, v, f)
}

// iteratePair is iterate for v and w, one block's, w not orthogonalised
// against v: the two factorisations and, while both iterate, the two solves
// interleaved.
func (pe *PartialEigen) iteratePair(z []float64, v, w *invVector) error {
	f, g := &pe.lu[0], &pe.lu[1]
	d, e := pe.d[v.b.start:v.b.end], pe.e[v.b.start:v.b.end-1]
	tol := dlamchE * v.b.norm
	v.last, w.last = factorPair(f, g, d, e, v.xj, w.xj, tol)
	pe.draw(f.x[:v.m])
	pe.draw(g.x[:w.m])
	for its := 0; its < invMaxIts && !(v.done && w.done); its++ {
		switch {
		case !v.done && !w.done:
			v.scale(f)
			w.scale(g)
			solvePair(f, g, v.m)
			v.check(z, pe.n, f)
			w.check(z, pe.n, g)
		case !v.done:
			v.scale(f)
			f.solve(v.m)
			v.check(z, pe.n, f)
		default:
			w.scale(g)
			g.solve(w.m)
			w.check(z, pe.n, g)
		}
	}
	if err := pe.finish(z, v, f); err != nil {
		return err
	}
	return pe.finish(z, w, g)
}

// finish normalises v's iterate (largest entry positive), stores it in row
// v.c of z and checks its residual ||(T - lambda) x||: a failed iteration is
// an error, not a wrong vector.
func (pe *PartialEigen) finish(z []float64, v *invVector, f *tridiagLU) error {
	m, b := v.m, v.b
	x := f.x[:m]
	s := 0.0
	jmax, big := 0, 0.0
	for r, e := range x {
		s += e * e
		if math.Abs(e) > big {
			big, jmax = math.Abs(e), r
		}
	}
	if !(s > 0) || math.IsInf(s, 0) {
		return ErrPartialEigen
	}
	s = 1 / math.Sqrt(s)
	if x[jmax] < 0 {
		s = -s
	}
	for r, e := range x {
		x[r] = e * s
	}
	copy(z[v.c*pe.n+b.start:v.c*pe.n+b.end], x)
	res := 0.0
	lam := pe.vals[v.k]
	for r := 0; r < m; r++ {
		e := (pe.d[b.start+r] - lam) * x[r]
		if r > 0 {
			e += pe.e[b.start+r-1] * x[r-1]
		}
		if r < m-1 {
			e += pe.e[b.start+r] * x[r+1]
		}
		res += e * e
	}
	if math.Sqrt(res) > 1e-8*math.Max(b.norm, math.SmallestNonzeroFloat64)*float64(m) {
		return ErrPartialEigen
	}
	return nil
}

// tridiagLU is the LU factorisation with partial pivoting of a block of T
// minus a shift (as LAPACK dgttrf): U has superdiagonals du and du2 and its
// pivots, those below tol in magnitude replaced by +-tol, are stored as
// reciprocals in lu; dl holds the multipliers and piv the row interchanges.
// x is the iterate solved with it.
type tridiagLU struct {
	lu, dl, du, du2, x []float64
	piv                []bool
}

func (f *tridiagLU) resize(n int) {
	f.lu = make([]float64, n)
	f.dl = make([]float64, n)
	f.du = make([]float64, n)
	f.du2 = make([]float64, n)
	f.x = make([]float64, n)
	f.piv = make([]bool, n)
}

// load sets the factors to the unfactorised T - lambda I of the block with
// diagonal d and off-diagonal e.
func (f *tridiagLU) load(d, e []float64, lambda float64) {
	m := len(d)
	for r := 0; r < m; r++ {
		f.lu[r] = d[r] - lambda
		f.du2[r] = 0
		if r < m-1 {
			f.dl[r] = e[r]
			f.du[r] = e[r]
		}
	}
}

// step eliminates below pivot i (m the block's order).
func (f *tridiagLU) step(i, m int) {
	d, dl, du, du2 := f.lu, f.dl, f.du, f.du2
	if math.Abs(d[i]) >= math.Abs(dl[i]) {
		f.piv[i] = false
		if d[i] != 0 {
			g := dl[i] / d[i]
			dl[i] = g
			d[i+1] -= g * du[i]
		} else {
			dl[i] = 0
		}
		return
	}
	f.piv[i] = true
	g := d[i] / dl[i]
	d[i] = dl[i]
	dl[i] = g
	t := du[i]
	du[i] = d[i+1]
	d[i+1] = t - g*d[i+1]
	if i < m-2 {
		du2[i] = du[i+1]
		du[i+1] = -g * du[i+1]
	}
}

// perturb replaces the pivots by their perturbed reciprocals and returns
// the last pivot before perturbation (dstein's scale).
func (f *tridiagLU) perturb(m int, tol float64) (lastPivot float64) {
	d := f.lu[:m]
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

// factor factorises T - lambda I for the block with diagonal d and
// off-diagonal e.
func (f *tridiagLU) factor(d, e []float64, lambda, tol float64) (lastPivot float64) {
	m := len(d)
	f.load(d, e, lambda)
	for i := 0; i < m-1; i++ {
		f.step(i, m)
	}
	return f.perturb(m, tol)
}

// factorPair is factor for two shifts of one block, into f and g, their
// eliminations interleaved.
func factorPair(f, g *tridiagLU, d, e []float64, lf, lg, tol float64) (lastF, lastG float64) {
	m := len(d)
	f.load(d, e, lf)
	g.load(d, e, lg)
	for i := 0; i < m-1; i++ {
		f.step(i, m)
		g.step(i, m)
	}
	return f.perturb(m, tol), g.perturb(m, tol)
}

// forward applies the multipliers and interchanges of step i to f.x.
func (f *tridiagLU) forward(i int) {
	x := f.x
	if !f.piv[i] {
		x[i+1] -= f.dl[i] * x[i]
		return
	}
	t := x[i]
	x[i] = x[i+1]
	x[i+1] = t - f.dl[i]*x[i]
}

// back solves row i of U x = y, rows i+1 and i+2 solved (i <= m-3).
func (f *tridiagLU) back(i int) {
	x := f.x
	x[i] = (x[i] - f.du[i]*x[i+1] - f.du2[i]*x[i+2]) * f.lu[i]
}

// lastTwo solves rows m-1 and m-2 of U x = y.
func (f *tridiagLU) lastTwo(m int) {
	x := f.x
	x[m-1] *= f.lu[m-1]
	if m > 1 {
		x[m-2] = (x[m-2] - f.du[m-2]*x[m-1]) * f.lu[m-2]
	}
}

// solve solves (T_block - lambda I) x = x in place on f.x[:m] with the
// perturbed factors (LAPACK dlagts with job -1): the perturbation that makes
// inverse iteration work at an exact eigenvalue.
func (f *tridiagLU) solve(m int) {
	for i := 0; i < m-1; i++ {
		f.forward(i)
	}
	f.lastTwo(m)
	for i := m - 3; i >= 0; i-- {
		f.back(i)
	}
}

// solvePair is solve for f and g (one order m), interleaved.
func solvePair(f, g *tridiagLU, m int) {
	for i := 0; i < m-1; i++ {
		f.forward(i)
		g.forward(i)
	}
	f.lastTwo(m)
	g.lastTwo(m)
	for i := m - 3; i >= 0; i-- {
		f.back(i)
		g.back(i)
	}
}
