package hsicnpk

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

func newLearner(t testing.TB, params string) *Learner {
	t.Helper()
	l, _, err := learners.New(Name, json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	return l.(*learners.Resolved).Plugin().(*Learner)
}

func TestRegistered(t *testing.T) {
	s, ok := learners.Lookup(Name)
	if !ok {
		t.Fatal("hsicnpk is not registered")
	}
	if s.Kind != learners.KindKernel || s.Needs != learners.NeedFeatures|learners.NeedTarget {
		t.Fatalf("kind %v needs %v", s.Kind, s.Needs)
	}
	l := newLearner(t, "")
	want := config{k: 5, mutual: false, c: 10, budget: 1, rank: 0, basis: "tags", tol: 1e-4, maxIter: 500}
	if l.cfg != want {
		t.Fatalf("defaults %+v, want %+v", l.cfg, want)
	}
	l = newLearner(t, `{"k": 7, "neighbors": "mutual", "C": 3, "budget": 2, "rank": 12, "basis": "laplacian", "tol": 1e-6, "max_iter": 9, "best_effort": true}`)
	want = config{k: 7, mutual: true, c: 3, budget: 2, rank: 12, basis: "laplacian", tol: 1e-6, maxIter: 9, bestEffort: true}
	if l.cfg != want {
		t.Fatalf("parsed %+v, want %+v", l.cfg, want)
	}
}

func TestBadParameters(t *testing.T) {
	for _, p := range []string{`{"gamma": 1}`, `{"C": 0}`, `{"C": -1}`, `{"budget": 0}`, `{"k": 0}`, `{"rank": -1}`,
		`{"tol": 0}`, `{"tol": 2}`, `{"neighbors": "all"}`, `{"max_iter": 0}`, `[1]`} {
		_, _, err := learners.New(Name, json.RawMessage(p))
		var pe *learners.ParamError
		if !errors.As(err, &pe) {
			t.Errorf("%s: err = %v, want a ParamError", p, err)
		}
	}
}

// The tiny problem solved by brute force: n = 5 with the constraints binding.
func TestTinyAgainstBruteForce(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		x, kt := randomProblem(5, 2, 4, seed)
		for _, c := range []float64{1, 10} {
			ref := newReference(x, kt, 2, false, c, 1)
			want := ref.bruteForce(400000)
			l := &Learner{cfg: config{k: 2, c: c, budget: 1, tol: 1e-8, maxIter: 2000}}
			out, s, err := l.fit(context.Background(), &learners.Input{Features: x, Target: kt}, nil)
			if err != nil {
				t.Fatalf("seed %d C %g: %v", seed, c, err)
			}
			pBrute := ref.primal(want)
			pGot := ref.primal(out.Kernel) // recomputed independently
			if relDiff(pGot, pBrute) > 1e-4 || relDiff(out.Stats.Objective, pBrute) > 1e-4 {
				t.Fatalf("seed %d C %g: objective %.10g (reported %.10g), brute force %.10g", seed, c, pGot, out.Stats.Objective, pBrute)
			}
			if pGot < pBrute-1e-6*math.Max(1, math.Abs(pBrute)) && s.bestS == 1 {
				t.Logf("seed %d C %g: learner beats brute force by %g", seed, c, pBrute-pGot)
			}
			// The constraints must bind for this to be a test of the dual.
			act := 0
			for _, a := range s.alpha {
				if a > 0 {
					act++
				}
			}
			if act == 0 {
				t.Fatalf("seed %d C %g: no constraint binds", seed, c)
			}
		}
	}
}

