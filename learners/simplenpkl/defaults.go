package simplenpkl

import (
	"errors"
	"math"
	"slices"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/kit/npkl"
	"gonum.org/v1/gonum/mat"
)

// The automatic C and B (parameters C = 0 and B = 0, the defaults); see
// the package doc, "Defaults", for the measurements behind them.
const (
	// AutoCScale is c0 in C = c0 / lambda_max(T).
	AutoCScale = 1.0
	// AutoMetFraction is the fraction of the constraints that the
	// linear-loss kernel (Protocol 1's first iterate) meets, T_ij K_ij >= 1,
	// at the automatic budget B.
	AutoMetFraction = 0.75
)

// AutoC returns C = AutoCScale / lambda_max(T) for the signed constraint
// matrix T over n points (T_ij = T_ji = t_e for pair e = (i, j)). For every
// unit vector v, v^T (C T - L) v <= C lambda_max(T) - v^T L v = 1 - v^T L v,
// so at alpha = C (the linear loss, and Protocol 1's first iterate) A has
// positive eigenvalues only along directions smoother on the kNN graph than
// its average (tr L / n = 1 for the normalised Laplacian of a graph without
// isolated points): the pairs reshape the smooth part of the spectrum, and
// cannot alone create eigenvectors that ignore the graph, as a larger C does
// (one pair (i, j) that is not an edge gives A an eigenvalue of about
// C - 1; a point in l pairs, C sqrt(l) - 1). The thesis' fixed C in (0, 1]
// does not adapt to how many pairs meet at a point; lambda_max(T) does
// (sqrt(l) <= lambda_max(T) <= l for the most constrained point's l). It
// is at least 1 for any non-empty T, so C <= AutoCScale.
func AutoC(n int, pairs []learners.Pair, t []float64, seed uint64) (float64, error) {
	lm, err := constraintTop(n, pairs, t, seed)
	if err != nil {
		return 0, err
	}
	if !(lm > 0) {
		return 0, errors.New("simplenpkl: automatic C needs at least one constrained pair")
	}
	return AutoCScale / lm, nil
}

// constraintTop returns lambda_max(T) over the constrained points only (T
// is zero elsewhere): dense up to 300 of them, Lanczos above (the dense
// solver if Lanczos does not converge).
func constraintTop(n int, pairs []learners.Pair, t []float64, seed uint64) (float64, error) {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = -1
	}
	m := 0
	for _, p := range pairs {
		for _, i := range []int{p.I, p.J} {
			if idx[i] < 0 {
				idx[i] = m
				m++
			}
		}
	}
	if m == 0 {
		return 0, nil
	}
	op := &signedGraph{m: m, idx: idx, pairs: pairs, t: t}
	if m > 300 {
		vals, _, err := kernelmath.TopK(op, 1, kernelmath.Largest, kernelmath.LanczosOptions{Seed: seed})
		if err == nil {
			return vals[0], nil
		}
		if !errors.Is(err, learners.ErrNotConverged) {
			return 0, err
		}
	}
	dense := mat.NewSymDense(m, nil)
	for e, p := range pairs {
		dense.SetSym(idx[p.I], idx[p.J], t[e])
	}
	var es mat.EigenSym
	if !es.Factorize(dense, false) {
		return 0, errors.New("simplenpkl: eigen-decomposition of the constraint matrix failed")
	}
	vals := es.Values(nil)
	return slices.Max(vals), nil
}

// signedGraph is T restricted to the constrained points, as an operator.
type signedGraph struct {
	m     int
	idx   []int
	pairs []learners.Pair
	t     []float64
}

var _ kernelmath.Operator = (*signedGraph)(nil)

func (g *signedGraph) Dim() int { return g.m }

func (g *signedGraph) Apply(dst, x []float64) {
	for i := range dst {
		dst[i] = 0
	}
	for e, p := range g.pairs {
		i, j := g.idx[p.I], g.idx[p.J]
		dst[i] += g.t[e] * x[j]
		dst[j] += g.t[e] * x[i]
	}
}

// AutoB returns the budget B at which a kernel whose pair margins are
// margins at B = 1 meets the fraction AutoMetFraction of the pairs: the
// closed form (Prop. 3.25) scales K by B^(1/p), so B = m^(-p) for m the
// ceil(frac x pairs)-th largest margin T_ij K_ij. If that margin is not
// positive (fewer than that fraction of the pairs have the sign of their
// constraint) the largest one is used, and if none is positive, B = 1 (the
// thesis' value; no budget meets a pair then).
func AutoB(margins []float64, p float64) float64 {
	if len(margins) == 0 {
		return 1
	}
	s := slices.Clone(margins)
	slices.Sort(s)
	slices.Reverse(s)
	r := max(1, int(math.Ceil(AutoMetFraction*float64(len(s)))))
	m := s[r-1]
	if !(m > 0) {
		m = s[0]
	}
	if !(m > 0) {
		return 1
	}
	return math.Pow(m, -p)
}

// margins writes T_e K_ij for every pair of a factor (f holds 2 K_ij).
func margins(k npkl.Factor, pairs []learners.Pair, t []float64) []float64 {
	f := make([]float64, len(pairs))
	k.PairValues(f, pairs, npkl.Entry)
	for e := range f {
		f[e] *= t[e] / 2
	}
	return f
}

// AutoCapacity returns the automatic capacity regulariser for a kernel
// K1 (at B = 1, with optimal value h1 = tr(A K1)) whose pair margins are
// margins: the penalty (G/p) tr K^p of the G-form (3.20) with the G that
// gives the same kernel as the bound B = AutoB(margins, p) (spec 3.2: G =
// (tr A_+^q / B)^((p-1)/p) = h1 B^(1/p) / B), and B = 0; for p = 1, which
// has no G-form, the bound B itself and G = 0. The penalty rather than the
// bound because a bound that the loss's optimum does not spend leaves
// Protocol 1 without a positive eigenvalue to follow near the optimum:
// there it stops at its cap short of the gap, while the G-form's kernel A_+^(1/(p-1)) / G^(1/(p-1)) is
// unique for every multiplier.
func AutoCapacity(margins []float64, h1, p float64) (b, g float64) {
	b = AutoB(margins, p)
	if p == 1 || !(h1 > 0) {
		return b, 0
	}
	return 0, h1 * math.Pow(b, 1/p) / b
}
