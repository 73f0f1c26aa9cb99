package mklr

import (
	"fmt"
	"math"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
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
	// PairTensor (the default) is the symmetric tensor-product pair kernel
	// K_u(i1,j1) K_u(i2,j2) + K_u(i1,j2) K_u(i2,j1): a learned bilinear
	// similarity.
	PairTensor PairKernel = iota
	// PairSquared is D^2: symmetric in the order of a pair, per-user rankings.
	PairSquared
	// PairDifference is D itself, the thesis' kernel as written.
	PairDifference
)

func (k PairKernel) String() string {
	switch k {
	case PairSquared:
		return "squared"
	case PairDifference:
		return "difference"
	case PairTensor:
		return "tensor"
	}
	return fmt.Sprintf("PairKernel(%d)", int(k))
}

// value is the pair kernel between the pair q and the pair s = (s1, s2)
// whose user-kernel rows are a = K_u(., s1) and b = K_u(., s2).
func (k PairKernel) value(a, b []float64, q learners.Pair) float64 {
	switch k {
	case PairTensor:
		return a[q.I]*b[q.J] + b[q.I]*a[q.J]
	case PairDifference:
		return a[q.I] - b[q.I] - a[q.J] + b[q.J]
	}
	d := a[q.I] - b[q.I] - a[q.J] + b[q.J]
	return d * d
}

// values sets dst[a] to the pair kernel between the pair (i, j) and
// candidate pair a, from ri and rj, the user-kernel rows of users i and j
// over the candidates, interleaved: r[2a] = K_u(u, a1), r[2a+1] = K_u(u, a2).
// It is value for every candidate at once.
func (k PairKernel) values(dst, ri, rj []float64) {
	switch k {
	case PairTensor:
		for a := range dst {
			dst[a] = ri[2*a]*rj[2*a+1] + ri[2*a+1]*rj[2*a]
		}
	case PairDifference:
		for a := range dst {
			dst[a] = ri[2*a] - ri[2*a+1] - rj[2*a] + rj[2*a+1]
		}
	default:
		for a := range dst {
			e := ri[2*a] - ri[2*a+1] - rj[2*a] + rj[2*a+1]
			dst[a] = e * e
		}
	}
}

// Model is a trained social-strength model: the score
//
//	f(i, j) = b + gamma K_u(i, j) + sum_t gamma_t K^t(i, j) + sum_{s in S} alpha_s P((i, j), s)
//
// of a pair of users and the strength sigmoid(f). For each user u and
// import s = (s1, s2) it keeps e_s(u) = K_u(u, s1) - K_u(u, s2)
// (PairSquared, PairDifference: n x |S| floats) or K_u(u, s1) and
// K_u(u, s2) (PairTensor: n x 2|S|), and the kernels of the terms it was
// trained with (Options.KernelTerm, Options.Base). It is safe for
// concurrent use (as the kernels are). User indices must be in [0, N()).
type Model struct {
	pair    PairKernel
	imports []learners.Pair
	alpha   []float64
	bias    float64
	// kernelTerm says whether gamma K_u is a term (Options.KernelTerm).
	kernelTerm bool
	gamma      float64
	baseW      []float64
	// terms is gamma K_u + sum_t gamma_t K^t, nil without kernel terms.
	terms kernelmath.KernelMatrix
	// feat is n x |S| with feat(u, s) = e_s(u), or for PairTensor n x 2|S|
	// with feat(u, 2s) = K_u(u, s1) and feat(u, 2s+1) = K_u(u, s2).
	feat *mat.Dense
	// quad is, for PairSquared, sum_s alpha_s e_s(u)^2, and for
	// PairDifference sum_s alpha_s e_s(u): the per-user part of the sum
	// (zero for PairTensor, which has none).
	quad []float64
	// featSum and quadSum are feat's column sums and quad's sum over every
	// user: ImportSum's O(|S|) sum over j.
	featSum []float64
	quadSum float64
	n       int
	stats   Stats
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
	// Newton counts the Newton steps over all refits, Hessians the
	// Hessians formed; Dependent the candidates dropped as lying in the
	// span of the import set.
	Newton, Hessians, Dependent int
}

