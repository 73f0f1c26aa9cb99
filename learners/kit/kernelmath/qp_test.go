package kernelmath

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// qpRandomPSD returns A'A/rank for a rank x p Gaussian A: PSD, and singular
// when rank < p.
func qpRandomPSD(p, rank int, r *rand.Rand) *mat.SymDense {
	a := mat.NewDense(rank, p, nil)
	for i := range rank {
		for j := range p {
			a.Set(i, j, r.NormFloat64())
		}
	}
	q := mat.NewSymDense(p, nil)
	q.SymOuterK(1/float64(rank), a.T())
	return q
}

func qpRandomVec(p int, scale float64, r *rand.Rand) []float64 {
	c := make([]float64, p)
	for i := range c {
		c[i] = scale * r.NormFloat64()
	}
	return c
}

func qpObjective(q *mat.SymDense, c, x []float64) float64 {
	xv := mat.NewVecDense(len(x), x)
	return 0.5*mat.Inner(xv, q, xv) + mat.Dot(mat.NewVecDense(len(c), c), xv)
}

// qpBruteForce solves the QP by enumerating every free set S: the
// stationary point of the QP restricted to {x_i = 0 off S} (and sum x = 1),
// from the KKT linear system, kept if it is feasible; the least objective
// over all S is the optimum. (Some optimum is a vertex of the optimal set,
// and there the KKT matrix of its support is nonsingular, so skipping
// singular systems loses nothing.) It returns nil if no S works.
func qpBruteForce(q *mat.SymDense, c []float64, simplex bool) []float64 {
	p := len(c)
	var best []float64
	bestObj := math.Inf(1)
	for mask := 0; mask < 1<<p; mask++ {
		var s []int
		for i := range p {
			if mask&(1<<i) != 0 {
				s = append(s, i)
			}
		}
		k, dim := len(s), len(s)
		if simplex {
			dim++
		}
		if dim == 0 { // x = 0
			if bestObj > 0 {
				best, bestObj = make([]float64, p), 0
			}
			continue
		}
		kkt := mat.NewDense(dim, dim, nil)
		rhs := mat.NewVecDense(dim, nil)
		for a, i := range s {
			for b, j := range s {
				kkt.Set(a, b, q.At(i, j))
			}
			rhs.SetVec(a, -c[i])
			if simplex {
				kkt.Set(a, k, 1)
				kkt.Set(k, a, 1)
			}
		}
		if simplex {
			rhs.SetVec(k, 1)
		}
		var sol mat.VecDense
		if err := sol.SolveVec(kkt, rhs); err != nil {
			continue
		}
		x := make([]float64, p)
		ok := true
		for a, i := range s {
			x[i] = sol.AtVec(a)
			ok = ok && x[i] >= -1e-12
		}
		if !ok {
			continue
		}
		if f := qpObjective(q, c, x); f < bestObj {
			best, bestObj = x, f
		}
	}
	return best
}

type qpSolveFunc func(*mat.SymDense, []float64, QPOptions) ([]float64, QPResult, error)

var qpSolvers = []struct {
	name    string
	simplex bool
	solve   qpSolveFunc
}{{"simplex", true, SimplexQP}, {"nonneg", false, NonNegQP}}

func qpMustSolve(t *testing.T, solve qpSolveFunc, q *mat.SymDense, c []float64, opt QPOptions) ([]float64, QPResult) {
	t.Helper()
	x, res, err := solve(q, c, opt)
	if err != nil {
		t.Fatalf("solve: %v", err)
	}
	return x, res
}

