package mkl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

func fit(t *testing.T, name, params string, in *learners.Input) *learners.Output {
	t.Helper()
	l, _, err := learners.New(name, json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.Fit(context.Background(), in)
	if err != nil {
		t.Fatalf("%s %s: %v", name, params, err)
	}
	return out
}

// problem returns n labelled points (class i%2, the last quarter
// unlabelled) and m Gaussian kernels exp(-|x-y|^2 / 2) of increasing
// noise: kernel t sees the class mean +-1 plus Gaussian noise of deviation
// 0.5 + t/2 in two dimensions.
func problem(n, m int, seed uint64) *learners.Input {
	r := rand.New(rand.NewPCG(seed, 11))
	in := &learners.Input{Labels: make([]int, n)}
	for i := range n {
		in.Labels[i] = i % 2
		if i >= 3*n/4 {
			in.Labels[i] = learners.Unlabeled
		}
	}
	for t := range m {
		x := mat.NewDense(n, 2, nil)
		for i := range n {
			x.Set(i, 0, float64(2*(i%2)-1)+(0.5+float64(t)/2)*r.NormFloat64())
			x.Set(i, 1, r.NormFloat64())
		}
		in.Kernels = append(in.Kernels, kernelmath.RBF(x, 2))
	}
	return in
}

// quadratic solves the SVM on sum_t theta_t K_t / tr_L(K_t) (tr_L the
// trace over the labelled points) from scratch and returns 1'a and
// q_t = b'(K_t / tr_L) b, b = a o y.
func quadratic(t *testing.T, in *learners.Input, theta []float64, c, eps float64) (float64, []float64) {
	t.Helper()
	var pts []int
	var y []int
	for i, l := range in.Labels {
		if l != learners.Unlabeled {
			pts = append(pts, i)
			y = append(y, 2*l-1)
		}
	}
	k := mat.NewSymDense(len(pts), nil)
	norm := make([]float64, len(in.Kernels))
	for tk, kt := range in.Kernels {
		for _, i := range pts {
			norm[tk] += kt.At(i, i)
		}
		for a, i := range pts {
			for b := a; b < len(pts); b++ {
				k.SetSym(a, b, k.At(a, b)+theta[tk]*kt.At(i, pts[b])/norm[tk])
			}
		}
	}
	m, err := kernelmath.TrainSVM(context.Background(), k, y, kernelmath.SVMOptions{C: c, Eps: eps})
	if err != nil {
		t.Fatal(err)
	}
	sumA := floats.Sum(m.Alpha)
	q := make([]float64, len(in.Kernels))
	for tk, kt := range in.Kernels {
		for a, i := range pts {
			for b, j := range pts {
				q[tk] += m.Alpha[a] * float64(y[a]) * m.Alpha[b] * float64(y[b]) * kt.At(i, j) / norm[tk]
			}
		}
	}
	return sumA, q
}

func TestUniformExact(t *testing.T) {
	in := problem(20, 3, 1)
	in.Labels = nil // uniform needs no labels
	out := fit(t, Uniform, "", in)
	for _, w := range out.Weights {
		if w != 1.0/3 {
			t.Fatalf("weights %v, want 1/3 each", out.Weights)
		}
	}
	for i := range 20 {
		for j := range 20 {
			want := (in.Kernels[0].At(i, j) + in.Kernels[1].At(i, j) + in.Kernels[2].At(i, j)) / 3
			if math.Abs(out.Kernel.At(i, j)-want) > 1e-15 {
				t.Fatalf("K[%d,%d] = %g, want %g", i, j, out.Kernel.At(i, j), want)
			}
		}
	}
	if !out.Stats.Converged {
		t.Error("not converged")
	}
}

// At convergence the L_p weights are the fixed point of the analytic
// update for the SVM they induce, recomputed from scratch: |theta|_p = 1
// and theta_t = q_t^(1/(p-1)) / |q^(1/(p-1))|_p; the reported objective is
// the SVM dual and the gap its Hölder gap.
func TestLpMKLFixedPoint(t *testing.T) {
	in := problem(40, 4, 2)
	for _, p := range []float64{1.5, 2, 3} {
		params := fmt.Sprintf(`{"p": %g, "c": 2, "svm_eps": 1e-8, "tol": 1e-10, "gap_tol": 0, "max_iter": 2000}`, p)
		out := fit(t, LpMKL, params, in)
		name := fmt.Sprintf("p = %g", p)
		if norm := floats.Norm(out.Weights, p); math.Abs(norm-1) > 1e-12 {
			t.Errorf("%s: |theta|_p = %.15g", name, norm)
		}
		sumA, q := quadratic(t, in, out.Weights, 2, 1e-8)
		fixed := make([]float64, len(q))
		for k, v := range q {
			fixed[k] = math.Pow(v, 1/(p-1))
		}
		floats.Scale(1/floats.Norm(fixed, p), fixed)
		for k := range fixed {
			if math.Abs(out.Weights[k]-fixed[k]) > 1e-6 {
				t.Errorf("%s: theta_%d = %.9g, fixed point %.9g", name, k, out.Weights[k], fixed[k])
			}
		}
		if d := sumA - 0.5*floats.Dot(out.Weights, q); math.Abs(out.Stats.Objective-d) > 1e-9*d {
			t.Errorf("%s: objective %.12g, SVM dual %.12g", name, out.Stats.Objective, d)
		}
		if out.Stats.Gap > 1e-14 {
			t.Errorf("%s: gap %g", name, out.Stats.Gap)
		}
	}
}

// Xu et al.'s level method against a brute-force minimum of D(theta) over
// the two-kernel simplex (a grid of 1001 points, each a fresh SVM): same
// optimum to tol, and the gap it reports is below tol.
func TestLevelMatchesGrid(t *testing.T) {
	in := problem(40, 2, 3)
	const c = 2
	out := fit(t, Level, `{"c": 2, "svm_eps": 1e-8, "tol": 1e-5, "max_iter": 300}`, in)
	if out.Stats.Gap > 1e-5 || !out.Stats.Converged {
		t.Errorf("stats %+v", out.Stats)
	}
	if s := floats.Sum(out.Weights); math.Abs(s-1) > 1e-12 || floats.Min(out.Weights) < 0 {
		t.Errorf("weights %v not on the simplex", out.Weights)
	}
	best, bestAt := math.Inf(1), 0.0
	for i := 0; i <= 1000; i++ {
		th := float64(i) / 1000
		sumA, q := quadratic(t, in, []float64{th, 1 - th}, c, 1e-8)
		if d := sumA - 0.5*(th*q[0]+(1-th)*q[1]); d < best {
			best, bestAt = d, th
		}
	}
	if rel := (out.Stats.Objective - best) / best; math.Abs(rel) > 1e-5 {
		t.Errorf("level objective %.10g, grid minimum %.10g at theta_1 = %g", out.Stats.Objective, best, bestAt)
	}
	if math.Abs(out.Weights[0]-bestAt) > 2e-3 {
		t.Errorf("theta_1 = %g, grid minimiser %g", out.Weights[0], bestAt)
	}
}

// On 12 kernels the level method closes its gap to the default tol well
// within the iteration cap.
func TestLevelGap(t *testing.T) {
	out := fit(t, Level, `{"c": 10}`, problem(60, 12, 4))
	if !out.Stats.Converged || out.Stats.Gap > 1e-3 || out.Stats.Iterations >= 100 {
		t.Errorf("stats %+v", out.Stats)
	}
}

// The lower-bound LP on a hand-solved instance: cuts 3 - 3 theta_1 -
// theta_3 and 3 - 3 theta_2 - theta_3; their max is at least their mean,
// 1.5 + theta_3 / 2, with equality at (1/2, 1/2, 0).
func TestLevelLP(t *testing.T) {
	cuts := []cut{{alphaSum: 3, q: []float64{6, 0, 2}}, {alphaSum: 3, q: []float64{0, 6, 2}}}
	l, theta, err := levelLP(cuts, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.5, 0.5, 0}
	if math.Abs(l-1.5) > 1e-12 || !floats.EqualApprox(theta, want, 1e-12) {
		t.Errorf("L = %g at %v, want 1.5 at %v", l, theta, want)
	}
}

// Cuts tied at the vertex that vertexBasis starts from, with entries of
// order 1e3: the tied cut's slack, 0 in exact arithmetic, comes out of the
// basis solve a little below gonum's -1e-13 for some of them, and
// lp.Simplex panicked. levelLP must instead return the LP's minimum, which
// gonum's phase one (no supplied basis) computes independently.
func TestLevelLPTiedCuts(t *testing.T) {
	const m = 6
	for seed := range uint64(100) {
		r := rand.New(rand.NewPCG(seed, 9))
		base := cut{alphaSum: 1000 * r.Float64(), q: make([]float64, m)}
		for i := range base.q {
			base.q[i] = 2000 * r.Float64()
		}
		var cuts []cut
		for range 2 + r.IntN(5) {
			// alphaSum - q_0/2 is the same for every cut: tied at e_0.
			c := cut{alphaSum: base.alphaSum, q: slices.Clone(base.q)}
			d := 100 * r.Float64()
			c.alphaSum += d
			c.q[0] += 2 * d
			for i := 1; i < m; i++ {
				c.q[i] += 300 * r.Float64()
			}
			cuts = append(cuts, c)
		}
		l, theta, err := levelLP(cuts, m)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		k := len(cuts)
		a := mat.NewDense(k+1, m+2+k, nil)
		b := make([]float64, k+1)
		c := make([]float64, m+2+k)
		c[m], c[m+1] = 1, -1
		for j, cu := range cuts {
			for i, v := range cu.q {
				a.Set(j, i, -0.5*v)
			}
			a.Set(j, m, -1)
			a.Set(j, m+1, 1)
			a.Set(j, m+2+j, 1)
			b[j] = -cu.alphaSum
		}
		for i := range m {
			a.Set(k, i, 1)
		}
		b[k] = 1
		want, _, err := lp.Simplex(c, a, b, 1e-12, nil)
		if err != nil {
			t.Fatalf("seed %d: phase one: %v", seed, err)
		}
		model := math.Inf(-1)
		for _, cu := range cuts {
			model = max(model, cu.alphaSum-0.5*floats.Dot(cu.q, theta))
		}
		if math.Abs(l-want) > 1e-9*math.Abs(want) || math.Abs(model-l) > 1e-9*math.Abs(l) {
			t.Errorf("seed %d: L = %.12g, model at theta %.12g, phase one %.12g", seed, l, model, want)
		}
	}
}

// dykstra projects c onto the simplex intersected with the half-spaces
// a_j'x <= b_j by Dykstra's alternating projections, an independent (and
// slow) reference for projectLevel.
func dykstra(c []float64, a [][]float64, b []float64) []float64 {
	x := append([]float64(nil), c...)
	incr := make([][]float64, len(b)+1)
	for i := range incr {
		incr[i] = make([]float64, len(c))
	}
	y := make([]float64, len(c))
	for range 30000 {
		for s := range incr {
			for t := range y {
				y[t] = x[t] + incr[s][t]
			}
			prev := append([]float64(nil), y...)
			if s == 0 {
				kernelmath.ProjectSimplex(y)
			} else if v := floats.Dot(a[s-1], y) - b[s-1]; v > 0 {
				floats.AddScaled(y, -v/floats.Dot(a[s-1], a[s-1]), a[s-1])
			}
			for t := range y {
				incr[s][t] = prev[t] - y[t]
			}
			copy(x, y)
		}
	}
	return x
}

func TestProjectLevel(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 20 {
		m, k := 3+trial%5, 1+trial%4
		c := make([]float64, m)
		for i := range c {
			c[i] = r.Float64()
		}
		kernelmath.ProjectSimplex(c)
		x0 := make([]float64, m)
		x0[trial%m] = 1 // a vertex, as the LP returns
		if trial%2 == 0 {
			for i := range x0 {
				x0[i] = r.Float64()
			}
			kernelmath.ProjectSimplex(x0)
		}
		a := make([][]float64, k)
		b := make([]float64, k)
		for j := range a {
			a[j] = make([]float64, m)
			for i := range a[j] {
				a[j][i] = -r.Float64() * 4 // cut normals -q/2 <= 0, as in the level method
			}
			b[j] = floats.Dot(a[j], x0) + 0.1*r.Float64()
		}
		got, err := projectLevel(c, x0, a, b)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		want := dykstra(c, a, b)
		if !floats.EqualApprox(got, want, 1e-7) {
			t.Errorf("trial %d (m %d, k %d): projection %v, Dykstra %v", trial, m, k, got, want)
		}
		if s := floats.Sum(got); math.Abs(s-1) > 1e-12 || floats.Min(got) < 0 {
			t.Errorf("trial %d: %v not on the simplex", trial, got)
		}
		for j := range a {
			if v := floats.Dot(a[j], got) - b[j]; v > 1e-12 {
				t.Errorf("trial %d: cut %d violated by %g", trial, j, v)
			}
		}
	}
}

// A fit that stops at max_iter returns its output and an error wrapping
// ErrNotConverged.
func TestNotConverged(t *testing.T) {
	in := problem(40, 4, 7)
	for _, name := range []string{LpMKL, Level} {
		l, _, err := learners.New(name, json.RawMessage(`{"max_iter": 1, "tol": 1e-12}`))
		if err != nil {
			t.Fatal(err)
		}
		out, err := l.Fit(context.Background(), in)
		if !errors.Is(err, learners.ErrNotConverged) || out == nil || out.Stats.Converged || out.Stats.Iterations != 1 {
			t.Errorf("%s: err %v, output %v", name, err, out)
		}
	}
}