// setFeatures stores the imports' user-kernel rows in serving form; rows[s]
// holds K_u(., s1) and K_u(., s2).
func (m *Model) setFeatures(n int, rows [][2][]float64) {
	m.n = n
	m.quad = make([]float64, n)
	if len(rows) == 0 {
		return
	}
	defer m.sumFeatures()
	if m.pair == PairTensor {
		m.feat = mat.NewDense(n, 2*len(rows), nil)
		for s, r := range rows {
			m.feat.SetCol(2*s, r[0])
			m.feat.SetCol(2*s+1, r[1])
		}
		return
	}
	m.feat = mat.NewDense(n, len(rows), nil)
	for s, r := range rows {
		e := make([]float64, n)
		floats.SubTo(e, r[0], r[1])
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

// BaseWeights returns the coefficients gamma_t of the base kernels of
// Options.Base, in their order (nil without them).
func (m *Model) BaseWeights() []float64 { return m.baseW }

// Stats returns the training statistics.
func (m *Model) Stats() Stats { return m.stats }

var _ learners.PairScorer = (*Model)(nil)

// Score returns f(i, j). O(|S|) plus one entry of each kernel term.
func (m *Model) Score(i, j int) float64 {
	f := m.bias
	if m.terms != nil {
		f += m.terms.At(i, j)
	}
	return f + m.ImportPart(i, j)
}

// Strength returns P(z = 1 | i, j) = sigmoid(f(i, j)), the social strength.
func (m *Model) Strength(i, j int) float64 { return sigmoid(m.Score(i, j)) }

// ScoreAll sets dst[j] = f(i, j) for every user j (dst needs length N();
// the entry j = i is f(i, i)). It costs one n x |S| (PairTensor: n x 2|S|)
// matrix-vector product, using for the sum over S
// q_i + q_j - 2 sum_s alpha_s e_s(i) e_s(j) (PairSquared), q_i - q_j
// (PairDifference) or sum_s alpha_s (K_u(i, s1) K_u(j, s2) +
// K_u(i, s2) K_u(j, s1)) (PairTensor), plus one row of each kernel term.
func (m *Model) ScoreAll(i int, dst []float64) {
	dst = dst[:m.n]
	if m.terms != nil {
		m.terms.Row(i, dst)
	} else {
		clear(dst)
	}
	var ri []float64
	if m.feat != nil {
		ri = m.feat.RawRowView(i)
	}
	m.addPairs(ri, m.bias+m.quad[i], dst)
}

// addPairs adds to dst (one entry a user) c and the import pairs' sum
// between every user and a point with feature row fx (nil without
// imports) and per-point part of the sum included in c.
func (m *Model) addPairs(fx []float64, c float64, dst []float64) {
	floats.AddConst(c, dst)
	switch {
	case m.pair == PairDifference:
		floats.Sub(dst, m.quad)
		return
	case m.pair == PairSquared:
		floats.Add(dst, m.quad)
	}
	if m.feat == nil {
		return
	}
	x := make([]float64, len(fx))
	for s, a := range m.alpha {
		if m.pair == PairTensor {
			x[2*s], x[2*s+1] = a*fx[2*s+1], a*fx[2*s]
		} else {
			x[s] = -2 * a * fx[s]
		}
	}
	blas64.Gemv(blas.NoTrans, 1, m.feat.RawMatrix(), blas64.Vector{N: len(x), Inc: 1, Data: x}, 1, blas64.Vector{N: m.n, Inc: 1, Data: dst})
}

// StrengthAll sets dst[j] = sigmoid(f(i, j)), the strengths of i to every
// user (ScoreAll's order): what a sum over users, such as the group score
// s(g, i) = sum_{j in g} of section 7.4.3, should add up. A sum of the
// scores f themselves would add the intercept once a member, which ranks
// groups by size (b < 0: the smallest first).
func (m *Model) StrengthAll(i int, dst []float64) {
	dst = dst[:m.n]
	m.ScoreAll(i, dst)
	for j, f := range dst {
		dst[j] = sigmoid(f)
	}
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}
