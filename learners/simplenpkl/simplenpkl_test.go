package simplenpkl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
	"github.com/kernelrank/kernelrank/learners/kit/npkl"
	"gonum.org/v1/gonum/mat"
)

func TestRegistered(t *testing.T) {
	s, ok := learners.Lookup(Name)
	if !ok {
		t.Fatal("simplenpkl is not registered")
	}
	if s.Kind != learners.KindKernel || s.Needs != learners.NeedFeatures|learners.NeedPairs {
		t.Fatalf("kind %v needs %v", s.Kind, s.Needs)
	}
	// C = 0 and B = G = 0: the automatic C and capacity.
	want := Config{Loss: SquareHingeLoss, C: 0, B: 0, P: 2, K: 5, Mutual: false, GraphInput: "standardized", Solver: npkl.Auto, Select: "all",
		Fraction: 0.5, SelectKernel: "linear-loss", Step: "lbfgs", MaxIter: 50, Tol: 1e-4, Seed: 1}
	if got := newLearner(t, "").Config; got != want {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
	got := newLearner(t, `{"loss": "hinge", "C": 2, "B": 3, "p": 1.5, "k": 7, "graph": "mutual", "graph_input": "kernel", "rank": 4, "max_rank": 9,
		"eigensolver": "lanczos", "select": "active", "select_fraction": 0.25, "select_kernel": "base", "G": 0.5, "step": "gradient",
		"max_iter": 8, "tol": 1e-6, "seed": 5}`).Config
	want = Config{Loss: HingeLoss, C: 2, B: 3, P: 1.5, K: 7, Mutual: true, GraphInput: "kernel", Rank: 4, MaxRank: 9, Solver: npkl.Lanczos, Select: "active",
		Fraction: 0.25, SelectKernel: "base", G: 0.5, Step: "gradient", MaxIter: 8, Tol: 1e-6, Seed: 5}
	if got != want {
		t.Fatalf("parsed %+v, want %+v", got, want)
	}
}

func TestBadParameters(t *testing.T) {
	for _, p := range []string{`{"gamma": 1}`, `{"B": -1}`, `{"C": -0.1}`, `{"graph_input": "rbf"}`, `{"p": 0.5}`, `{"p": 11}`, `{"k": 0}`, `{"rank": -1}`,
		`{"max_rank": -2}`, `{"loss": "logistic"}`, `{"graph": "all"}`, `{"eigensolver": "arpack"}`, `{"select": "some"}`,
		`{"select_fraction": 0}`, `{"select_fraction": 1.5}`, `{"tol": 0}`, `{"max_iter": 0}`, `{"seed": -1}`,
		`{"G": -1}`, `{"G": 1, "p": 1}`, `{"step": "newton"}`} {
		_, _, err := learners.New(Name, json.RawMessage(p))
		var pe *learners.ParamError
		if !errors.As(err, &pe) {
			t.Errorf("%s: err = %v, want a ParamError", p, err)
		}
	}
}

func TestConstraints(t *testing.T) {
	pairs, tt, err := Constraints([]learners.Pair{{I: 3, J: 1}, {I: 1, J: 3}, {I: 0, J: 2}}, []learners.Pair{{I: 2, J: 1}})
	if err != nil {
		t.Fatal(err)
	}
	wantP := []learners.Pair{{I: 0, J: 2}, {I: 1, J: 2}, {I: 1, J: 3}}
	wantT := []float64{1, -1, 1}
	for e := range wantP {
		if pairs[e] != wantP[e] || tt[e] != wantT[e] {
			t.Fatalf("got %v %v, want %v %v", pairs, tt, wantP, wantT)
		}
	}
	_, _, err = Constraints([]learners.Pair{{I: 0, J: 1}}, []learners.Pair{{I: 1, J: 0}})
	if !errors.Is(err, learners.ErrInput) {
		t.Fatalf("conflicting pair: err = %v, want ErrInput", err)
	}
}

// The golden test of the linear loss: the closed form attains the optimum
// of the SDP (3.6), found independently by projected gradient descent on
// the dense problem with gonum's full eigensolver; relative gap < 1e-6.
func TestLinearLossAttainsSDPOptimum(t *testing.T) {
	for _, c := range []struct {
		n, pairs int
		p, b, cc float64
		seed     uint64
	}{
		{12, 8, 2, 1, 0.3, 1},
		{16, 12, 2, 4, 1, 2},
		{14, 10, 3, 2, 0.5, 3},
		{20, 15, 3, 1, 0.3, 4},
	} {
		in, x := randomInput(c.n, 3, c.pairs, c.seed)
		l := newLearner(t, "")
		l.Config.Loss, l.Config.P, l.Config.B, l.Config.C, l.Config.K = LinearLoss, c.p, c.b, c.cc, 3
		out, err := l.Fit(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		ref := newRefProblem(in, x, l.Config)
		// M = L - C sum_{ordered} T_ij E_ij.
		m := mat.NewSymDense(c.n, nil)
		m.CopySym(ref.l)
		for e, pr := range ref.pairs {
			m.SetSym(pr.I, pr.J, m.At(pr.I, pr.J)-c.cc*ref.t[e])
		}
		kp := pgdLinear(m, c.b, c.p)
		want := ref.primal(kp)
		got := ref.primal(out.Kernel)
		gap := (got - want) / math.Abs(want)
		t.Logf("n=%d p=%g B=%g C=%g: closed form %.12g, projected gradient %.12g, relative gap %.2e", c.n, c.p, c.b, c.cc, got, want, gap)
		if math.Abs(gap) > 1e-6 {
			t.Fatalf("closed form %.12g vs SDP optimum %.12g: relative gap %g", got, want, gap)
		}
		if learnertest.RelDiff(out.Stats.Objective, got) > 1e-10 {
			t.Fatalf("reported objective %.12g, recomputed %.12g", out.Stats.Objective, got)
		}
		if tr := traceP(out.Kernel, c.p); learnertest.RelDiff(tr, c.b) > 1e-9 {
			t.Fatalf("tr K^p = %g, want B = %g", tr, c.b)
		}
		checkPSD(t, out.Kernel)
		if !out.Stats.Converged || out.Stats.Iterations != 0 {
			t.Fatalf("stats %+v", out.Stats)
		}
	}
}

// The iterative losses on a problem whose budget lets margins reach 1 (so
// that some constraints are met and some are not): the dual ascent is
// monotone, the gap closes, and the dual value recomputed independently
// (full eigen-decomposition of the dense A) and the primal value of the
// returned kernel (dense L) agree with the certificate; the multipliers
// satisfy the KKT conditions each loss implies.
func TestIterativeLossesKKT(t *testing.T) {
	in, x := randomInput(30, 3, 40, 7)
	for _, c := range []struct {
		loss Loss
		step string
	}{{SquareHingeLoss, "lbfgs"}, {SquareLoss, "lbfgs"}, {HingeLoss, "lbfgs"}, {SquareHingeLoss, "gradient"}, {HingeLoss, "gradient"}} {
		loss := c.loss
		l := newLearner(t, `{"step": "`+c.step+`"}`)
		// The hinge loss makes the primal nonsmooth: K(alpha) approaches the
		// primal optimum slowly even once J is flat to 12 digits.
		tol := 1e-9
		if loss == HingeLoss {
			tol = 1e-6
		}
		l.Config.Loss, l.Config.B, l.Config.C, l.Config.Tol, l.Config.MaxIter = loss, 300, 10, tol, 3000
		prev := math.Inf(-1)
		out, f, err := l.fit(context.Background(), in, func(s npkl.Step) {
			if s.Dual < prev-1e-12*math.Abs(prev) {
				t.Fatalf("%s: dual decreased at iteration %d: %.15g -> %.15g", loss, s.Iter, prev, s.Dual)
			}
			prev = s.Dual
		})
		if err != nil {
			t.Fatal(err)
		}
		if !out.Stats.Converged {
			t.Fatalf("%s: not converged: %+v", loss, out.Stats)
		}
		ref := newRefProblem(in, x, l.Config)
		p := ref.primal(out.Kernel)
		j := ref.dual(f.res.Alpha)
		t.Logf("%s (%s steps): %d iterations, primal %.10g, dual %.10g, reported gap %.2e, independent gap %.2e, pg %.1e",
			loss, c.step, out.Stats.Iterations, p, j, out.Stats.Gap, (p-j)/math.Abs(p), f.res.PGNorm)
		if learnertest.RelDiff(p, out.Stats.Objective) > 1e-9 {
			t.Fatalf("%s: reported objective %.12g, recomputed %.12g", loss, out.Stats.Objective, p)
		}
		if p < j-1e-9*math.Abs(p) || (p-j)/math.Abs(p) > 10*tol {
			t.Fatalf("%s: independent primal %.12g and dual %.12g: weak duality or gap violated", loss, p, j)
		}
		checkPSD(t, out.Kernel)
		if tr := traceP(out.Kernel, 2); tr > 300*(1+1e-9) {
			t.Fatalf("%s: tr K^2 = %g > B", loss, tr)
		}
		met, violated := 0, 0
		for e, pr := range ref.pairs {
			margin := ref.t[e] * out.Kernel.At(pr.I, pr.J)
			a := f.res.Alpha[e]
			var want float64
			switch loss {
			case SquareHingeLoss: // C eps = alpha, eps = max(0, 1 - margin)
				want = l.Config.C * math.Max(0, 1-margin)
			case SquareLoss: // alpha free, C eps = alpha with eps = 1 - margin
				want = l.Config.C * (1 - margin)
			case HingeLoss: // alpha = C below the margin, 0 above, anything in [0, C] at 1
				switch {
				case margin < 1-1e-3:
					want = l.Config.C
				case margin > 1+1e-3:
					want = 0
				default:
					want = a
				}
				if a < 0 || a > l.Config.C {
					t.Fatalf("hinge: alpha %g outside [0, C]", a)
				}
				// An interior multiplier holds its margin at the kink.
				if a > 1e-3*l.Config.C && a < (1-1e-3)*l.Config.C && math.Abs(margin-1) > 1e-3 {
					t.Fatalf("hinge: pair %d alpha %g in (0, C) but margin %g != 1", e, a, margin)
				}
			}
			if math.Abs(a-want) > 1e-3*l.Config.C {
				t.Fatalf("%s: pair %d margin %.6f alpha %.6f, KKT wants %.6f", loss, e, margin, a, want)
			}
			if margin >= 1-1e-6 {
				met++
			} else {
				violated++
			}
		}
		if loss == SquareHingeLoss && (met == 0 || violated == 0) {
			t.Fatalf("%s: %d constraints met, %d violated: the test problem should have both", loss, met, violated)
		}
	}
}

// Lanczos on the operator A and the dense partial eigensolver give the same
// kernel, and Lanczos really runs (no fallback) when few eigenvalues are
// positive.
func TestLanczosMatchesDense(t *testing.T) {
	in, _ := randomInput(120, 3, 30, 11)
	var kernels []*mat.SymDense
	for _, solver := range []npkl.Eigensolver{npkl.Dense, npkl.Lanczos} {
		l := newLearner(t, `{"C": 0.2, "tol": 1e-10, "max_iter": 200}`)
		l.Config.Solver = solver
		out, f, err := l.fit(context.Background(), in, nil)
		if err != nil {
			t.Fatal(err)
		}
		if solver == npkl.Lanczos && f.res.Dense != 0 {
			t.Fatalf("Lanczos fell back to the dense solver %d times of %d (%d positive eigenvalues)", f.res.Dense, f.res.Evals, len(f.res.K.Lambda))
		}
		if !out.Stats.Converged {
			t.Fatalf("%v: %+v", solver, out.Stats)
		}
		kernels = append(kernels, out.Kernel)
	}
	var d mat.Dense
	d.Sub(kernels[0], kernels[1])
	if diff, size := mat.Norm(&d, 2), mat.Norm(kernels[0], 2); diff > 1e-6*size {
		t.Fatalf("Lanczos and dense kernels differ by %g (size %g)", diff, size)
	}
}

// The low-rank variant: K lies in the span of the r smoothest Laplacian
// eigenvectors, its optimum is no better than the full problem's, and r = n
// is the full problem.
func TestLowRank(t *testing.T) {
	in, x := randomInput(40, 3, 30, 12)
	full := newLearner(t, `{"tol": 1e-10, "max_iter": 500}`)
	outFull, _, err := full.fit(context.Background(), in, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref := newRefProblem(in, x, full.Config)
	pFull := ref.primal(outFull.Kernel)
	for _, r := range []int{6, 40} {
		l := newLearner(t, fmt.Sprintf(`{"rank": %d, "tol": 1e-10, "max_iter": 500}`, r))
		out, f, err := l.fit(context.Background(), in, nil)
		if err != nil {
			t.Fatal(err)
		}
		v := f.pr.Basis
		// V must be orthonormal eigenvectors of the dense L with the r smallest eigenvalues.
		var lv mat.Dense
		lv.Mul(ref.l, v)
		var es mat.EigenSym
		es.Factorize(ref.l, false)
		vals := es.Values(nil)
		for c := 0; c < r; c++ {
			ray := mat.Dot(v.ColView(c), lv.ColView(c))
			if ray > vals[r-1]+1e-9 {
				t.Fatalf("rank %d: basis vector %d has Rayleigh quotient %g above the %d-th smallest eigenvalue %g", r, c, ray, r, vals[r-1])
			}
		}
		// K (I - V V^T) = 0.
		var proj, resid mat.Dense
		proj.Mul(v, v.T())
		resid.Mul(out.Kernel, &proj)
		resid.Sub(out.Kernel, &resid)
		if mat.Norm(&resid, 2) > 1e-9*mat.Norm(out.Kernel, 2) {
			t.Fatalf("rank %d: K leaves the span of the basis", r)
		}
		p := ref.primal(out.Kernel)
		if p < pFull-1e-8*math.Abs(pFull) {
			t.Fatalf("rank %d: objective %g beats the full problem's optimum %g", r, p, pFull)
		}
		if r == 40 && learnertest.RelDiff(p, pFull) > 1e-8 {
			t.Fatalf("rank n: objective %.10g, full %.10g", p, pFull)
		}
		checkPSD(t, out.Kernel)
	}
}

// Active selection by hand: margins of the points of a small constraint set.
func TestActivePoints(t *testing.T) {
	pairs := []learners.Pair{{I: 0, J: 1}, {I: 0, J: 2}, {I: 3, J: 4}}
	tt := []float64{1, -1, 1}
	kij := []float64{0.5, 0.3, 0.05}
	// u_0 = |0.5 - 0.3| / 2 = 0.1, u_1 = 0.5, u_2 = 0.3, u_3 = u_4 = 0.05.
	got := activePoints(pairs, tt, kij, 0.5) // ceil(2.5) = 3 points: 3, 4, 0
	if len(got) != 3 || !got[3] || !got[4] || !got[0] {
		t.Fatalf("selected %v, want points 0, 3, 4", got)
	}
}

func TestSelection(t *testing.T) {
	in, _ := randomInput(40, 3, 30, 13)
	for _, sel := range []string{"active", "random"} {
		l := newLearner(t, fmt.Sprintf(`{"select": %q, "select_fraction": 0.4}`, sel))
		out, f, err := l.fit(context.Background(), in, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.pairs) >= 30 || len(f.pairs) == 0 {
			t.Fatalf("%s: kept %d of 30 pairs", sel, len(f.pairs))
		}
		if sel == "random" && len(f.pairs) != 12 {
			t.Fatalf("random: kept %d pairs, want ceil(0.4 x 30) = 12", len(f.pairs))
		}
		checkPSD(t, out.Kernel)
		again, _, _ := l.fit(context.Background(), in, nil)
		if !mat.EqualApprox(out.Kernel, again.Kernel, 0) {
			t.Fatalf("%s: not deterministic", sel)
		}
	}
}

// p = 1: B on the top eigenvector of A = C T - L, which the linear loss
// gives in closed form; checked against gonum's full eigensolver.
func TestPOne(t *testing.T) {
	in, x := randomInput(25, 3, 20, 14)
	l := newLearner(t, `{"loss": "linear", "p": 1, "B": 2}`)
	out, err := l.Fit(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	ref := newRefProblem(in, x, l.Config)
	a := scaled(ref.l, -1)
	for e, pr := range ref.pairs {
		a.SetSym(pr.I, pr.J, a.At(pr.I, pr.J)+ref.c*ref.t[e])
	}
	var es mat.EigenSym
	es.Factorize(a, true)
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	u := mat.NewVecDense(25, mat.Col(nil, 24, &vecs))
	want := mat.NewSymDense(25, nil)
	want.SymRankOne(want, 2, u)
	if !mat.EqualApprox(out.Kernel, want, 1e-9) {
		t.Fatal("p = 1 kernel is not B u u^T for the top eigenvector u")
	}
}

// max_rank keeps the requested number of eigenpairs.
func TestMaxRank(t *testing.T) {
	in, _ := randomInput(40, 3, 30, 15)
	l := newLearner(t, `{"loss": "linear", "max_rank": 2, "B": 3}`)
	out, f, err := l.fit(context.Background(), in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.res.K.Lambda) != 2 {
		t.Fatalf("%d eigenpairs kept, want 2", len(f.res.K.Lambda))
	}
	if tr := traceP(out.Kernel, 2); learnertest.RelDiff(tr, 3) > 1e-9 {
		t.Fatalf("tr K^2 = %g, want 3", tr)
	}
}

// Points on a line with growing gaps: the mutual 1-NN graph has the single
// edge (0, 1) (eigenvalue 0 of A on that component) and isolated points 2-5,
// where A = C T - I; with the pairs among isolated points and C < 1, A has
// no positive eigenvalue and the closed form is K = 0; nothing is NaN.
func TestNoPositiveEigenvalue(t *testing.T) {
	n := 6
	x := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		x.Set(i, 0, math.Pow(3, float64(i)))
	}
	in := &learners.Input{Kernels: []*mat.SymDense{kernelmath.Linear(x)}, MustLink: []learners.Pair{{I: 2, J: 5}}, CannotLink: []learners.Pair{{I: 3, J: 4}}}
	for _, loss := range []string{"linear", "square-hinge"} {
		// B automatic: no margin is positive, so B falls back to 1.
		out, err := newLearner(t, fmt.Sprintf(`{"loss": %q, "k": 1, "graph": "mutual", "graph_input": "kernel", "C": 0.5}`, loss)).Fit(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range out.Kernel.RawSymmetric().Data {
			if v != 0 {
				t.Fatalf("%s: K has %g, want 0", loss, v)
			}
		}
		if math.IsNaN(out.Stats.Objective) || math.IsNaN(out.Stats.Gap) {
			t.Fatalf("%s: stats %+v", loss, out.Stats)
		}
	}
}

func TestCancelledDuringIterations(t *testing.T) {
	in, _ := randomInput(30, 3, 40, 7)
	ctx, cancel := context.WithCancel(context.Background())
	l := newLearner(t, `{"B": 300, "C": 10, "tol": 1e-12, "max_iter": 1000}`)
	_, _, err := l.fit(ctx, in, func(s npkl.Step) {
		if s.Iter == 2 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestSampleConstraints(t *testing.T) {
	labels := make([]int, 100)
	for i := range labels {
		labels[i] = i % 3
	}
	must, cannot, err := SampleConstraints(labels, 0.7, 4, AllPairs)
	if err != nil {
		t.Fatal(err)
	}
	g := kernelmath.NewGraph(100, append(append([]learners.Pair(nil), must...), cannot...), func(learners.Pair) float64 { return 1 })
	if c := len(g.Components()); c != 70 {
		t.Fatalf("%d components, want 70", c)
	}
	for _, p := range must {
		if labels[p.I] != labels[p.J] {
			t.Fatalf("must-link %v across classes", p)
		}
	}
	for _, p := range cannot {
		if labels[p.I] == labels[p.J] {
			t.Fatalf("cannot-link %v within a class", p)
		}
	}
	m2, c2, _ := SampleConstraints(labels, 0.7, 4, AllPairs)
	if len(m2) != len(must) || len(c2) != len(cannot) || m2[0] != must[0] {
		t.Fatal("not deterministic")
	}
	// Over the must-links only, the must-link graph has the 70 components;
	// it takes more pairs: 30 must-link merges at a 1/3 chance a pair.
	mm, mc, err := SampleConstraints(labels, 0.7, 4, MustLinks)
	if err != nil {
		t.Fatal(err)
	}
	if c := len(kernelmath.NewGraph(100, mm, func(learners.Pair) float64 { return 1 }).Components()); c != 70 {
		t.Fatalf("must-link components: %d, want 70", c)
	}
	if len(mm)+len(mc) <= len(must)+len(cannot) || len(mm) < 30 {
		t.Fatalf("must-link components from %d+%d pairs, all-pair components from %d+%d: want more pairs and >= 30 must-links", len(mm), len(mc), len(must), len(cannot))
	}
	if _, _, err := SampleConstraints(labels, 0.02, 4, MustLinks); !errors.Is(err, learners.ErrInput) {
		t.Fatalf("2 components of 3 classes by must-links: err = %v, want ErrInput", err)
	}
	must, cannot, err = SamplePairs(labels, 250, 5)
	if err != nil || len(must)+len(cannot) != 250 {
		t.Fatalf("SamplePairs: %d pairs, err %v", len(must)+len(cannot), err)
	}
	if _, _, err := SamplePairs(labels, 5000, 5); !errors.Is(err, learners.ErrInput) {
		t.Fatalf("impossible count: err = %v", err)
	}
}

// The B-form and the G-form coincide when G = (tr A_+^q / B)^((p-1)/p) at
// the optimal multipliers (thesis section 3.2.2): solve the B-form, then the
// G-form with that G, and compare the kernels and multipliers.
func TestBFormGFormCoincide(t *testing.T) {
	in, _ := randomInput(30, 3, 40, 7)
	for _, p := range []float64{2, 3} {
		lb := newLearner(t, fmt.Sprintf(`{"B": 300, "C": 10, "p": %g, "tol": 1e-12, "max_iter": 2000}`, p))
		outB, fb, err := lb.fit(context.Background(), in, nil)
		if err != nil {
			t.Fatal(err)
		}
		w := make([]float64, len(fb.t))
		for e := range w {
			w[e] = fb.res.Alpha[e] * fb.t[e]
		}
		_, h, err := npkl.Evaluate(fb.pr, w)
		if err != nil {
			t.Fatal(err)
		}
		g := h / 300 // (tr A_+^q / B)^((p-1)/p) = h / B
		lg := newLearner(t, fmt.Sprintf(`{"G": %.17g, "B": 1, "C": 10, "p": %g, "tol": 1e-12, "max_iter": 2000}`, g, p))
		outG, fg, err := lg.fit(context.Background(), in, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !outB.Stats.Converged || !outG.Stats.Converged {
			t.Fatalf("p %g: B-form %+v, G-form %+v", p, outB.Stats, outG.Stats)
		}
		var d mat.Dense
		d.Sub(outB.Kernel, outG.Kernel)
		if diff := mat.Norm(&d, 2) / mat.Norm(outB.Kernel, 2); diff > 1e-5 {
			t.Fatalf("p %g: kernels differ by %g (relative)", p, diff)
		}
		for e := range fb.res.Alpha {
			if math.Abs(fb.res.Alpha[e]-fg.res.Alpha[e]) > 1e-3 {
				t.Fatalf("p %g: alpha %d: B-form %g, G-form %g", p, e, fb.res.Alpha[e], fg.res.Alpha[e])
			}
		}
		if tr := traceP(outG.Kernel, p); learnertest.RelDiff(tr, 300) > 1e-5 {
			t.Fatalf("p %g: G-form kernel has tr K^p = %g, want the B-form budget 300", p, tr)
		}
	}
}

// A fit stopped by max_iter returns its best kernel and ErrNotConverged.
func TestNotConvergedError(t *testing.T) {
	in, _ := randomInput(30, 3, 40, 7)
	out, err := newLearner(t, `{"B": 300, "C": 10, "tol": 1e-12, "max_iter": 2}`).Fit(context.Background(), in)
	if !errors.Is(err, learners.ErrNotConverged) || out == nil || out.Stats.Converged || out.Stats.Iterations != 2 {
		t.Fatalf("err = %v, out = %v", err, out)
	}
	checkPSD(t, out.Kernel)
}
