package mklr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

// configs are the model variants the golden tests run over, with base
// kernel terms (Options.Base) from base.
func configs(base []kernelmath.KernelMatrix) []Options {
	return []Options{
		{Pair: PairSquared},
		{Pair: PairSquared, KernelTerm: true},
		{Pair: PairDifference, NoIntercept: true}, // (7.3) as written
		{Pair: PairDifference, KernelTerm: true},
		{Pair: PairTensor},
		{Pair: PairTensor, KernelTerm: true},
		{Pair: PairTensor, Base: base},
		{Pair: PairSquared, NoIntercept: true, Base: base},
	}
}

func name(o Options) string {
	return fmt.Sprintf("%v/intercept=%v/kernelterm=%v/base=%d", o.Pair, !o.NoIntercept, o.KernelTerm, len(o.Base))
}

// run trains and returns the trainer, for white-box checks.
func run(t *testing.T, k kernelmath.KernelMatrix, pos, neg []learners.Pair, o Options) (*trainer, *Model) {
	t.Helper()
	tr, err := newTrainer(context.Background(), k, pos, neg, o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tr.run()
	if err != nil {
		t.Fatal(err)
	}
	return tr, m
}

// explicitScore is f(i, j) from the feature map, independently of the
// package's user differences.
func (c *community) explicitScore(m *Model, i, j int) float64 {
	f := m.Bias() + m.Gamma()*mat.Dot(c.phi.RowView(i), c.phi.RowView(j))
	for b, w := range m.BaseWeights() {
		f += w * c.baseAt(b, i, j)
	}
	for s, imp := range m.Imports() {
		f += m.Alpha()[s] * c.featurePair(m.Pair(), learners.Pair{I: i, J: j}, imp)
	}
	return f
}

// The pair kernel the trainer uses (its columns over the training pairs and
// its matrix over the imports) and the model's scores equal the kernel of
// the feature differences phi(i1) - phi(i2) (squared for PairSquared) from
// an explicit feature map; ScoreAll agrees with Score.
func TestPairKernelIdentity(t *testing.T) {
	c := newCommunity(t, 30, 3, 10, 2)
	for _, o := range configs(c.base) {
		t.Run(name(o), func(t *testing.T) {
			o.MaxImport, o.Tol = 8, -1
			tr, m := run(t, c.k, c.pos, c.neg, o)
			if len(m.Imports()) != 8 {
				t.Fatalf("%d imports, want 8", len(m.Imports()))
			}
			nPairs := len(tr.pairs)
			for s, imp := range m.Imports() {
				for i, p := range tr.pairs {
					near(t, "P(pair, import)", tr.kt[s*nPairs+i], c.featurePair(o.Pair, p, imp), 1e-12)
				}
				for s2, imp2 := range m.Imports() {
					near(t, "P over the imports", tr.kss[s*tr.capS+s2], c.featurePair(o.Pair, imp, imp2), 1e-12)
				}
			}
			dst, strength := make([]float64, 30), make([]float64, 30)
			for i := 0; i < 30; i += 7 {
				m.ScoreAll(i, dst)
				m.StrengthAll(i, strength)
				for j := 0; j < 30; j++ {
					want := c.explicitScore(m, i, j)
					near(t, "Score", m.Score(i, j), want, 1e-10)
					near(t, "ScoreAll", dst[j], want, 1e-10)
					near(t, "Strength", m.Strength(i, j), 1/(1+math.Exp(-want)), 1e-12)
					near(t, "StrengthAll", strength[j], 1/(1+math.Exp(-want)), 1e-12)
				}
			}
		})
	}
}

// objective is L(theta) computed from the feature map: the test's own
// implementation of (7.3) with the fixed features.
func (c *community) objective(o Options, pairs []learners.Pair, y []float64, imports []learners.Pair, theta []float64) float64 {
	m := len(imports)
	loss := 0.0
	for t, p := range pairs {
		f := 0.0
		for s, imp := range imports {
			f += theta[s] * c.featurePair(o.Pair, p, imp)
		}
		j := m
		if !o.NoIntercept {
			f += theta[j]
			j++
		}
		if o.KernelTerm {
			f += theta[j] * mat.Dot(c.phi.RowView(p.I), c.phi.RowView(p.J))
			j++
		}
		for b := range o.Base {
			f += theta[j+b] * c.baseAt(b, p.I, p.J)
		}
		loss += math.Log1p(math.Exp(-y[t] * f))
	}
	reg := 0.0
	for s, a := range imports {
		for s2, b := range imports {
			reg += theta[s] * theta[s2] * c.featurePair(o.Pair, a, b)
		}
	}
	return loss/float64(len(pairs)) + o.C/2*reg
}

// setTheta moves the trainer to theta, with the scores from the feature map.
func (c *community) setTheta(t *testing.T, tr *trainer, imports []learners.Pair, theta []float64) {
	copy(tr.theta, theta)
	m := len(imports)
	for q, p := range tr.pairs {
		f := 0.0
		for s, imp := range imports {
			f += theta[s] * c.featurePair(tr.opts.Pair, p, imp)
		}
		for j, fj := range tr.fixed {
			f += theta[m+j] * fj[q]
		}
		tr.f[q] = f
	}
	if err := tr.gradient(); err != nil {
		t.Fatal(err)
	}
}

// The gradient against central differences of the test's own objective, and
// the Hessian against central differences of the gradient, at a random
// point with a few imports.
func TestGradientHessianFiniteDifferences(t *testing.T) {
	c := newCommunity(t, 24, 3, 10, 4)
	r := rand.New(rand.NewPCG(1, 2))
	for _, o := range configs(c.base) {
		t.Run(name(o), func(t *testing.T) {
			o.MaxImport, o.Tol, o.C = 5, -1, 0.05
			tr, m := run(t, c.k, c.pos, c.neg, o)
			d := tr.dim()
			theta := make([]float64, d)
			for a := range theta {
				theta[a] = 0.3 * r.NormFloat64()
			}
			c.setTheta(t, tr, m.Imports(), theta)
			near(t, "loss", tr.loss, c.objective(tr.opts, tr.pairs, tr.y, m.Imports(), theta), 1e-12)
			grad := slices.Clone(tr.grad)
			if err := tr.hessian(); err != nil {
				t.Fatal(err)
			}
			var h mat.SymDense
			tr.hess.ToSym(&h)
			const step = 1e-5
			for a := 0; a < d; a++ {
				plus, minus := slices.Clone(theta), slices.Clone(theta)
				plus[a] += step
				minus[a] -= step
				fd := (c.objective(tr.opts, tr.pairs, tr.y, m.Imports(), plus) - c.objective(tr.opts, tr.pairs, tr.y, m.Imports(), minus)) / (2 * step)
				near(t, fmt.Sprintf("gradient %d", a), grad[a], fd, 1e-7)
				c.setTheta(t, tr, m.Imports(), plus)
				gp := slices.Clone(tr.grad)
				c.setTheta(t, tr, m.Imports(), minus)
				for b := 0; b < d; b++ {
					near(t, fmt.Sprintf("Hessian (%d, %d)", b, a), h.At(b, a), (gp[b]-tr.grad[b])/(2*step), 1e-6)
				}
			}
		})
	}
}

// fullKLR solves min L over f in span{P(., t)} + the fixed features, the
// kernel logistic regression on all pairs, by Newton in the eigenbasis of
// the pair kernel matrix P (f = U beta + F c, alpha'P alpha = beta' L^-1
// beta over the eigenvalues above 1e-10 of the largest). It returns the
// scores of the training pairs, the loss, and a function scoring any pair
// given its kernel values against the training pairs.
func fullKLR(t *testing.T, p *mat.SymDense, fixed [][]float64, y []float64, c float64) ([]float64, float64, func(kq, fq []float64) float64) {
	t.Helper()
	var eig mat.EigenSym
	if !eig.Factorize(p, true) {
		t.Fatal("eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	n := len(y)
	var keep []int
	for i, v := range vals {
		if v > 1e-10*vals[n-1] {
			keep = append(keep, i)
		}
	}
	k, q := len(keep), len(fixed)
	d := k + q
	x := mat.NewDense(n, d, nil) // design: eigenvectors, then fixed features
	reg := make([]float64, d)    // diagonal regulariser weights
	for a, i := range keep {
		for r := 0; r < n; r++ {
			x.Set(r, a, vecs.At(r, i))
		}
		reg[a] = c / vals[i]
	}
	for j, fj := range fixed {
		x.SetCol(k+j, fj)
	}
	theta := mat.NewVecDense(d, nil)
	f := make([]float64, n)
	eval := func() float64 {
		fv := mat.NewVecDense(n, f)
		fv.MulVec(x, theta)
		l := 0.0
		for i := range f {
			l += math.Log1p(math.Exp(-y[i] * f[i]))
		}
		l /= float64(n)
		for a := 0; a < d; a++ {
			l += reg[a] / 2 * theta.AtVec(a) * theta.AtVec(a)
		}
		return l
	}
	loss := eval()
	for it := 0; it < 100; it++ {
		g := mat.NewVecDense(d, nil)
		h := mat.NewSymDense(d, nil)
		for i := range f {
			pr := 1 / (1 + math.Exp(-f[i]))
			ri := pr
			if y[i] > 0 {
				ri = pr - 1
			}
			wi := pr * (1 - pr)
			for a := 0; a < d; a++ {
				g.SetVec(a, g.AtVec(a)+ri*x.At(i, a)/float64(n))
				for b := a; b < d; b++ {
					h.SetSym(a, b, h.At(a, b)+wi*x.At(i, a)*x.At(i, b)/float64(n))
				}
			}
		}
		for a := 0; a < d; a++ {
			g.SetVec(a, g.AtVec(a)+reg[a]*theta.AtVec(a))
			h.SetSym(a, a, h.At(a, a)+reg[a])
		}
		var step mat.VecDense
		if err := step.SolveVec(h, g); err != nil {
			t.Fatal(err)
		}
		if mat.Dot(&step, g) < 1e-26 {
			break
		}
		old := mat.VecDenseCopyOf(theta)
		for s := 1.0; ; s /= 2 {
			theta.AddScaledVec(old, -s, &step)
			if l := eval(); l <= loss || s < 1e-10 {
				loss = l
				break
			}
		}
	}
	// alpha = U L^-1 beta: f(q) = sum_t alpha_t P(q, t) + F(q) c.
	alpha := make([]float64, n)
	for a, i := range keep {
		for r := 0; r < n; r++ {
			alpha[r] += vecs.At(r, i) * theta.AtVec(a) / vals[i]
		}
	}
	score := func(kq, fq []float64) float64 {
		s := 0.0
		for r, v := range kq {
			s += alpha[r] * v
		}
		for j, v := range fq {
			s += theta.AtVec(k+j) * v
		}
		return s
	}
	return f, loss, score
}

// The import vector machine with every pair importable, no tolerance stop
// and no cap equals kernel logistic regression on all pairs, solved
// independently (Newton in the eigenbasis of the pair kernel matrix formed
// from the user kernel by the formula of section 7.4.1): same loss, same
// scores on the training pairs and on pairs it never saw. For
// PairDifference most pairs are linear combinations of others (cycles), and
// the IVM must skip them.
func TestAllImportedEqualsFullKLR(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	const n = 10
	x := mat.NewDense(n, 2, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = r.NormFloat64()
	}
	ku := kernelmath.RBF(x, 2)
	var pos, neg, unseen []learners.Pair
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			switch v := r.Float64(); {
			case v < 0.25:
				pos = append(pos, learners.Pair{I: i, J: j})
			case v < 0.5:
				neg = append(neg, learners.Pair{I: i, J: j})
			case v < 0.6:
				unseen = append(unseen, learners.Pair{I: j, J: i})
			}
		}
	}
	pairs := append(slices.Clone(pos), neg...)
	y := make([]float64, len(pairs))
	for i := range y {
		y[i] = -1
		if i < len(pos) {
			y[i] = 1
		}
	}
	base := []kernelmath.KernelMatrix{kernelmath.DenseKernel{K: kernelmath.RBF(x, 1)}, kernelmath.DenseKernel{K: kernelmath.RBF(x, 4)}}
	formula := func(kind PairKernel, p, q learners.Pair) float64 {
		if kind == PairTensor {
			return ku.At(p.I, q.I)*ku.At(p.J, q.J) + ku.At(p.I, q.J)*ku.At(p.J, q.I)
		}
		d := ku.At(p.I, q.I) + ku.At(p.J, q.J) - ku.At(p.I, q.J) - ku.At(p.J, q.I)
		if kind == PairSquared {
			return d * d
		}
		return d
	}
	for _, o := range configs(base) {
		t.Run(name(o), func(t *testing.T) {
			o.MaxImport, o.Candidates, o.Tol, o.C = len(pairs), len(pairs), -1, 0.01
			m, err := Train(context.Background(), kernelmath.DenseKernel{K: ku}, pos, neg, o)
			if err != nil {
				t.Fatal(err)
			}
			if m.Stats().Stop != "exhausted" && m.Stats().Stop != "cap" {
				t.Fatalf("stopped by %q, want every pair imported or dropped", m.Stats().Stop)
			}
			if o.Pair == PairDifference && m.Stats().Dependent == 0 {
				t.Error("no dependent pair was dropped, but pairs forming cycles are dependent")
			}
			p := mat.NewSymDense(len(pairs), nil)
			for a := range pairs {
				for b := a; b < len(pairs); b++ {
					p.SetSym(a, b, formula(o.Pair, pairs[a], pairs[b]))
				}
			}
			fixedOf := func(q learners.Pair) []float64 {
				var f []float64
				if !o.NoIntercept {
					f = append(f, 1)
				}
				if o.KernelTerm {
					f = append(f, ku.At(q.I, q.J))
				}
				for _, k := range o.Base {
					f = append(f, k.At(q.I, q.J))
				}
				return f
			}
			var fixed [][]float64
			for j := range fixedOf(pairs[0]) {
				col := make([]float64, len(pairs))
				for a, q := range pairs {
					col[a] = fixedOf(q)[j]
				}
				fixed = append(fixed, col)
			}
			f, loss, score := fullKLR(t, p, fixed, y, o.C)
			near(t, "loss", m.Stats().Loss, loss, 1e-9)
			for a, q := range pairs {
				near(t, fmt.Sprintf("f(%v)", q), m.Score(q.I, q.J), f[a], 1e-6)
			}
			for _, q := range unseen {
				kq := make([]float64, len(pairs))
				for a, pa := range pairs {
					kq[a] = formula(o.Pair, q, pa)
				}
				near(t, fmt.Sprintf("f(unseen %v)", q), m.Score(q.I, q.J), score(kq, fixedOf(q)), 1e-6)
			}
		})
	}
}

// The loss never rises from round to round, and the stop reasons hold.
func TestLossNonIncreasingAndStops(t *testing.T) {
	c := newCommunity(t, 60, 4, 10, 5)
	for _, o := range configs(c.base) {
		t.Run(name(o), func(t *testing.T) {
			capped := o
			capped.MaxImport, capped.Tol = 8, -1
			m, err := Train(context.Background(), c.k, c.pos, c.neg, capped)
			if err != nil {
				t.Fatal(err)
			}
			st := m.Stats()
			if st.Stop != "cap" || len(m.Imports()) != 8 || len(st.Losses) != 9 {
				t.Fatalf("stop %q with %d imports and %d losses, want cap at 8 with 9 losses", st.Stop, len(m.Imports()), len(st.Losses))
			}
			for r := 1; r < len(st.Losses); r++ {
				if st.Losses[r] > st.Losses[r-1]*(1+1e-13) {
					t.Errorf("loss rose at round %d: %.15g -> %.15g", r, st.Losses[r-1], st.Losses[r])
				}
			}
			if st.Loss != st.Losses[len(st.Losses)-1] {
				t.Errorf("Loss %g is not the last of Losses %g", st.Loss, st.Losses[len(st.Losses)-1])
			}
			m, err = Train(context.Background(), c.k, c.pos, c.neg, o)
			if err != nil {
				t.Fatal(err)
			}
			st = m.Stats()
			l := len(st.Losses)
			if st.Stop != "tol" || l < 2 || st.Losses[l-2]-st.Losses[l-1] >= 1e-3*st.Losses[l-1] {
				t.Errorf("stop %q, last losses %v: want the 0.1%% rule to have stopped it", st.Stop, st.Losses[max(0, l-2):])
			}
			for r := 1; r < l-1; r++ {
				if st.Losses[r-1]-st.Losses[r] < 1e-3*st.Losses[r] {
					t.Errorf("round %d lowered the loss by less than 0.1%% but training went on", r)
				}
			}
		})
	}
}

// The same seed gives the same model whatever the number of workers; another
// seed draws other candidates.
func TestDeterministicPerSeed(t *testing.T) {
	c := newCommunity(t, 50, 4, 5, 6)
	train := func(seed uint64, procs int) *Model {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		m, err := Train(context.Background(), c.k, c.pos, c.neg, Options{Seed: seed, MaxImport: 15, Tol: -1, Candidates: 10})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b, one := train(1, 2), train(1, 2), train(1, 1)
	for _, m := range []*Model{b, one} {
		if !slices.Equal(a.Imports(), m.Imports()) || !slices.Equal(a.Alpha(), m.Alpha()) || a.Bias() != m.Bias() || a.Stats().Loss != m.Stats().Loss {
			t.Fatal("two fits with the same seed differ")
		}
	}
	if other := train(2, 2); slices.Equal(a.Imports(), other.Imports()) {
		t.Error("seeds 1 and 2 imported the same pairs")
	}
}

// With the thesis' difference kernel every model is b + g(i) - g(j): the
// ranking of the other users is the same for every user, and f(i, j) +
// f(j, i) = 2b. The squared kernel is symmetric and ranks per user: on
// planted communities each user's best-scored other user is in its group.
func TestDifferenceKernelRanksGlobally(t *testing.T) {
	c := newCommunity(t, 60, 4, 5, 7)
	diff, err := Train(context.Background(), c.k, c.pos, c.neg, Options{Pair: PairDifference})
	if err != nil {
		t.Fatal(err)
	}
	if len(diff.Imports()) == 0 {
		t.Fatal("no imports")
	}
	sq, err := Train(context.Background(), c.k, c.pos, c.neg, Options{Pair: PairSquared})
	if err != nil {
		t.Fatal(err)
	}
	d0, di := make([]float64, 60), make([]float64, 60)
	diff.ScoreAll(0, d0)
	same := 0
	for i := 0; i < 60; i++ {
		diff.ScoreAll(i, di)
		for j := range di {
			near(t, "f(i, j) - f(0, j) (independent of j)", di[j]-d0[j], di[0]-d0[0], 1e-9)
			near(t, "f(i, j) + f(j, i)", diff.Score(i, j)+diff.Score(j, i), 2*diff.Bias(), 1e-9)
		}
		sq.ScoreAll(i, di)
		best := -1
		for j := range di {
			near(t, "squared: f(i, j) - f(j, i)", sq.Score(i, j), sq.Score(j, i), 1e-12)
			if j != i && (best < 0 || di[j] > di[best]) {
				best = j
			}
		}
		if c.group[best] == c.group[i] {
			same++
		}
	}
	if same < 57 {
		t.Errorf("squared kernel: the top user is in the same group for %d of 60 users, want >= 57", same)
	}
}

func TestTrainBadInput(t *testing.T) {
	c := newCommunity(t, 12, 2, 10, 8)
	nan := mat.NewSymDense(12, nil)
	nan.CopySym(c.k.(kernelmath.DenseKernel).K)
	nanDiag, nanOff := mat.NewSymDense(12, nil), mat.NewSymDense(12, nil)
	nanDiag.CopySym(nan)
	nanDiag.SetSym(3, 3, math.NaN())
	nanOff.CopySym(nan)
	nanOff.SetSym(2, 5, math.NaN())
	ctx := context.Background()
	cases := map[string]struct {
		k        kernelmath.KernelMatrix
		pos, neg []learners.Pair
		opts     Options
	}{
		"nil kernel":        {nil, c.pos, c.neg, Options{}},
		"no positives":      {c.k, nil, c.neg, Options{}},
		"no negatives":      {c.k, c.pos, nil, Options{}},
		"user out of range": {c.k, append(slices.Clone(c.pos), learners.Pair{I: 0, J: 12}), c.neg, Options{}},
		"negative user":     {c.k, c.pos, append(slices.Clone(c.neg), learners.Pair{I: -1, J: 2}), Options{}},
		"self pair":         {c.k, append(slices.Clone(c.pos), learners.Pair{I: 4, J: 4}), c.neg, Options{}},
		"NaN diagonal":      {kernelmath.DenseKernel{K: nanDiag}, c.pos, c.neg, Options{}},
		"NaN entry":         {kernelmath.DenseKernel{K: nanOff}, c.pos, c.neg, Options{Candidates: 1000}},
		"negative C":        {c.k, c.pos, c.neg, Options{C: -1}},
		"unknown pair":      {c.k, c.pos, c.neg, Options{Pair: PairKernel(7)}},
		"negative cap":      {c.k, c.pos, c.neg, Options{MaxImport: -3}},
		"base size":         {c.k, c.pos, c.neg, Options{Base: []kernelmath.KernelMatrix{c.base[0], denseOf([][]float64{{1, 0}, {0, 1}})}}},
		"nil base":          {c.k, c.pos, c.neg, Options{Base: []kernelmath.KernelMatrix{nil}}},
	}
	for name, cs := range cases {
		if _, err := Train(ctx, cs.k, cs.pos, cs.neg, cs.opts); !errors.Is(err, learners.ErrInput) {
			t.Errorf("%s: got %v, want an error wrapping learners.ErrInput", name, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Train(cctx, c.k, c.pos, c.neg, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}
}

// The sums that score the import candidates (their couplings with the
// imports and the fixed features, the gradient entry and the curvature)
// against the test's own sums over the training pairs, with the pair kernel
// from the feature map, on more pairs than one chunk holds.
func TestCandidateSumsMatchDirect(t *testing.T) {
	c := newCommunity(t, 300, 10, 4, 5)
	for _, o := range configs(c.base) {
		t.Run(name(o), func(t *testing.T) {
			o.MaxImport, o.Tol = 3, -1
			tr, m := run(t, c.k, c.pos, c.neg, o)
			if len(tr.pairs) <= 2*chunkPairs {
				t.Fatalf("%d pairs: want more than two chunks", len(tr.pairs))
			}
			var cands []*candidate
			for _, idx := range tr.rest[:8] {
				cd := &candidate{idx: idx}
				tr.prepare(cd)
				if cd.err != nil {
					t.Fatal(cd.err)
				}
				if !cd.dep {
					cands = append(cands, cd)
				}
			}
			if len(cands) < 4 {
				t.Fatalf("%d candidates independent of the imports, want at least 4", len(cands))
			}
			sums, err := tr.candidateSums(cands)
			if err != nil {
				t.Fatal(err)
			}
			d := tr.dim()
			for a, cd := range cands {
				want := make([]float64, d+2)
				for i, p := range tr.pairs {
					v := c.featurePair(o.Pair, p, tr.pairs[cd.idx])
					for s, imp := range m.Imports() {
						want[s] += tr.w[i] * v * c.featurePair(o.Pair, p, imp)
					}
					for j, fj := range tr.fixed {
						want[len(m.Imports())+j] += tr.w[i] * v * fj[i]
					}
					want[d] += tr.r[i] * v
					want[d+1] += tr.w[i] * v * v
				}
				for k, w := range want {
					near(t, fmt.Sprintf("candidate %d, sum %d", a, k), sums[a*(d+2)+k], w, 1e-9)
				}
			}
		})
	}
}