func TestSimplexQPByHand(t *testing.T) {
	// p = 1: the simplex is the point 1.
	x, res := qpMustSolve(t, SimplexQP, mat.NewSymDense(1, []float64{3}), []float64{-2}, QPOptions{})
	near(t, "1-D x", x[0], 1, 0)
	near(t, "1-D objective", res.Objective, 1.5-2, 1e-15)

	// min x1^2 + 2 x2^2 on x1 + x2 = 1: x = (2/3, 1/3), value 2/3, both
	// gradients 4/3 (interior: Lagrange).
	x, res = qpMustSolve(t, SimplexQP, mat.NewSymDense(2, []float64{2, 0, 0, 4}), []float64{0, 0}, QPOptions{})
	near(t, "interior x1", x[0], 2.0/3, 1e-15)
	near(t, "interior x2", x[1], 1.0/3, 1e-15)
	near(t, "interior objective", res.Objective, 2.0/3, 1e-15)

	// Q = I, c = (0, 3): the line minimum x2 = -1 is infeasible, the
	// optimum is the vertex (1, 0) with multiplier g2 - g1 = 3 - 1 = 2 > 0.
	x, res = qpMustSolve(t, SimplexQP, mat.NewSymDense(2, []float64{1, 0, 0, 1}), []float64{0, 3}, QPOptions{})
	if x[0] != 1 || x[1] != 0 {
		t.Errorf("vertex: x = %v, want exactly (1, 0)", x)
	}
	near(t, "vertex gap", res.Gap, 0, 0)

	// Three variables, the third pushed out: Q = diag(1, 1, 1), c = (0, 0, 1)
	// is the projection of (0, 0, -1): (1/2, 1/2, 0).
	x, _ = qpMustSolve(t, SimplexQP, mat.NewSymDense(3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}), []float64{0, 0, 1}, QPOptions{})
	near(t, "projection x0", x[0], 0.5, 1e-15)
	near(t, "projection x1", x[1], 0.5, 1e-15)
	if x[2] != 0 {
		t.Errorf("projection x2 = %g, want exactly 0", x[2])
	}
}

func TestNonNegQPByHand(t *testing.T) {
	// min x1^2 + x1 x2 + x2^2 - x1 + x2: the free minimum (1, -1) is
	// infeasible; on x2 = 0, 2 x1 = 1 so x = (1/2, 0), value -1/4, and the
	// multiplier of x2 is g2 = x1 + 1 = 3/2 > 0.
	q := mat.NewSymDense(2, []float64{2, 1, 1, 2})
	x, res := qpMustSolve(t, NonNegQP, q, []float64{-1, 1}, QPOptions{})
	near(t, "x1", x[0], 0.5, 1e-15)
	if x[1] != 0 {
		t.Errorf("x2 = %g, want exactly 0", x[1])
	}
	near(t, "objective", res.Objective, -0.25, 1e-15)
	// c >= 0: x = 0.
	x, res = qpMustSolve(t, NonNegQP, q, []float64{1, 2}, QPOptions{})
	if x[0] != 0 || x[1] != 0 || res.Objective != 0 {
		t.Errorf("x = %v, objective %g, want 0", x, res.Objective)
	}
	// Interior: Q x = -c with c = -(3, 3): x = (1, 1).
	x, _ = qpMustSolve(t, NonNegQP, q, []float64{-3, -3}, QPOptions{})
	near(t, "interior x1", x[0], 1, 1e-14)
	near(t, "interior x2", x[1], 1, 1e-14)
}

// projectSimplexBySorting is the sort-based projection (Held, Wolfe &
// Crowder 1974; Duchi et al. 2008): sort descending, rho = the largest j
// with u_j - (sum_{i<=j} u_i - 1)/j > 0, tau = (sum_{i<=rho} u_i - 1)/rho.
func projectSimplexBySorting(v []float64) []float64 {
	u := slices.Clone(v)
	slices.Sort(u)
	slices.Reverse(u)
	sum, tau := 0.0, 0.0
	for j, uj := range u {
		sum += uj
		if t := (sum - 1) / float64(j+1); uj-t > 0 {
			tau = t
		}
	}
	out := make([]float64, len(v))
	for i, vi := range v {
		out[i] = max(vi-tau, 0)
	}
	return out
}

