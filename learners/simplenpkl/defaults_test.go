package simplenpkl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
	"gonum.org/v1/gonum/mat"
)

// lambda_max of small signed constraint graphs, by hand: a star of three
// must-links sqrt(3); a triangle of must-links 2 (eigenvalues 2, -1, -1); a
// triangle with one cannot-link 1 (1, 1, -2: the unbalanced signed
// triangle); one cannot-link 1. AutoC is their inverse.
func TestAutoC(t *testing.T) {
	for _, c := range []struct {
		name  string
		pairs []learners.Pair
		t     []float64
		want  float64
	}{
		{"star", []learners.Pair{{I: 0, J: 1}, {I: 0, J: 2}, {I: 0, J: 3}}, []float64{1, 1, 1}, 1 / math.Sqrt(3)},
		{"triangle", []learners.Pair{{I: 0, J: 1}, {I: 1, J: 2}, {I: 0, J: 2}}, []float64{1, 1, 1}, 0.5},
		{"unbalanced triangle", []learners.Pair{{I: 0, J: 1}, {I: 1, J: 2}, {I: 0, J: 2}}, []float64{1, 1, -1}, 1},
		{"one cannot-link", []learners.Pair{{I: 2, J: 5}}, []float64{-1}, 1},
	} {
		got, err := AutoC(7, c.pairs, c.t, 1)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: C = %.15g, want %.15g", c.name, got, c.want)
		}
	}
	if _, err := AutoC(5, nil, nil, 1); err == nil {
		t.Fatal("no pairs: want an error")
	}
	// Above 300 constrained points Lanczos computes lambda_max: against
	// gonum's full eigen-decomposition of the n x n matrix.
	r := rand.New(rand.NewPCG(3, 3))
	const n = 500
	seen := map[learners.Pair]bool{}
	var pairs []learners.Pair
	var signs []float64
	for len(pairs) < 700 {
		i, j := r.IntN(n), r.IntN(n)
		p := learners.Pair{I: min(i, j), J: max(i, j)}
		if i == j || seen[p] {
			continue
		}
		seen[p] = true
		pairs = append(pairs, p)
		signs = append(signs, float64(1-2*r.IntN(2)))
	}
	got, err := AutoC(n, pairs, signs, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 / refTopT(n, pairs, signs); math.Abs(got-want) > 1e-9*want {
		t.Fatalf("Lanczos path: C = %.15g, full eigen-decomposition %.15g", got, want)
	}
}

// AutoB by hand: the ceil(0.75 m)-th largest margin is brought to 1.
func TestAutoB(t *testing.T) {
	for _, c := range []struct {
		margins []float64
		p, want float64
	}{
		{[]float64{0.5, 0.25, 0.1, -0.2}, 2, 100},  // 3rd largest 0.1
		{[]float64{0.1, -0.2, 0.5, 0.25}, 3, 1000}, // order does not matter
		{[]float64{0.5, 0.25, 0.1, -0.2}, 1, 10},
		{[]float64{0.2, 0.4, 0.8, 0.1, 0.05}, 2, 1 / 0.01}, // ceil(3.75) = 4th largest 0.1
		{[]float64{0.5, -0.1, -0.2, -0.3}, 2, 4},           // 3rd largest < 0: the largest
		{[]float64{0, -0.1}, 2, 1},                         // none positive: the thesis' 1
		{nil, 2, 1},
	} {
		if got := AutoB(c.margins, c.p); math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("AutoB(%v, %g) = %.15g, want %g", c.margins, c.p, got, c.want)
		}
	}
	// G equivalent to B = 100 for h1 = 3 at p = 2: 3 sqrt(100) / 100.
	if b, g := AutoCapacity([]float64{0.5, 0.25, 0.1, -0.2}, 3, 2); b != 0 || math.Abs(g-0.3) > 1e-15 {
		t.Errorf("AutoCapacity p = 2: B %g G %g, want 0 and 0.3", b, g)
	}
	if b, g := AutoCapacity([]float64{0.5, 0.25, 0.1, -0.2}, 3, 1); b != 10 || g != 0 {
		t.Errorf("AutoCapacity p = 1 (no G-form): B %g G %g, want 10 and 0", b, g)
	}
}