// checkSolution verifies a converged fit against the problem definition.
func checkSolution(t *testing.T, name string, x *mat.Dense, kt *mat.SymDense, cfg config, out *learners.Output, s *solver) {
	t.Helper()
	ref := newReference(x, kt, cfg.k, cfg.mutual, cfg.c, cfg.budget)
	k := out.Kernel
	// Feasible: PSD, symmetric by type, tr(KK) <= B.
	if ok, err := kernelmath.IsPSD(k, 1e-9); err != nil || !ok {
		t.Fatalf("%s: K not PSD (%v)", name, err)
	}
	if nk := kernelmath.Frobenius(k, k); nk > ref.b*(1+1e-9) {
		t.Fatalf("%s: tr(KK) = %g > B = %g", name, nk, ref.b)
	}
	// The reported objective is the primal value of the returned K.
	if p := ref.primal(k); relDiff(out.Stats.Objective, p) > 1e-9 {
		t.Fatalf("%s: reported objective %g, primal of K %g", name, out.Stats.Objective, p)
	}
	// Weak duality and the certificate: D(alpha) <= P*, and the gap closed.
	d := ref.dual(s.alpha, s.pr.v)
	if gap := (out.Stats.Objective - d) / math.Max(1, math.Abs(out.Stats.Objective)); gap > cfg.tol*(1+1e-6) || gap < -1e-9 {
		t.Fatalf("%s: gap P - D recomputed = %g (tol %g)", name, gap, cfg.tol)
	}
	// KKT: alpha_e = C max(0, viol_e), i.e. the slack xi_e = max(0, viol_e)
	// equals alpha_e / C, to within 2% of the mean squared distance (the
	// accuracy a 1e-4 gap gives).
	for e := range ref.pairs {
		xi := math.Max(0, ref.dist(k, e)-ref.dd[e])
		if d := math.Abs(xi - s.alpha[e]/cfg.c); d > 0.02 {
			t.Fatalf("%s: pair %v: slack %g but alpha/C = %g", name, ref.pairs[e], xi, s.alpha[e]/cfg.c)
		}
	}
	// Violations are small against the distances they bound.
	for e := range ref.pairs {
		if v := ref.dist(k, e) - ref.dd[e]; v > 0.5 {
			t.Fatalf("%s: pair %v violates its distance by %g (mean d^2 = 1)", name, ref.pairs[e], v)
		}
	}
	// Optimality against the unlearned kernel: the visual kernel (centred
	// linear; for low rank its projection on the basis), at its best feasible
	// scale, has a primal value no better than the learned kernel's.
	vis := kernelmath.Center(kernelmath.Linear(x))
	if v := s.pr.v; v != nil {
		var a, b, c, d mat.Dense
		a.Mul(vis, v)
		b.Mul(v.T(), &a)
		c.Mul(v, &b)
		d.Mul(&c, v.T())
		for i := 0; i < ref.n; i++ {
			for j := i; j < ref.n; j++ {
				vis.SetSym(i, j, (d.At(i, j)+d.At(j, i))/2)
			}
		}
	}
	hi := math.Sqrt(ref.b / kernelmath.Frobenius(vis, vis))
	lo := 0.0
	for it := 0; it < 100; it++ { // ternary search on the convex P(s K_vis)
		a, b := lo+(hi-lo)/3, hi-(hi-lo)/3
		if ref.primal(scaledSym(vis, a)) < ref.primal(scaledSym(vis, b)) {
			hi = b
		} else {
			lo = a
		}
	}
	if pv := ref.primal(scaledSym(vis, lo)); out.Stats.Objective > pv+cfg.tol*math.Max(1, math.Abs(pv)) {
		t.Fatalf("%s: objective %g worse than the scaled visual kernel's %g", name, out.Stats.Objective, pv)
	}
	// Full rank: the learned kernel depends more on the tags than the
	// visual kernel scaled to the same norm (HSIC is scale dependent).
	if s.pr.v == nil {
		vis.ScaleSym(math.Sqrt(kernelmath.Frobenius(k, k)/kernelmath.Frobenius(vis, vis)), vis)
		if hk, hv := kernelmath.HSIC(k, kt), kernelmath.HSIC(vis, kt); !(hk > hv) {
			t.Fatalf("%s: HSIC(K, Kt) = %g not above the visual kernel's %g", name, hk, hv)
		}
	}
}

func TestConvergedSolutionAndHistory(t *testing.T) {
	x, kt := randomProblem(40, 3, 8, 11)
	for _, rank := range []int{0, 12} {
		cfg := config{k: 5, c: 10, budget: 1, rank: rank, tol: 1e-4, maxIter: 500}
		l := &Learner{cfg: cfg}
		var hist []step
		l.trace = func(s step) { hist = append(hist, s) }
		out, s, err := l.fit(context.Background(), &learners.Input{Features: x, Target: kt}, nil)
		if err != nil {
			t.Fatalf("rank %d: %v", rank, err)
		}
		if !out.Stats.Converged || out.Stats.Gap > cfg.tol || out.Stats.Iterations != len(hist)-1 {
			t.Fatalf("rank %d: stats %+v with %d history steps", rank, out.Stats, len(hist))
		}
		if hist[len(hist)-1].Phase != "dual" {
			t.Fatalf("rank %d: expected the dual to converge, ended in %s", rank, hist[len(hist)-1].Phase)
		}
		for i, h := range hist {
			if h.Dual > h.Best+1e-9*math.Max(1, math.Abs(h.Best)) {
				t.Fatalf("rank %d step %d: D = %g above the best primal %g (weak duality)", rank, i, h.Dual, h.Best)
			}
			if i == 0 {
				continue
			}
			if h.Dual < hist[i-1].Dual-1e-12*math.Abs(h.Dual) {
				t.Fatalf("rank %d step %d: dual decreased %g -> %g", rank, i, hist[i-1].Dual, h.Dual)
			}
			if h.Best > hist[i-1].Best || h.Bound < hist[i-1].Bound || h.Gap > hist[i-1].Gap {
				t.Fatalf("rank %d step %d: best primal / bound / gap not monotone", rank, i)
			}
		}
		checkSolution(t, "random", x, kt, cfg, out, s)
	}
}

