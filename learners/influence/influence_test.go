package influence

import (
	"context"
	"math"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// TestInfluenceByHand: points 0, 1, 3 on a line have distance sums 4, 3, 5
// (total 12), so u = (1/3, 1/4, 5/12) and mu = (2/3, 3/4, 7/12); squared,
// 10, 5, 13 (total 28).
func TestInfluenceByHand(t *testing.T) {
	x := mat.NewDense(3, 1, []float64{0, 1, 3})
	for _, tc := range []struct {
		squared bool
		want    []float64
	}{{false, []float64{2.0 / 3, 3.0 / 4, 7.0 / 12}}, {true, []float64{18.0 / 28, 23.0 / 28, 15.0 / 28}}} {
		got := Influence(x, 3, tc.squared)
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-15 {
				t.Fatalf("squared=%v: mu = %v, want %v", tc.squared, got, tc.want)
			}
		}
	}
	if mu := Influence(nil, 4, false); mu[0] != 0.75 || mu[3] != 0.75 {
		t.Fatalf("without features mu = %v, want 1 - 1/n", mu)
	}
}

// problem is three kernels over 12 points: linear, degree-2 polynomial and
// a Gaussian, with the random-walk influence.
func problem(t *testing.T, n int) (*Problem, *mat.Dense) {
	t.Helper()
	x := learnertest.Problem(n, 3).Features
	k := []*mat.SymDense{kernelmath.Linear(x), kernelmath.Polynomial(x, 2, 1), kernelmath.RBF(x, 4)}
	return NewProblem(k, Influence(x, n, false)), x
}

// TestSIdentity is spec 3.5: with unit diagonals and sum mu = n - 1,
// s_l = 2n(n-1) - 2 mu'K'_l 1.
func TestSIdentity(t *testing.T) {
	p, x := problem(t, 12)
	n := 12
	mu := Influence(x, n, false)
	if s := floats.Sum(mu); math.Abs(s-float64(n-1)) > 1e-12 {
		t.Fatalf("sum mu = %v, want n - 1", s)
	}
	for l, k := range p.Kernels {
		var k1 mat.VecDense
		k1.MulVec(k, mat.NewVecDense(n, ones(n)))
		want := 2*float64(n*(n-1)) - 2*floats.Dot(mu, k1.RawVector().Data)
		if math.Abs(p.S[l]-want) > 1e-9*want {
			t.Fatalf("s_%d = %v, want %v", l, p.S[l], want)
		}
	}
}

func ones(n int) []float64 {
	o := make([]float64, n)
	for i := range o {
		o[i] = 1
	}
	return o
}

// TestConvexIsSelection: the LP's optimum is the vertex of least s, the
// same as gonum's simplex on min s'alpha, 1'alpha = 1, alpha >= 0.
func TestConvexIsSelection(t *testing.T) {
	p, _ := problem(t, 12)
	sol := p.Convex()
	best := floats.MinIdx(p.S)
	for l, a := range sol.Alpha {
		if want := map[bool]float64{true: 1, false: 0}[l == best]; a != want {
			t.Fatalf("alpha = %v, want e_%d (s = %v)", sol.Alpha, best, p.S)
		}
	}
	opt, x, err := lp.Simplex(p.S, mat.NewDense(1, 3, []float64{1, 1, 1}), []float64{1}, 1e-12, nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(opt-sol.Objective) > 1e-9*math.Abs(opt) || math.Abs(x[best]-1) > 1e-9 {
		t.Fatalf("simplex: %v at %v; closed form %v at %v", opt, x, sol.Objective, sol.Alpha)
	}
	// Ties share the weight.
	tied := &Problem{Kernels: p.Kernels, S: []float64{2, 1, 1}}
	if a := tied.Convex().Alpha; a[0] != 0 || a[1] != 0.5 || a[2] != 0.5 {
		t.Fatalf("tied alpha = %v, want (0, 1/2, 1/2)", a)
	}
}

// TestAffineTwoKernels checks the cutting planes against spec 3.6's exact
// b = 2 reference: alpha = (t, 1-t), the feasible t an interval found by
// bisection on lambda_min, the optimum at the end that s_1 - s_2 favours.
func TestAffineTwoKernels(t *testing.T) {
	full, _ := problem(t, 12)
	p := &Problem{Kernels: full.Kernels[:2], S: full.S[:2]}
	sol, err := p.Affine(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lam := func(tt float64) float64 {
		v, _, err := p.minEigen([]float64{tt, 1 - tt})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// The end of the feasible interval beyond the better vertex.
	dir := 1.0 // s_1 < s_2: t grows past 1
	start := 1.0
	if p.S[0] > p.S[1] {
		dir, start = -1, 0
	}
	inside, outside := start, start+dir
	for lam(outside) >= 0 {
		outside += dir
	}
	for math.Abs(outside-inside) > 1e-13 {
		mid := (inside + outside) / 2
		if lam(mid) >= 0 {
			inside = mid
		} else {
			outside = mid
		}
	}
	if math.Abs(sol.Alpha[0]-inside) > 1e-6 || math.Abs(sol.Alpha[0]+sol.Alpha[1]-1) > 1e-12 {
		t.Fatalf("cutting planes: alpha = %v; reference t = %v", sol.Alpha, inside)
	}
	if v := lam(sol.Alpha[0]); v < -1e-12 || v > 1e-6 {
		t.Fatalf("lambda_min at the optimum = %g, want ~0 (the PSD boundary)", v)
	}
	if sol.Objective > p.Convex().Objective {
		t.Fatalf("affine objective %v above the convex one %v", sol.Objective, p.Convex().Objective)
	}
}

// TestAffineThreeKernels: a feasible (PSD, unit-diagonal) kernel on the
// boundary, no worse than the convex optimum.
func TestAffineThreeKernels(t *testing.T) {
	p, _ := problem(t, 12)
	sol, err := p.Affine(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(floats.Sum(sol.Alpha)-1) > 1e-9 {
		t.Fatalf("sum alpha = %v", floats.Sum(sol.Alpha))
	}
	lam, _, err := p.minEigen(sol.Alpha)
	if err != nil {
		t.Fatal(err)
	}
	if lam < -psdSlack || lam > 1e-6 {
		t.Fatalf("lambda_min = %g, want ~0", lam)
	}
	k := p.Combine(sol.Alpha)
	for i := range 12 {
		if math.Abs(k.At(i, i)-1) > 1e-12 {
			t.Fatalf("K_%d%d = %v, want 1", i, i, k.At(i, i))
		}
	}
	if sol.Objective > p.Convex().Objective+1e-9 {
		t.Fatalf("affine objective %v above the convex one %v", sol.Objective, p.Convex().Objective)
	}
}

// TestRewardsFlatKernels is spec 3.9: a Gaussian far wider than the data
// (K' ~ 11') has s ~ 0 and is selected, useless as it is.
func TestRewardsFlatKernels(t *testing.T) {
	x := learnertest.Problem(12, 4).Features
	ks := []*mat.SymDense{kernelmath.Linear(x), kernelmath.RBF(x, 1), kernelmath.RBF(x, 1e6)}
	l, _, err := learners.New(Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.Fit(context.Background(), &learners.Input{Kernels: ks, Features: x})
	if err != nil {
		t.Fatal(err)
	}
	if out.Weights[2] != 1 {
		t.Fatalf("weights %v: want the flat kernel alone", out.Weights)
	}
}
