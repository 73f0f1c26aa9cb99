package npkl

// lbfgs keeps the last curvature pairs of -J (a convex function) and
// applies the L-BFGS inverse-Hessian approximation to the gradient of J,
// restricted to the variables that are free to move (two-metric projection).
type lbfgs struct {
	mem    int
	s, y   [][]float64 // ring of pairs s = alpha_t - alpha_{t-1}, y = -(g_t - g_{t-1})
	head   int
	n      int
	held   []bool
	rho, a []float64
}

func newLBFGS(dim, mem int) *lbfgs {
	q := &lbfgs{mem: mem, held: make([]bool, dim), rho: make([]float64, mem), a: make([]float64, mem)}
	for i := 0; i < mem; i++ {
		q.s = append(q.s, make([]float64, dim))
		q.y = append(q.y, make([]float64, dim))
	}
	return q
}

func (q *lbfgs) len() int { return q.n }

func (q *lbfgs) reset() { q.n = 0 }

// push records the pair from (alphaOld, gOld) to (alphaNew, gNew).
func (q *lbfgs) push(alphaNew, alphaOld, gNew, gOld []float64) {
	s, y := q.s[q.head], q.y[q.head]
	for e := range s {
		s[e] = alphaNew[e] - alphaOld[e]
		y[e] = gOld[e] - gNew[e]
	}
	q.head = (q.head + 1) % q.mem
	q.n = min(q.n+1, q.mem)
}

// pair returns the i-th most recent pair (i = 0 the newest).
func (q *lbfgs) pair(i int) ([]float64, []float64) {
	k := (q.head - 1 - i + 2*q.mem) % q.mem
	return q.s[k], q.y[k]
}

// dot is the inner product over the free variables.
func (q *lbfgs) dot(u, v []float64) float64 {
	s := 0.0
	for e, h := range q.held {
		if !h {
			s += u[e] * v[e]
		}
	}
	return s
}

// direction writes into dir the ascent direction: the L-BFGS two-loop
// recursion on the free variables, the plain gradient on the held ones (a
// variable at a bound whose gradient points out of the set: the unit
// projected step leaves it in place). tmp is scratch.
func (q *lbfgs) direction(dir, g []float64, d Dual, alpha, tmp []float64) {
	for e := range tmp {
		tmp[e] = alpha[e] + g[e]
	}
	d.Project(tmp)
	for e := range q.held {
		q.held[e] = tmp[e] == alpha[e] && g[e] != 0
		dir[e] = g[e]
		if q.held[e] {
			dir[e] = 0
		}
	}
	for i := 0; i < q.n; i++ {
		s, y := q.pair(i)
		// A pair without positive curvature on the free variables is skipped.
		q.rho[i], q.a[i] = 0, 0
		if sy := q.dot(s, y); sy > 0 {
			q.rho[i] = 1 / sy
		}
		q.a[i] = q.rho[i] * q.dot(s, dir)
		for e, h := range q.held {
			if !h {
				dir[e] -= q.a[i] * y[e]
			}
		}
	}
	s, y := q.pair(0)
	if yy, sy := q.dot(y, y), q.dot(s, y); yy > 0 && sy > 0 {
		gamma := sy / yy
		for e := range dir {
			dir[e] *= gamma
		}
	}
	for i := q.n - 1; i >= 0; i-- {
		s, y := q.pair(i)
		b := q.rho[i] * q.dot(y, dir)
		for e, h := range q.held {
			if !h {
				dir[e] += (q.a[i] - b) * s[e]
			}
		}
	}
	for e, h := range q.held {
		if h {
			dir[e] = g[e]
		}
	}
}