// With Q = I and c = -v the QP is the Euclidean projection of v onto the
// simplex, for every method and for sizes on both sides of qpExactMax.
func TestSimplexQPIdentityIsProjection(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range []int{2, 3, 7, 30, 150} {
		for trial := range 5 {
			v := qpRandomVec(p, 1+float64(trial), r)
			want := projectSimplexBySorting(v)
			got := slices.Clone(v)
			ProjectSimplex(got)
			for i := range want {
				near(t, fmt.Sprintf("ProjectSimplex p=%d [%d]", p, i), got[i], want[i], 1e-14)
			}
			id := mat.NewSymDense(p, nil)
			c := make([]float64, p)
			for i := range p {
				id.SetSym(i, i, 1)
				c[i] = -v[i]
			}
			for _, m := range []QPMethod{QPAuto, QPActiveSet, QPGradient} {
				x, res, err := SimplexQP(id, c, QPOptions{Method: m})
				if err != nil {
					t.Fatalf("p=%d method %d: %v", p, m, err)
				}
				tol := 1e-13
				if m == QPGradient {
					tol = 1e-8
				}
				for i := range want {
					if math.Abs(x[i]-want[i]) > tol {
						t.Fatalf("p=%d method %d: x[%d] = %.15g, projection %.15g (KKT %g)", p, m, i, x[i], want[i], res.KKT)
					}
				}
			}
		}
	}
}

// Random problems with p <= 8 against enumeration of all free sets: full
// rank (unique minimiser) and singular Q (rank 1 and p/2).
func TestQPMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sv := range qpSolvers {
		for p := 2; p <= 8; p++ {
			for _, rank := range []int{p + 2, max(1, p/2), 1} {
				for trial := range 6 {
					q := qpRandomPSD(p, rank, r)
					c := qpRandomVec(p, 1, r)
					if !sv.simplex && rank < p {
						// Keep the orthant problem bounded: c in range(Q) plus
						// a non-negative part.
						var qc mat.VecDense
						qc.MulVec(q, mat.NewVecDense(p, qpRandomVec(p, 1, r)))
						for i := range c {
							c[i] = qc.AtVec(i) + math.Abs(c[i])
						}
					}
					name := fmt.Sprintf("%s p=%d rank=%d #%d", sv.name, p, rank, trial)
					want := qpBruteForce(q, c, sv.simplex)
					x, res, err := sv.solve(q, c, QPOptions{Method: QPActiveSet})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					fw, fx := qpObjective(q, c, want), qpObjective(q, c, x)
					if math.Abs(fx-fw) > 1e-12*(1+math.Abs(fw)) {
						t.Errorf("%s: objective %.15g, brute force %.15g", name, fx, fw)
					}
					near(t, name+" reported objective", res.Objective, fx, 1e-12*(1+math.Abs(fx)))
					if res.KKT > 1e-12 || math.Abs(res.Gap) > 1e-12*(1+math.Abs(fx)) {
						t.Errorf("%s: certificate KKT %g gap %g", name, res.KKT, res.Gap)
					}
					if rank > p { // unique minimiser
						for i := range x {
							if math.Abs(x[i]-want[i]) > 1e-9 {
								t.Errorf("%s: x = %v, brute force %v", name, x, want)
								break
							}
						}
					}
				}
			}
		}
	}
}

// The methods agree on larger random problems, and a warm start from the
// answer ends at once.
func TestQPMethodsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, sv := range qpSolvers {
		for _, p := range []int{20, 120} {
			q := qpRandomPSD(p, p/3, r)
			c := qpRandomVec(p, 1, r)
			if !sv.simplex {
				var qc mat.VecDense
				qc.MulVec(q, mat.NewVecDense(p, qpRandomVec(p, 1, r)))
				for i := range c {
					c[i] = qc.AtVec(i) + 0.1*math.Abs(c[i])
				}
			}
			exact, res, err := sv.solve(q, c, QPOptions{Method: QPActiveSet})
			if err != nil {
				t.Fatalf("%s p=%d active set: %v", sv.name, p, err)
			}
			for _, m := range []QPMethod{QPAuto, QPGradient} {
				_, other, err := sv.solve(q, c, QPOptions{Method: m})
				if err != nil {
					t.Fatalf("%s p=%d method %d: %v", sv.name, p, m, err)
				}
				near(t, fmt.Sprintf("%s p=%d method %d objective", sv.name, p, m), other.Objective, res.Objective, 1e-8*(1+math.Abs(res.Objective)))
			}
			_, warm, err := sv.solve(q, c, QPOptions{Method: QPActiveSet, Start: exact})
			if err != nil {
				t.Fatal(err)
			}
			if warm.Iterations > 2 {
				t.Errorf("%s p=%d: warm start from the optimum took %d iterations", sv.name, p, warm.Iterations)
			}
		}
	}
}

