package mklr

import (
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// PairKernel selects the kernel on user pairs built from the user-kernel
// expression D of section 7.4.1 (see the package doc).
type PairKernel int

// The pair kernels.
const (
	// PairSquared is D^2: symmetric in the order of a pair, per-user rankings.
	PairSquared PairKernel = iota
	// PairDifference is D itself, the thesis' kernel as written.
	PairDifference
)

func (k PairKernel) String() string {
	switch k {
	case PairSquared:
		return "squared"
	case PairDifference:
		return "difference"
	}
	return fmt.Sprintf("PairKernel(%d)", int(k))
}

// of maps the difference d = e_s(i1) - e_s(i2), where
// e_s(u) = K_u(u, s1) - K_u(u, s2), to the pair kernel: D((i1,i2), s) = d.
func (k PairKernel) of(d float64) float64 {
	if k == PairDifference {
		return d
	}
	return d * d
}

// Model is a trained social-strength model: the score
//
//	f(i, j) = b + gamma K_u(i, j) + sum_{s in S} alpha_s P((i, j), s)
//
// of a pair of users and the strength sigmoid(f). It keeps, for each user u
// and import s = (s1, s2), e_s(u) = K_u(u, s1) - K_u(u, s2) (n x |S|
// floats), and, when trained with Options.KernelTerm, the kernel K_u for
// the term gamma K_u(i, j). It is safe for concurrent use (as K_u is).
// User indices must be in [0, N()).
type Model struct {
	pair    PairKernel
	imports []learners.Pair
	alpha   []float64
	bias    float64
	gamma   float64
	k       learners.KernelMatrix // nil without the kernel term
	// feat is n x |S|: feat(u, s) = e_s(u).
	feat *mat.Dense
	// quad is, for PairSquared, sum_s alpha_s e_s(u)^2, and for
	// PairDifference sum_s alpha_s e_s(u): the per-user part of the sum.
	quad  []float64
	n     int
	stats Stats
}

// Stats reports how training went.
type Stats struct {
	Pairs, Positives int // training pairs, of which positive
	// Loss is the regularised objective L at the end; Losses[r] is L after
	// round r (Losses[0]: the fixed features alone), non-increasing.
	Loss   float64
	Losses []float64
	// Stop says why the import set stopped growing: "tol" (a round lowered
	// L by less than Options.Tol relative), "cap" (Options.MaxImport),
	// "exhausted" (no candidate left), or "" (a refit did not converge).
	Stop string
	// Newton counts the Newton steps over all refits; Dependent the
	// candidates dropped as lying in the span of the import set.
	Newton, Dependent int
}

// setFeatures stores the user differences of the imports (one n-vector each).
func (m *Model) setFeatures(n int, feats [][]float64) {
	m.n = n
	m.quad = make([]float64, n)
	if len(feats) == 0 {
		return
	}
	m.feat = mat.NewDense(n, len(feats), nil)
	for s, e := range feats {
		m.feat.SetCol(s, e)
	}
	for u := range m.quad {
		row := m.feat.RawRowView(u)
		for s, a := range m.alpha {
			if m.pair == PairSquared {
				m.quad[u] += a * row[s] * row[s]
			} else {
				m.quad[u] += a * row[s]
			}
		}
	}
}

// N returns the number of users the model scores.
func (m *Model) N() int { return m.n }

// Pair returns the pair kernel the model was trained with.
func (m *Model) Pair() PairKernel { return m.pair }

// Imports returns the import set S (training pairs), in the order imported.
func (m *Model) Imports() []learners.Pair { return m.imports }

// Alpha returns the coefficients of the imports.
func (m *Model) Alpha() []float64 { return m.alpha }

// Bias returns the intercept b (0 with Options.NoIntercept).
func (m *Model) Bias() float64 { return m.bias }

// Gamma returns the coefficient of K_u(i, j) (0 without Options.KernelTerm).
func (m *Model) Gamma() float64 { return m.gamma }

// Stats returns the training statistics.
func (m *Model) Stats() Stats { return m.stats }

// Score returns f(i, j). O(|S|) plus one kernel entry.
func (m *Model) Score(i, j int) float64 {
	f := m.bias
	if m.k != nil {
		f += m.gamma * m.k.At(i, j)
	}
	if m.feat == nil {
		return f
	}
	ri, rj := m.feat.RawRowView(i), m.feat.RawRowView(j)
	for s, a := range m.alpha {
		f += a * m.pair.of(ri[s]-rj[s])
	}
	return f
}

// Strength returns P(z = 1 | i, j) = sigmoid(f(i, j)), the social strength.
func (m *Model) Strength(i, j int) float64 { return sigmoid(m.Score(i, j)) }

// ScoreAll sets dst[j] = f(i, j) for every user j (dst needs length N();
// the entry j = i is f(i, i)). It costs one n x |S| matrix-vector product,
// using for the sum over S q_i + q_j - 2 sum_s alpha_s e_s(i) e_s(j)
// (PairSquared) or q_i - q_j (PairDifference), plus one row of K_u with
// the kernel term.
func (m *Model) ScoreAll(i int, dst []float64) {
	dst = dst[:m.n]
	if m.k != nil {
		m.k.Row(i, dst)
		floats.Scale(m.gamma, dst)
	} else {
		clear(dst)
	}
	if m.pair == PairDifference {
		floats.AddConst(m.bias+m.quad[i], dst)
		floats.Sub(dst, m.quad)
		return
	}
	floats.AddConst(m.bias+m.quad[i], dst)
	floats.Add(dst, m.quad)
	if m.feat == nil {
		return
	}
	ri := m.feat.RawRowView(i)
	x := make([]float64, len(ri))
	for s, a := range m.alpha {
		x[s] = -2 * a * ri[s]
	}
	blas64.Gemv(blas.NoTrans, 1, m.feat.RawMatrix(), blas64.Vector{N: len(x), Inc: 1, Data: x}, 1, blas64.Vector{N: m.n, Inc: 1, Data: dst})
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// softplus returns ln(1 + e^z) without overflow.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}