// The automatic C and capacity of the linear loss against a dense
// computation written from their definitions: C = 1/lambda_max(T) (full
// eigen-decomposition), A = C T - L (the kNN graph of the z-scored
// features, by sorting), K1 = A_+ / ||A_+||_F (Prop. 3.25 at B = 1, p = 2),
// B = m^-2 for the ceil(0.75 m)-th largest margin m of K1, K = sqrt(B) K1.
// The learner's kernel is K; 75% of the pairs are met; the explicit B-form
// with that B and C gives the same kernel and spends the budget.
func TestAutoCapacityLinearLoss(t *testing.T) {
	in, x := randomInput(40, 3, 50, 21)
	l := newLearner(t, `{"loss": "linear"}`)
	out, f, err := l.fit(context.Background(), in, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref := newRefProblem(in, x, l.Config)
	n := 40
	a := scaled(ref.l, -1)
	for e, p := range ref.pairs {
		a.SetSym(p.I, p.J, a.At(p.I, p.J)+ref.c*ref.t[e])
	}
	var es mat.EigenSym
	if !es.Factorize(a, true) {
		t.Fatal("eigen")
	}
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	aPlus := mat.NewSymDense(n, nil)
	for c, v := range es.Values(nil) {
		if v > 0 {
			aPlus.SymRankOne(aPlus, v, mat.NewVecDense(n, mat.Col(nil, c, &vecs)))
		}
	}
	norm := math.Sqrt(kernelmath.Frobenius(aPlus, aPlus))
	m := make([]float64, len(ref.pairs))
	for e, p := range ref.pairs {
		m[e] = ref.t[e] * aPlus.At(p.I, p.J) / norm
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(m)))
	r := int(math.Ceil(0.75 * float64(len(m))))
	b := 1 / (m[r-1] * m[r-1])
	want := scaled(aPlus, math.Sqrt(b)/norm)
	t.Logf("C = %.6g (reference %.6g), B = %.6g, G = %.6g, %d pairs", f.c, ref.c, b, f.pr.G, len(m))
	if learnertest.RelDiff(f.c, ref.c) > 1e-9 {
		t.Fatalf("C = %.12g, reference %.12g", f.c, ref.c)
	}
	if d := symDiff(out.Kernel, want); d > 1e-9 {
		t.Fatalf("kernel differs from the reference by %g (relative)", d)
	}
	met := 0
	for e, p := range ref.pairs {
		if ref.t[e]*out.Kernel.At(p.I, p.J) >= 1-1e-9 {
			met++
		}
	}
	if met < r || met > r+1 {
		t.Fatalf("%d of %d pairs met, want %d", met, len(ref.pairs), r)
	}
	explicit := newLearner(t, fmt.Sprintf(`{"loss": "linear", "B": %.17g, "C": %.17g}`, b, ref.c))
	outB, err := explicit.Fit(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if d := symDiff(outB.Kernel, out.Kernel); d > 1e-9 {
		t.Fatalf("the explicit B-form differs by %g", d)
	}
	if tr := traceP(out.Kernel, 2); learnertest.RelDiff(tr, b) > 1e-9 {
		t.Fatalf("tr K^2 = %g, want B = %g", tr, b)
	}
	checkPSD(t, out.Kernel)
	if !out.Stats.Converged {
		t.Fatalf("stats %+v", out.Stats)
	}
}

// clusterInput returns n points in c Gaussian clusters (centre 3 e_{c mod
// d}, deviation spread) and nPairs random pairs labelled by the clusters.
func clusterInput(n, c, d, nPairs int, spread float64, seed uint64) *learners.Input {
	r := rand.New(rand.NewPCG(seed, 5))
	x := mat.NewDense(n, d, nil)
	lab := make([]int, n)
	for i := 0; i < n; i++ {
		lab[i] = i % c
		for f := 0; f < d; f++ {
			v := spread * r.NormFloat64()
			if f == lab[i]%d {
				v += 3
			}
			x.Set(i, f, v)
		}
	}
	in := &learners.Input{Features: x}
	addRandomPairs(in, n, nPairs, r, func(i, j int) bool { return lab[i] == lab[j] })
	return in
}

// At the defaults each loss does what it is for, on 4 clusters with dense
// side information (150 pairs over 40 points): the linear loss pulls every
// pair with weight C; the hinge loss leaves the pairs beyond the margin
// alone (alpha = 0), holds some at it (0 < alpha < C) and pulls the rest
// with C; the square hinge loss pulls the violated pairs by C (1 - margin)
// and leaves the over-met ones alone; the square loss pulls those back
// (alpha < 0). The four kernels differ pairwise; all converge, PSD.
func TestLossesAtDefaults(t *testing.T) {
	in := clusterInput(40, 4, 4, 150, 1, 3)
	kernels := map[Loss]*mat.SymDense{}
	for _, loss := range []Loss{LinearLoss, HingeLoss, SquareHingeLoss, SquareLoss} {
		// The model's defaults (C, capacity, graph); a tight tol so that
		// the KKT conditions hold to 1e-3 C (the hinge loss, nonsmooth,
		// gets there slowly: 1e-6).
		tol := 1e-9
		if loss == HingeLoss {
			tol = 1e-6
		}
		l := newLearner(t, fmt.Sprintf(`{"loss": %q, "tol": %g, "max_iter": 1000}`, loss, tol))
		out, f, err := l.fit(context.Background(), in, nil)
		if err != nil {
			t.Fatalf("%s: %v", loss, err)
		}
		checkPSD(t, out.Kernel)
		kernels[loss] = out.Kernel
		c := f.c
		var over, at, under, zero, interior, full, negative int
		for e, p := range f.pairs {
			m := f.t[e] * out.Kernel.At(p.I, p.J)
			switch {
			case m > 1+1e-3:
				over++
			case m >= 1-1e-3:
				at++
			default:
				under++
			}
			if loss == LinearLoss {
				continue
			}
			a := f.res.Alpha[e]
			switch {
			case a < -1e-3*c:
				negative++
			case a <= 1e-3*c:
				zero++
			case a < c*(1-1e-3):
				interior++
			default:
				full++
			}
			var want float64
			switch loss {
			case SquareHingeLoss:
				want = c * math.Max(0, 1-m)
			case SquareLoss:
				want = c * (1 - m)
			case HingeLoss:
				switch {
				case m < 1-1e-3:
					want = c
				case m > 1+1e-3:
					want = 0
				default:
					want = a
				}
			}
			if math.Abs(a-want) > 1e-3*c {
				t.Fatalf("%s: pair %d margin %.4f alpha %.4g, KKT wants %.4g (C %.4g)", loss, e, m, a, want, c)
			}
		}
		t.Logf("%-12s %2d iterations, C %.3g G %.3g: margins >1 %d, =1 %d, <1 %d; alpha 0: %d, in (0, C): %d, >= C: %d, < 0: %d",
			loss, out.Stats.Iterations, c, f.pr.G, over, at, under, zero, interior, full, negative)
		if !out.Stats.Converged {
			t.Fatalf("%s: %+v", loss, out.Stats)
		}
		switch loss {
		case HingeLoss:
			if zero == 0 || interior == 0 || full == 0 {
				t.Fatalf("hinge: want pairs left alone, held at the margin and pulled")
			}
		case SquareHingeLoss:
			if zero == 0 || over == 0 {
				t.Fatalf("square hinge: want over-met pairs left alone")
			}
		case SquareLoss:
			if negative == 0 {
				t.Fatalf("square: want over-met pairs pulled back")
			}
		}
	}
	losses := []Loss{LinearLoss, HingeLoss, SquareHingeLoss, SquareLoss}
	for i, a := range losses {
		for _, b := range losses[i+1:] {
			if d := symDiff(kernels[a], kernels[b]); d < 1e-2 {
				t.Errorf("%s and %s kernels differ by %.2g only", a, b, d)
			}
		}
	}
}

// The graph inputs: standardized is the kernel input with the linear
// kernel of the z-scored features (reference z-scoring), features the
// kernel input with the linear kernel of the raw ones; a missing input is
// an ErrInput that names it.
func TestGraphInput(t *testing.T) {
	in, x := randomInput(30, 3, 30, 22)
	x.Set(0, 1, 50) // one feature on another scale
	in.Kernels = []*mat.SymDense{kernelmath.Linear(x)}
	fitWith := func(params string, in *learners.Input) *mat.SymDense {
		out, err := newLearner(t, params).Fit(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		return out.Kernel
	}
	std := fitWith(`{}`, in)
	viaKernel := fitWith(`{"graph_input": "kernel"}`, &learners.Input{Kernels: []*mat.SymDense{kernelmath.Linear(refZScore(x))}, MustLink: in.MustLink, CannotLink: in.CannotLink})
	if d := symDiff(std, viaKernel); d > 1e-9 {
		t.Fatalf("standardized vs the kernel of the z-scored features: %g", d)
	}
	raw := fitWith(`{"graph_input": "features"}`, in)
	if d := symDiff(raw, fitWith(`{"graph_input": "kernel"}`, in)); d > 1e-9 {
		t.Fatalf("features vs the linear kernel of the raw features: %g", d)
	}
	if d := symDiff(raw, std); d < 1e-3 {
		t.Fatalf("raw and standardised graphs give the same kernel (%g): the test input does not tell them apart", d)
	}
	for _, c := range []struct {
		params string
		in     *learners.Input
		want   string
	}{
		{`{}`, &learners.Input{Kernels: in.Kernels, MustLink: in.MustLink}, "feature"},
		{`{"graph_input": "kernel"}`, &learners.Input{Features: x, MustLink: in.MustLink}, "kernel"},
		{`{"select": "active", "select_kernel": "base"}`, &learners.Input{Features: x, MustLink: in.MustLink}, "kernel"},
		{`{}`, &learners.Input{Features: x}, "pairs"},
	} {
		l, _, err := learners.New(Name, json.RawMessage(c.params)) // the registry checks the needs
		if err != nil {
			t.Fatal(err)
		}
		_, err = l.Fit(context.Background(), c.in)
		if !errors.Is(err, learners.ErrInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want an ErrInput about %s", c.params, err, c.want)
		}
	}
}

// symDiff is ||a - b||_2 / ||b||_2.
func symDiff(a, b *mat.SymDense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, 2) / mat.Norm(b, 2)
}
