package mkl

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// The two subproblems of the level method.

// levelLP returns L = min over the simplex of max_j cut_j(theta), the
// lower bound of the level method, and a minimiser, by gonum's simplex
// method on the standard form over x = (theta, eta+, eta-, s) >= 0:
//
//	min eta+ - eta-  s.t.  -1/2 q_j'theta - eta+ + eta- + s_j = -alphaSum_j  (j = 1..k),  1'theta = 1,
//
// so that s_j = eta - cut_j(theta) >= 0. The minimiser is clipped to
// theta >= 0 and rescaled to sum 1 against rounding.
func levelLP(cuts []cut, m int) (float64, []float64, error) {
	k := len(cuts)
	cols := m + 2 + k
	a := mat.NewDense(k+1, cols, nil)
	b := make([]float64, k+1)
	c := make([]float64, cols)
	c[m], c[m+1] = 1, -1
	for j, cu := range cuts {
		for t, v := range cu.q {
			a.Set(j, t, -0.5*v)
		}
		a.Set(j, m, -1)
		a.Set(j, m+1, 1)
		a.Set(j, m+2+j, 1)
		b[j] = -cu.alphaSum
	}
	for t := range m {
		a.Set(k, t, 1)
	}
	b[k] = 1
	opt, x, err := simplexFrom(c, a, b, vertexBasis(cuts, m))
	if err != nil {
		return 0, nil, err
	}
	theta := make([]float64, m)
	sum := 0.0
	for t := range theta {
		theta[t] = max(x[t], 0)
		sum += theta[t]
	}
	for t := range theta {
		theta[t] /= sum
	}
	return opt, theta, nil
}

// simplexFrom is lp.Simplex from the basis, or, when rounding leaves the
// basis infeasible (cuts tied at its vertex give slacks of 0, which the
// solve can return as -1e-13 and gonum then panics with an error rather
// than return one: one mkl-level fit in a Table 4.2 run), from
// gonum's phase one.
func simplexFrom(c []float64, a mat.Matrix, b []float64, basis []int) (opt float64, x []float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(error); !ok {
				panic(r)
			}
			opt, x, err = lp.Simplex(c, a, b, 1e-12, nil)
		}
	}()
	return lp.Simplex(c, a, b, 1e-12, basis)
}

// vertexBasis returns a feasible basis of the standard form of levelLP,
// which spares gonum's phase one (numerically fragile on these problems):
// theta = e_v at the vertex v of the lowest model value eta = max_j
// cut_j(e_v), eta+ (or eta- when eta < 0), and the slacks of every cut but
// one attaining the max. The basis matrix is non-singular: after the slack
// columns, the rows of the tight cut and of 1'theta = 1 leave the 2 x 2
// block [-q_jv/2, -+1; 1, 0].
func vertexBasis(cuts []cut, m int) []int {
	v, tight, eta := 0, 0, math.Inf(1)
	for t := range m {
		j, h := 0, math.Inf(-1)
		for i, cu := range cuts {
			if e := cu.alphaSum - 0.5*cu.q[t]; e > h {
				j, h = i, e
			}
		}
		if h < eta {
			v, tight, eta = t, j, h
		}
	}
	basis := []int{v, m}
	if eta < 0 {
		basis[1] = m + 1
	}
	for j := range cuts {
		if j != tight {
			basis = append(basis, m+2+j)
		}
	}
	return basis
}

// errProjection is returned when projectLevel does not end (cycling).
var errProjection = errors.New("active-set projection did not terminate")

