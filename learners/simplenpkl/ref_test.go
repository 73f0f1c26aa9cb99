package simplenpkl

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// This file holds reference computations for the tests, written
// independently of the package: dense matrices, sorting for the kNN graph
// and gonum's full EigenSym.

func newLearner(t testing.TB, params string) *Learner {
	t.Helper()
	l, _, err := learners.New(Name, json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	return l.(*learners.Resolved).Plugin().(*Learner)
}

// randomInput returns n random points in d dimensions (linear base kernel)
// with nPairs random pairs labelled by the sign of the first coordinate
// product (must-link when the points are on the same side).
func randomInput(n, d, nPairs int, seed uint64) (*learners.Input, *mat.Dense) {
	r := rand.New(rand.NewPCG(seed, 99))
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, r.NormFloat64())
		}
		if i%2 == 0 {
			x.Set(i, 0, x.At(i, 0)+2)
		}
	}
	in := &learners.Input{Kernels: []*mat.SymDense{kernelmath.Linear(x)}, Features: x}
	addRandomPairs(in, n, nPairs, r, func(i, j int) bool { return (i%2 == 0) == (j%2 == 0) })
	return in, x
}

// addRandomPairs adds nPairs distinct random pairs of the n points to in:
// must-links where same says so, cannot-links elsewhere.
func addRandomPairs(in *learners.Input, n, nPairs int, r *rand.Rand, same func(i, j int) bool) {
	seen := map[learners.Pair]bool{}
	for len(seen) < nPairs {
		i, j := r.IntN(n), r.IntN(n)
		p := learners.Pair{I: min(i, j), J: max(i, j)}
		if i == j || seen[p] {
			continue
		}
		seen[p] = true
		if same(i, j) {
			in.MustLink = append(in.MustLink, p)
		} else {
			in.CannotLink = append(in.CannotLink, p)
		}
	}
}

// refProblem is SimpleNPKL's problem in dense form.
type refProblem struct {
	l       *mat.SymDense
	pairs   []learners.Pair
	t       []float64
	c, b, p float64
	loss    Loss
}

// newRefProblem builds the dense problem of cfg over the rows of x (the
// features, z-scored for graph_input=standardized) and the pairs of in, with
// C = 1/lambda_max(T) from a full eigen-decomposition when cfg.C is 0 (the
// automatic B is left to the tests that need it).
func newRefProblem(in *learners.Input, x *mat.Dense, cfg Config) *refProblem {
	pairs, t, err := Constraints(in.MustLink, in.CannotLink)
	if err != nil {
		panic(err)
	}
	if cfg.GraphInput == "standardized" {
		x = refZScore(x)
	}
	c := cfg.C
	if c == 0 {
		c = 1 / refTopT(x.RawMatrix().Rows, pairs, t)
	}
	return &refProblem{l: learnertest.RefLaplacian(x, cfg.K, cfg.Mutual), pairs: pairs, t: t, c: c, b: cfg.B, p: cfg.P, loss: cfg.Loss}
}

// refZScore returns x with every column shifted to mean 0 and scaled to
// sample standard deviation 1 (gonum's stat.MeanStdDev).
func refZScore(x *mat.Dense) *mat.Dense {
	n, d := x.Dims()
	z := mat.NewDense(n, d, nil)
	for f := 0; f < d; f++ {
		col := mat.Col(nil, f, x)
		mean, std := stat.MeanStdDev(col, nil)
		for i, v := range col {
			if std > 0 {
				z.Set(i, f, (v-mean)/std)
			}
		}
	}
	return z
}

// refTopT returns the largest eigenvalue of the n x n signed constraint
// matrix T (T_ij = T_ji = t_e), by gonum's full EigenSym.
func refTopT(n int, pairs []learners.Pair, t []float64) float64 {
	tm := mat.NewSymDense(n, nil)
	for e, p := range pairs {
		tm.SetSym(p.I, p.J, t[e])
	}
	var es mat.EigenSym
	if !es.Factorize(tm, false) {
		panic("eigen")
	}
	v := es.Values(nil)
	return v[n-1]
}

// primal is tr(L K) + C sum over ordered pairs of loss(T_ij K_ij).
func (r *refProblem) primal(k *mat.SymDense) float64 {
	n := k.SymmetricDim()
	obj := 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			obj += r.l.At(i, j) * k.At(i, j)
		}
	}
	for e, pr := range r.pairs {
		f := r.t[e] * k.At(pr.I, pr.J)
		var l float64
		switch r.loss {
		case LinearLoss:
			l = -f
		case SquareHingeLoss:
			l = math.Pow(math.Max(0, 1-f), 2) / 2
		case SquareLoss:
			l = (1 - f) * (1 - f) / 2
		case HingeLoss:
			l = math.Max(0, 1-f)
		}
		obj += 2 * r.c * l // (i, j) and (j, i)
	}
	return obj
}