func TestQPDegenerate(t *testing.T) {
	// Ties: two identical variables (columns 0 and 1 equal, same c). Any split
	// of their weight is optimal; the solver keeps the first.
	q := mat.NewSymDense(3, []float64{
		2, 2, 1,
		2, 2, 1,
		1, 1, 3,
	})
	x, res := qpMustSolve(t, SimplexQP, q, []float64{0, 0, 0}, QPOptions{})
	// On x0 + x2 = 1: 2 x0^2 + 2 x0 x2 + 3 x2^2 / 2 ... minimised at
	// d/dx0 [x0^2 + x0 (1-x0) + 1.5 (1-x0)^2] = 2x0 + 1 - 2x0 - 3(1-x0) = 0
	// gives x0 = 2/3, x2 = 1/3.
	if x[1] != 0 {
		t.Errorf("tied variable got weight: x = %v", x)
	}
	near(t, "x0", x[0], 2.0/3, 1e-14)
	near(t, "x2", x[2], 1.0/3, 1e-14)
	near(t, "objective", res.Objective, 0.5*(2*4.0/9+2*2.0/9+3.0/9), 1e-14)

	// Q = 0: a linear program; the simplex minimum is the vertex of least c.
	zero := mat.NewSymDense(4, nil)
	x, _ = qpMustSolve(t, SimplexQP, zero, []float64{3, -1, 2, -1}, QPOptions{})
	if !slices.Equal(x, []float64{0, 1, 0, 0}) {
		t.Errorf("LP on the simplex: x = %v, want e_1", x)
	}
	// Rank one: Q = a a' with a = (1, 2); on the simplex x'Qx = (x1 + 2 x2)^2
	// is least at x = (1, 0) (value 1/2, plus c = 0).
	x, res = qpMustSolve(t, SimplexQP, mat.NewSymDense(2, []float64{1, 2, 2, 4}), []float64{0, 0}, QPOptions{})
	if !slices.Equal(x, []float64{1, 0}) || res.Objective != 0.5 {
		t.Errorf("rank one: x = %v, objective %g", x, res.Objective)
	}
	// Singular with the null direction inside the simplex: Q = 1 1' (constant
	// on the simplex) and c = (1, 0, 2): the linear part decides, x = e_1.
	ones := mat.NewSymDense(3, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1})
	x, _ = qpMustSolve(t, SimplexQP, ones, []float64{1, 0, 2}, QPOptions{})
	if !slices.Equal(x, []float64{0, 1, 0}) {
		t.Errorf("flat quadratic: x = %v, want e_1", x)
	}
	// The orthant with a flat direction that costs nothing: Q = [[1,-1],[-1,1]],
	// c = (-1, 1); g = Qx + c vanishes on x0 - x1 = 1, value -1/2.
	q2 := mat.NewSymDense(2, []float64{1, -1, -1, 1})
	x, res = qpMustSolve(t, NonNegQP, q2, []float64{-1, 1}, QPOptions{})
	near(t, "flat orthant objective", res.Objective, -0.5, 1e-14)
	near(t, "flat orthant x0 - x1", x[0]-x[1], 1, 1e-14)
}