// Low rank with m = n is the full problem, over every basis.
func TestLowRankFullEqualsFullRank(t *testing.T) {
	x, kt := randomProblem(30, 3, 6, 5)
	in := &learners.Input{Features: x, Target: kt}
	full, err := (&Learner{cfg: config{k: 4, c: 10, budget: 1, tol: 1e-9, maxIter: 3000}}).Fit(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, basis := range []string{"laplacian", "tags", "mixed"} {
		// 1e-8: a rotated basis (tags) does not reach 1e-9 within the cap.
		low, err := (&Learner{cfg: config{k: 4, c: 10, budget: 1, rank: 30, basis: basis, tol: 1e-8, maxIter: 3000}}).Fit(context.Background(), in)
		if err != nil {
			t.Fatalf("%s: %v", basis, err)
		}
		if d := relDiff(low.Stats.Objective, full.Stats.Objective); d > 1e-4 {
			t.Fatalf("%s: objective %g (rank n) vs %g (full): %g relative", basis, low.Stats.Objective, full.Stats.Objective, d)
		}
		if d := frobDiff(low.Kernel, full.Kernel) / math.Sqrt(kernelmath.Frobenius(full.Kernel, full.Kernel)); d > 1e-4 {
			t.Fatalf("%s: kernels differ by %g relative", basis, d)
		}
		// And a rank clamped above n is the same as rank n.
		over, err := (&Learner{cfg: config{k: 4, c: 10, budget: 1, rank: 100, basis: basis, tol: 1e-8, maxIter: 3000}}).Fit(context.Background(), in)
		if err != nil || relDiff(over.Stats.Objective, low.Stats.Objective) > 1e-9 {
			t.Fatalf("%s: rank 100: %v, objective %g vs %g", basis, err, over.Stats.Objective, low.Stats.Objective)
		}
	}
}

// Where the visual constraints are slack the optimum lies in the leading
// eigenspace of the centred tag kernel (Theorem 6.34 scales M_+ into the
// budget), so a tag basis of that rank reaches the full-rank objective,
// while a Laplacian basis of the same size does not.
func TestTagBasisHoldsTheSlackOptimum(t *testing.T) {
	x, kt := fewTags(60) // three distinct tag vectors: centred, M has rank 2
	in := &learners.Input{Features: x, Target: kt}
	cfg := config{k: 4, c: 10, budget: 1e-6, tol: 1e-9, maxIter: 3000, bestEffort: true}
	full, err := (&Learner{cfg: cfg}).Fit(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	objective := map[string]float64{}
	for _, basis := range []string{"tags", "laplacian"} {
		c := cfg
		c.rank, c.basis = 3, basis
		low, err := (&Learner{cfg: c}).Fit(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		objective[basis] = low.Stats.Objective
	}
	if d := relDiff(objective["tags"], full.Stats.Objective); d > 1e-6 {
		t.Fatalf("tag basis: objective %g, full rank %g (%g relative)", objective["tags"], full.Stats.Objective, d)
	}
	if !(objective["laplacian"] > objective["tags"]+1e-3*math.Abs(objective["tags"])) {
		t.Fatalf("laplacian basis: objective %g, not worse than the tag basis's %g (the primal is minimised)", objective["laplacian"], objective["tags"])
	}
}

// fewTags: n points in three visual blobs, tags from only 3 distinct vectors
// (mostly following the blob), the setting of spec A.4.
func fewTags(n int) (*mat.Dense, *mat.SymDense) {
	x := mat.NewDense(n, 2, nil)
	tg := mat.NewDense(n, 4, nil)
	vecs := [][]float64{{1, 0, 0, 0}, {0, 0.6, 0.8, 0}, {0, 0, 0.6, 0.8}}
	for i := 0; i < n; i++ {
		c := i % 3
		x.Set(i, 0, float64(2*c)+math.Sin(float64(7*i)))
		x.Set(i, 1, math.Cos(float64(5*i)))
		tv := c
		if i%4 == 0 {
			tv = (c + 1) % 3
		}
		tg.SetRow(i, vecs[tv])
	}
	return x, kernelmath.Linear(tg)
}

// Degenerate case (spec A.4): with few distinct tag vectors and a large
// budget the optimum lies inside tr(KK) <= B; it must be detected and solved
// (primal fallback) or reported, never returned silently unconverged.
func TestDegenerateInteriorOptimum(t *testing.T) {
	x, kt := fewTags(25)
	in := &learners.Input{Features: x, Target: kt}
	cfg := config{k: 5, c: 10, budget: 1000, tol: 1e-4, maxIter: 2000}
	l := &Learner{cfg: cfg}
	phases := map[string]int{}
	l.trace = func(s step) { phases[s.Phase]++ }
	out, s, err := l.fit(context.Background(), in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if phases["primal"] == 0 {
		t.Fatal("the interior optimum was not detected: no primal fallback")
	}
	ref := newReference(x, kt, cfg.k, false, cfg.c, cfg.budget)
	if nk := kernelmath.Frobenius(out.Kernel, out.Kernel); nk > 0.5*ref.b {
		t.Fatalf("tr(KK) = %g: not an interior optimum (B = %g); the test lost its point", nk, ref.b)
	}
	checkSolution(t, "degenerate", x, kt, cfg, out, s)
	// Against brute force (the interior optimum is the unconstrained-budget one).
	if want := ref.primal(ref.bruteForce(20000)); relDiff(out.Stats.Objective, want) > 1e-4 {
		t.Fatalf("objective %g, brute force %g", out.Stats.Objective, want)
	}
	// With the fallback capped, the fit says it did not converge.
	l = &Learner{cfg: config{k: 5, c: 10, budget: 1000, tol: 1e-4, maxIter: 30}}
	out, err = l.Fit(context.Background(), in)
	if !errors.Is(err, learners.ErrNotConverged) || out == nil || out.Stats.Converged {
		t.Fatalf("capped degenerate fit: err %v, output %+v", err, out)
	}
}

func TestNotConvergedIsNeverSilent(t *testing.T) {
	x, kt := randomProblem(40, 3, 8, 2)
	in := &learners.Input{Features: x, Target: kt}
	l := newLearner(t, `{"max_iter": 2}`)
	out, err := l.Fit(context.Background(), in)
	if !errors.Is(err, learners.ErrNotConverged) {
		t.Fatalf("err = %v, want learners.ErrNotConverged", err)
	}
	if out == nil || out.Stats.Converged || out.Stats.Gap <= 1e-4 || out.Kernel == nil {
		t.Fatalf("unconverged output %+v", out)
	}
	l = newLearner(t, `{"max_iter": 2, "best_effort": true}`)
	out, err = l.Fit(context.Background(), in)
	if err != nil || out == nil || out.Stats.Converged || out.Kernel == nil {
		t.Fatalf("best effort: err %v, output %+v", err, out)
	}
}

func TestBadInput(t *testing.T) {
	x, kt := randomProblem(6, 2, 3, 1)
	nan := mat.DenseCopyOf(x)
	nan.Set(2, 1, math.NaN())
	constant := mat.NewSymDense(6, nil)
	for i := 0; i < 6; i++ {
		for j := i; j < 6; j++ {
			constant.SetSym(i, j, 1)
		}
	}
	x1, kt1 := randomProblem(1, 2, 3, 1)
	cases := map[string]*learners.Input{
		"missing target":   {Features: x},
		"missing features": {Target: kt},
		"NaN features":     {Features: nan, Target: kt},
		"size mismatch":    {Features: x, Target: kernelmath.Linear(mat.NewDense(5, 2, nil))},
		"one point":        {Features: x1, Target: kt1},
		"empty":            {},
	}
	l, _, err := learners.New(Name, nil) // the registry checks the needs
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range cases {
		out, err := l.Fit(context.Background(), in)
		if !errors.Is(err, learners.ErrInput) || out != nil {
			t.Errorf("%s: err = %v, want ErrInput", name, err)
		}
	}
}

// Identical tags leave M = 0: the objective is (C/2) sum xi^2 >= 0, so the
// zero kernel is the exact optimum.
func TestConstantTagsGiveTheZeroKernel(t *testing.T) {
	x, _ := randomProblem(6, 2, 3, 1)
	constant := mat.NewSymDense(6, nil)
	for i := 0; i < 6; i++ {
		for j := i; j < 6; j++ {
			constant.SetSym(i, j, 1)
		}
	}
	out, err := newLearner(t, "").Fit(context.Background(), &learners.Input{Features: x, Target: constant})
	if err != nil || !out.Stats.Converged {
		t.Fatalf("err = %v, stats %+v", err, out.Stats)
	}
	if f := kernelmath.Frobenius(out.Kernel, out.Kernel); f != 0 {
		t.Fatalf("||K||^2 = %g, want 0", f)
	}
}

func TestSmallAndClampedInputs(t *testing.T) {
	for _, n := range []int{2, 3, 6} {
		x, _ := randomProblem(n, 2, 3, uint64(n))
		// Distinct tags: point i carries tag i mod 3.
		tags := mat.NewDense(n, 3, nil)
		for i := 0; i < n; i++ {
			tags.Set(i, i%3, 1)
		}
		kt := kernelmath.Linear(tags)
		for _, params := range []string{`{"k": 50}`, `{"k": 50, "neighbors": "mutual", "rank": 40}`, `{"k": 1, "neighbors": "mutual"}`} {
			out, err := newLearner(t, params).Fit(context.Background(), &learners.Input{Features: x, Target: kt})
			if err != nil {
				t.Fatalf("n %d %s: %v", n, params, err)
			}
			if out.Kernel.SymmetricDim() != n || !out.Stats.Converged {
				t.Fatalf("n %d %s: stats %+v", n, params, out.Stats)
			}
			if ok, _ := kernelmath.IsPSD(out.Kernel, 1e-9); !ok {
				t.Fatalf("n %d %s: kernel not PSD", n, params)
			}
		}
	}
}

func TestCancelledAndDeterministic(t *testing.T) {
	x, kt := randomProblem(40, 3, 8, 4)
	in := &learners.Input{Features: x, Target: kt}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newLearner(t, "").Fit(ctx, in); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v", err)
	}
	// Cancelled in the middle of the iterations.
	ctx, cancel = context.WithCancel(context.Background())
	l := newLearner(t, "")
	l.trace = func(s step) {
		if s.Iter == 2 {
			cancel()
		}
	}
	if _, err := l.Fit(ctx, in); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled mid-way: err = %v", err)
	}
	a, err := newLearner(t, `{"rank": 10}`).Fit(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newLearner(t, `{"rank": 10}`).Fit(context.Background(), in)
	if !mat.Equal(a.Kernel, b.Kernel) || a.Stats != b.Stats {
		t.Fatal("two fits differ")
	}
}

// Real data: a Corel5k window of 200 images sharing "sky" (the text-stage
// candidates of the query "sky"), full and low rank.
func TestCorel5kWindow(t *testing.T) {
	x, kt := corelWindow(t, "sky", 200)
	for _, rank := range []int{0, 10, 30} {
		cfg := config{k: 5, c: 10, budget: 1, rank: rank, tol: 1e-4, maxIter: 500}
		l := &Learner{cfg: cfg}
		out, s, err := l.fit(context.Background(), &learners.Input{Features: x, Target: kt}, nil)
		if err != nil {
			t.Fatalf("rank %d: %v", rank, err)
		}
		checkSolution(t, "corel5k sky", x, kt, cfg, out, s)
		ref := newReference(x, kt, cfg.k, false, cfg.c, cfg.budget)
		active, tight := 0, 0
		for e := range ref.pairs {
			if s.alpha[e] > 0 {
				active++
			}
			if ref.dist(out.Kernel, e) > 0.99*ref.dd[e] {
				tight++
			}
		}
		t.Logf("rank %d: %d iterations, gap %.2g, %d of %d visual constraints active (alpha > 0), %d at >= 99%% of their bound, HSIC %.4g",
			rank, out.Stats.Iterations, out.Stats.Gap, active, len(ref.pairs), tight, kernelmath.HSIC(out.Kernel, kt))
		if rank == 0 && active < len(ref.pairs)/20 {
			t.Fatalf("only %d constraints bind: the defaults do not make the visual constraints matter", active)
		}
	}
}

// Identical visual features: every d_ij is 0 (nothing to scale by), so the
// constraints pull all images together and only the slack lets the tags
// separate them a little.
func TestIdenticalFeatures(t *testing.T) {
	_, kt := randomProblem(20, 2, 4, 3)
	x := mat.NewDense(20, 3, nil)
	for _, params := range []string{``, `{"rank": 5}`} {
		out, err := newLearner(t, params).Fit(context.Background(), &learners.Input{Features: x, Target: kt})
		if err != nil || !out.Stats.Converged {
			t.Fatalf("%s: %v", params, err)
		}
		// xi = alpha / C is small against the unit of tag distances.
		for i := 1; i < 20; i++ {
			if d := out.Kernel.At(0, 0) + out.Kernel.At(i, i) - 2*out.Kernel.At(0, i); d > 0.5 {
				t.Fatalf("%s: distance %g between images with identical features", params, d)
			}
		}
	}
}

// The full-rank start alpha = 0 skips its factorisation (problem.atZero):
// its dual value, pair distances, gradient, best scaling and primal value
// are those the factorisation of A = M gives, to rounding, on a Corel5k
// window (or a synthetic one without the data) and on a random problem.
func TestStartWithoutFactorisation(t *testing.T) {
	x1, kt1, _ := window(t, 200)
	x2, kt2 := randomProblem(40, 3, 8, 2)
	for name, in := range map[string]*learners.Input{"window": {Features: x1, Target: kt1}, "random": {Features: x2, Target: kt2}} {
		pr, err := setup(in, nil, config{k: 5, c: 10, budget: 1, tol: 1e-4, maxIter: 500})
		if err != nil {
			t.Fatal(err)
		}
		ne := len(pr.pairs)
		zero, g1, t1, g2, t2 := make([]float64, ne), make([]float64, ne), make([]float64, ne), make([]float64, ne), make([]float64, ne)
		d1, err := pr.value(zero)
		if err != nil {
			t.Fatal(err)
		}
		_, p1, s1, err := pr.gradient(zero, g1, t1)
		if err != nil {
			t.Fatal(err)
		}
		d2, p2, s2 := pr.atZero(g2, t2)
		if relDiff(d2, d1) > 1e-12 || relDiff(p2, p1) > 1e-12 || math.Abs(s2-s1) > 1e-12 {
			t.Fatalf("%s: D %g / %g, P %g / %g, scaling %g / %g (shortcut / factorised)", name, d2, d1, p2, p1, s2, s1)
		}
		for e := range t1 {
			if math.Abs(t2[e]-t1[e]) > 1e-12*(1+math.Abs(t1[e])) || math.Abs(g2[e]-g1[e]) > 1e-12*(1+math.Abs(g1[e])) {
				t.Fatalf("%s: pair %d: t %g / %g, g %g / %g", name, e, t2[e], t1[e], g2[e], g1[e])
			}
		}
	}
}

// When no constraint binds at the start (a budget so small that K(0) keeps
// every visual neighbour within its distance), alpha = 0 is optimal: the fit
// stops there, and the kernel it returns, the start's candidate factorised
// at the end, is sqrt(B) M / ||M||_F, M the centred tag kernel, computed
// here by hand: PSD, proportional to M, with tr(KK) = B.
func TestOptimumAtTheStart(t *testing.T) {
	x, kt := randomProblem(40, 3, 8, 2)
	in := &learners.Input{Features: x, Target: kt}
	cfg := config{k: 5, c: 10, budget: 1e-6, tol: 1e-4, maxIter: 500}
	out, s, err := (&Learner{cfg: cfg}).fit(context.Background(), in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Stats.Iterations != 0 || !out.Stats.Converged || s.evals != 1 {
		t.Fatalf("stats %+v after %d factorisations, want 0 iterations and the one factorisation of the end", out.Stats, s.evals)
	}
	n := x.RawMatrix().Rows
	m := mat.NewSymDense(n, nil)
	mean, rows := 0.0, make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			rows[i] += kt.At(i, j) / float64(n)
		}
		mean += rows[i] / float64(n)
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			m.SetSym(i, j, kt.At(i, j)-rows[i]-rows[j]+mean)
		}
	}
	want := scaledSym(m, s.pr.sqrtB/math.Sqrt(kernelmath.Frobenius(m, m)))
	if d := frobDiff(out.Kernel, want); d > 1e-9*s.pr.sqrtB {
		t.Fatalf("kernel differs from sqrt(B) M / ||M|| by %g (||K|| = %g)", d, s.pr.sqrtB)
	}
	if psd, err := kernelmath.IsPSD(out.Kernel, 1e-8); err != nil || !psd {
		t.Fatalf("kernel not PSD (err %v)", err)
	}
}