// dual is J(alpha) with A = sum alpha_e T_e (E_ij + E_ji) - L and
// h(A) = B^(1/p) ||sigma_+||_q from a full eigen-decomposition.
func (r *refProblem) dual(alpha []float64) float64 {
	n := r.l.SymmetricDim()
	a := mat.NewSymDense(n, nil)
	a.ScaleSym(-1, r.l)
	for e, pr := range r.pairs {
		a.SetSym(pr.I, pr.J, a.At(pr.I, pr.J)+alpha[e]*r.t[e])
	}
	var es mat.EigenSym
	if !es.Factorize(a, false) {
		panic("eigen")
	}
	q := r.p / (r.p - 1)
	s := 0.0
	for _, v := range es.Values(nil) {
		if v > 0 {
			s += math.Pow(v, q)
		}
	}
	j := -math.Pow(r.b, 1/r.p) * math.Pow(s, 1/q)
	for _, al := range alpha {
		j += 2 * al
		if r.loss != HingeLoss {
			j -= al * al / r.c
		}
	}
	return j
}

// projectSchatten projects a symmetric matrix onto {K PSD, tr K^p <= B}
// for p = 2 or 3: eigenvalue clipping, then the eigenvalues onto the p-norm
// ball by bisection on the multiplier gamma of lambda + gamma p lambda^(p-1) = z.
func projectSchatten(z *mat.SymDense, b, p float64) *mat.SymDense {
	var es mat.EigenSym
	if !es.Factorize(z, true) {
		panic("eigen")
	}
	vals := es.Values(nil)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	lam := func(zi, g float64) float64 {
		if zi <= 0 {
			return 0
		}
		if g == 0 {
			return zi
		}
		if p == 2 {
			return zi / (1 + 2*g)
		}
		return (-1 + math.Sqrt(1+12*g*zi)) / (6 * g) // p = 3
	}
	norm := func(g float64) float64 {
		s := 0.0
		for _, v := range vals {
			s += math.Pow(lam(v, g), p)
		}
		return s
	}
	g := 0.0
	if norm(0) > b {
		lo, hi := 0.0, 1.0
		for norm(hi) > b {
			hi *= 2
		}
		for it := 0; it < 200; it++ {
			mid := (lo + hi) / 2
			if norm(mid) > b {
				lo = mid
			} else {
				hi = mid
			}
		}
		g = hi
	}
	n := z.SymmetricDim()
	out := mat.NewSymDense(n, nil)
	for c, v := range vals {
		l := lam(v, g)
		if l == 0 {
			continue
		}
		col := mat.NewVecDense(n, mat.Col(nil, c, &vecs))
		out.SymRankOne(out, l, col)
	}
	return out
}

// pgdLinear minimises tr(M K) over {K PSD, tr K^p <= B} by projected
// gradient descent with a constant step, to a relative change of 1e-14.
func pgdLinear(m *mat.SymDense, b, p float64) *mat.SymDense {
	n := m.SymmetricDim()
	fro := math.Sqrt(kernelmath.Frobenius(m, m))
	eta := 0.5 * math.Pow(b, 1/p) / fro
	k := mat.NewSymDense(n, nil)
	prev := math.Inf(1)
	for it := 0; it < 20000; it++ {
		z := mat.NewSymDense(n, nil)
		z.AddSym(k, scaled(m, -eta))
		k = projectSchatten(z, b, p)
		obj := kernelmath.Frobenius(m, k)
		if math.Abs(prev-obj) <= 1e-14*math.Abs(obj) {
			break
		}
		prev = obj
	}
	return k
}

func scaled(a *mat.SymDense, s float64) *mat.SymDense {
	out := mat.NewSymDense(a.SymmetricDim(), nil)
	out.ScaleSym(s, a)
	return out
}

func traceP(k *mat.SymDense, p float64) float64 {
	var es mat.EigenSym
	es.Factorize(k, false)
	s := 0.0
	for _, v := range es.Values(nil) {
		s += math.Pow(math.Max(v, 0), p)
	}
	return s
}

// checkPSD fails unless k (symmetric by type) is PSD
// to rounding.
func checkPSD(t *testing.T, k *mat.SymDense) {
	t.Helper()
	var es mat.EigenSym
	if !es.Factorize(k, false) {
		t.Fatal("eigen")
	}
	vals := es.Values(nil)
	top := math.Max(math.Abs(vals[0]), math.Abs(vals[len(vals)-1]))
	if vals[0] < -1e-10*math.Max(top, 1e-300) {
		t.Fatalf("kernel not PSD: smallest eigenvalue %g (largest %g)", vals[0], top)
	}
}