// A PSD Q whose free columns are nearly collinear (recorded from UMKL's
// first mu-step on a sonar split: 2W over the all-feature Gaussians of
// sigma 1/8, 1/4 and 1/2, all but equal to I/n on 60 standardised
// features): the reduced Hessian's true eigenvalues are 0 and ~1e-10, and
// forming it leaves a rounding eigenvalue of about -3e-16, which the PSD
// test once measured against the 1e-10 instead of Q's entries (~1.1) and
// rejected. By exact arithmetic the objective falls along x0 + x1 over the
// whole simplex (derivative -0.0024), so the minimum is at x2 = 0 with
// value a/2 + c0.
func TestSimplexQPNearlyCollinear(t *testing.T) {
	const a, b, c = 1.1427514792899458, 1.1427527901941006, 1.1427541012372826
	q := mat.NewSymDense(3, []float64{a, a, b, a, a, b, b, b, c})
	lin := []float64{-118.84615384615411, -118.84615384615411, -118.84375306224224}
	for _, m := range []QPMethod{QPActiveSet, QPAuto} {
		x, res, err := SimplexQP(q, lin, QPOptions{Method: m, Start: []float64{1, 1, 1}})
		if err != nil {
			t.Fatalf("method %d: %v", m, err)
		}
		near(t, "x0 + x1", x[0]+x[1], 1, 1e-12)
		near(t, "objective", res.Objective, -118.27477810650913, 1e-12)
	}
}

func TestQPErrors(t *testing.T) {
	good := mat.NewSymDense(2, []float64{1, 0, 0, 1})
	nan := mat.NewSymDense(2, []float64{1, math.NaN(), math.NaN(), 1})
	indefinite := mat.NewSymDense(3, []float64{1, 0, 0, 0, -1, 0, 0, 0, 1})
	for _, sv := range qpSolvers {
		for name, tc := range map[string]struct {
			q   *mat.SymDense
			c   []float64
			opt QPOptions
		}{
			"nil Q":          {nil, []float64{1}, QPOptions{}},
			"empty":          {&mat.SymDense{}, nil, QPOptions{}},
			"NaN in Q":       {nan, []float64{0, 0}, QPOptions{}},
			"Inf in c":       {good, []float64{0, math.Inf(-1)}, QPOptions{}},
			"size mismatch":  {good, []float64{0, 0, 0}, QPOptions{}},
			"start mismatch": {good, []float64{0, 0}, QPOptions{Start: []float64{1}}},
			"NaN start":      {good, []float64{0, 0}, QPOptions{Start: []float64{math.NaN(), 1}}},
			"unknown method": {good, []float64{0, 0}, QPOptions{Method: QPGradient + 1}},
			"not PSD":        {indefinite, []float64{0, -1, 0}, QPOptions{Start: []float64{1, 1, 1}}},
		} {
			if _, _, err := sv.solve(tc.q, tc.c, tc.opt); !errors.Is(err, ErrInput) {
				t.Errorf("%s %s: got %v, want ErrInput", sv.name, name, err)
			}
		}
	}
	// Unbounded on the orthant: along (1, 1), Q d = 0 and c'd = -2.
	_, _, err := NonNegQP(mat.NewSymDense(2, []float64{1, -1, -1, 1}), []float64{-1, -1}, QPOptions{})
	if !errors.Is(err, ErrQPUnbounded) {
		t.Errorf("unbounded: got %v", err)
	}
	_, _, err = NonNegQP(mat.NewSymDense(2, nil), []float64{1, -1}, QPOptions{})
	if !errors.Is(err, ErrQPUnbounded) {
		t.Errorf("unbounded LP: got %v", err)
	}
	// An iteration cap too small to finish.
	r := rand.New(rand.NewPCG(7, 8))
	q := qpRandomPSD(10, 12, r)
	c := qpRandomVec(10, 1, r)
	for _, m := range []QPMethod{QPActiveSet, QPGradient} {
		x, res, err := SimplexQP(q, c, QPOptions{Method: m, MaxIter: 1})
		if !errors.Is(err, ErrQPNotConverged) || len(x) != 10 || res.KKT <= 1e-9 {
			t.Errorf("method %d with MaxIter 1: err %v, KKT %g", m, err, res.KKT)
		}
	}
}