// projectLevel returns the Euclidean projection of c onto
// {x >= 0, 1'x = 1, a_j'x <= b_j for every j}, exactly, by the primal
// active-set method (Nocedal & Wright, Numerical Optimization, Alg. 16.3)
// for the Hessian I, from the feasible point x0. The working set is the
// variables fixed at 0 and the cuts held at equality; on it the step goes
// to the projection of c onto the affine set {x_F : 1'x_F = 1, a_jF'x_F =
// b_j, j in J} (F the free variables): x_F = c_F - N mu with N = [1, a_JF]
// and N mu the minimum-norm solution y of N'y = N'c_F - (1, b_J), from a
// QR factorisation of N. A blocked step adds the blocking bound or cut; at
// the minimum on a working set the multipliers of the cuts (mu_j) and of
// the bounds (rho_t = nu + sum_j mu_j a_jt - c_t) must be >= 0, else the
// most negative one is dropped. The working normals stay linearly
// independent, so N has full column rank: a constraint blocks only when
// the step p, which is orthogonal to the working normals, has a component
// along its normal above 1e-9 relative (in exact arithmetic any non-zero
// one would do). It returns errProjection if it does not end (cycling, or
// a working set that rounding made singular).
func projectLevel(c, x0 []float64, a [][]float64, b []float64) ([]float64, error) {
	m, k := len(c), len(b)
	x := append([]float64(nil), x0...)
	fixed := make([]bool, m)
	for t, v := range x {
		fixed[t] = v <= 0
		x[t] = max(v, 0)
	}
	active := make([]bool, k)
	gradScale := 1 + maxAbs(c)
	var (
		free, cutsJ []int
		buf         []float64 // backing of N
		qr          mat.QR
		freedVar    = -1 // the bound or cut the last iteration dropped
		freedCut    = -1
	)
	p := make([]float64, m)
	maxIter := 10*(m+k) + 100
	for range maxIter {
		free, cutsJ = free[:0], cutsJ[:0]
		for t, f := range fixed {
			if !f {
				free = append(free, t)
			}
		}
		for j, act := range active {
			if act {
				cutsJ = append(cutsJ, j)
			}
		}
		nf, r := len(free), 1+len(cutsJ)
		if cap(buf) < nf*r {
			buf = make([]float64, nf*r)
		}
		nm := mat.NewDense(nf, r, buf[:nf*r]) // every entry is set below
		v := mat.NewVecDense(r, nil)
		v.SetVec(0, -1)
		for col, j := range cutsJ {
			v.SetVec(1+col, -b[j])
		}
		for i, t := range free {
			nm.Set(i, 0, 1)
			v.SetVec(0, v.AtVec(0)+c[t])
			for col, j := range cutsJ {
				nm.Set(i, 1+col, a[j][t])
				v.SetVec(1+col, v.AtVec(1+col)+a[j][t]*c[t])
			}
		}
		var y, mu mat.VecDense
		qr.Factorize(nm)
		if err := qr.SolveVecTo(&y, true, v); err != nil {
			return nil, fmt.Errorf("%w: working set: %v", errProjection, err)
		}
		if err := qr.SolveVecTo(&mu, false, &y); err != nil {
			return nil, fmt.Errorf("%w: multipliers: %v", errProjection, err)
		}
		clear(p)
		pNorm := 0.0
		for i, t := range free {
			p[t] = c[t] - y.AtVec(i) - x[t]
			pNorm += p[t] * p[t]
		}
		pNorm = math.Sqrt(pNorm)
		// x lies in the simplex, so a step below 1e-10 is rounding (of the
		// order of cond(N) * 1e-16); so is any step when N is square.
		if pNorm <= 1e-10 || nf == r {
			// At the minimum on the working set: check the multipliers,
			// the cuts' scaled by |a_j|_inf into units of the gradient.
			drop, worst, isCut := -1, -1e-12*gradScale, false
			for col, j := range cutsJ {
				if l := mu.AtVec(1+col) * maxAbs(a[j]); l < worst {
					drop, worst, isCut = j, l, true
				}
			}
			for t, f := range fixed {
				if !f {
					continue
				}
				rho := mu.AtVec(0) - c[t]
				for col, j := range cutsJ {
					rho += mu.AtVec(1+col) * a[j][t]
				}
				if rho < worst {
					drop, worst, isCut = t, rho, false
				}
			}
			freedVar, freedCut = -1, -1
			switch {
			case drop < 0:
				return x, nil
			case isCut:
				active[drop], freedCut = false, drop
			default:
				fixed[drop], freedVar = false, drop
			}
			continue
		}
		alpha, blockVar, blockCut := 1.0, -1, -1
		for _, t := range free {
			if p[t] < -1e-10*pNorm {
				if s := x[t] / -p[t]; s < alpha {
					alpha, blockVar, blockCut = s, t, -1
				}
			}
		}
		for j, act := range active {
			if act {
				continue
			}
			ap, ax, aNorm := 0.0, 0.0, 0.0
			for _, t := range free {
				ap += a[j][t] * p[t]
				ax += a[j][t] * x[t]
				aNorm += a[j][t] * a[j][t]
			}
			if ap > 1e-9*math.Sqrt(aNorm)*pNorm {
				if s := max(b[j]-ax, 0) / ap; s < alpha {
					alpha, blockVar, blockCut = s, -1, j
				}
			}
		}
		if alpha == 0 && (blockVar >= 0 && blockVar == freedVar || blockCut >= 0 && blockCut == freedCut) {
			// What the last iteration dropped would come back at once: its
			// multiplier was negative only by rounding, and x is optimal.
			return x, nil
		}
		freedVar, freedCut = -1, -1
		for _, t := range free {
			x[t] = max(x[t]+alpha*p[t], 0)
		}
		switch {
		case blockVar >= 0:
			x[blockVar], fixed[blockVar] = 0, true
		case blockCut >= 0:
			active[blockCut] = true
		}
	}
	return nil, fmt.Errorf("%w after %d iterations", errProjection, maxIter)
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}
