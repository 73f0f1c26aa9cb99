package twolayer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"gonum.org/v1/gonum/mat"
)

func newLearner(t testing.TB, name, params string) *Learner {
	t.Helper()
	l, _, err := learners.New(name, json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	return l.(*learners.Resolved).Plugin().(*Learner)
}

// rings returns n points on two noisy concentric circles (radius 1, class
// 0, and 2, class 1), the last quarter unlabelled, and the given kernels
// of them: "linear" (useless here), "noise" (a Gaussian of random
// features) and "rbf" (a Gaussian of the points).
func rings(n int, seed uint64, kernels ...string) *learners.Input {
	r := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, 2, nil)
	noise := mat.NewDense(n, 2, nil)
	in := &learners.Input{Features: x, Labels: make([]int, n)}
	for i := range n {
		c := i % 2
		a := 2 * math.Pi * r.Float64()
		rad := 1 + float64(c) + 0.15*r.NormFloat64()
		x.Set(i, 0, rad*math.Cos(a))
		x.Set(i, 1, rad*math.Sin(a))
		noise.Set(i, 0, r.NormFloat64())
		noise.Set(i, 1, r.NormFloat64())
		in.Labels[i] = c
		if i >= 3*n/4 {
			in.Labels[i] = learners.Unlabeled
		}
	}
	for _, k := range kernels {
		switch k {
		case "linear":
			in.Kernels = append(in.Kernels, kernelmath.Linear(x))
		case "noise":
			in.Kernels = append(in.Kernels, kernelmath.RBF(noise, 2))
		case "rbf":
			in.Kernels = append(in.Kernels, kernelmath.RBF(x, 1))
		}
	}
	return in
}

// setup builds the problem of a fit for white-box tests.
func setup(t *testing.T, l *Learner, in *learners.Input) *problem {
	t.Helper()
	tasks, ks, err := l.cfg.svm.Setup(in)
	if err != nil {
		t.Fatal(err)
	}
	return newProblem(l.cfg, tasks, ks)
}

// The ascent direction of eq. 4.5 is minus the gradient of F, checked by
// central differences of F (each a fresh SVM solved to 1e-10), with two
// classes and with three (the summed one-vs-rest extension).
func TestGradientMatchesFiniteDifferences(t *testing.T) {
	for _, classes := range []int{2, 3} {
		in := rings(40, 1, "linear", "noise", "rbf")
		for i := range in.Labels {
			if in.Labels[i] != learners.Unlabeled {
				in.Labels[i] = i % classes
			}
		}
		p := setup(t, newLearner(t, Name, `{"c": 0.5, "svm_eps": 1e-10}`), in)
		mu := []float64{0.7, 1.3, 2.1}
		pt, err := p.eval(context.Background(), mu, p.bufs[0])
		if err != nil {
			t.Fatal(err)
		}
		g := p.ascent(pt)
		const h = 1e-5
		for k := range mu {
			var f [2]float64
			for s, sign := range []float64{1, -1} {
				m := append([]float64(nil), mu...)
				m[k] += sign * h
				q, err := p.eval(context.Background(), m, p.bufs[1])
				if err != nil {
					t.Fatal(err)
				}
				f[s] = q.f
			}
			fd := -(f[0] - f[1]) / (2 * h)
			if math.Abs(g[k]-fd) > 1e-5*(1+math.Abs(fd)) {
				t.Errorf("%d classes: g_%d = %.9g, central difference %.9g", classes, k, g[k], fd)
			}
		}
	}
}

// F never increases from one accepted step to the next, in twolayer and
// across the rounds of twolayer-inf; Stats.Objective is the last F.
func TestObjectiveNonIncreasing(t *testing.T) {
	for _, name := range []string{Name, NameInf} {
		l := newLearner(t, name, `{"c": 10}`)
		var steps []step
		l.trace = func(s step) { steps = append(steps, s) }
		out, err := l.Fit(context.Background(), rings(60, 2, "linear", "noise"))
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) < 3 {
			t.Fatalf("%s: %d steps", name, len(steps))
		}
		for i := 1; i < len(steps); i++ {
			if steps[i].objective > steps[i-1].objective {
				t.Errorf("%s: F rose from %.12g to %.12g at step %d (round %d)", name, steps[i-1].objective, steps[i].objective, i, steps[i].round)
			}
		}
		if last := steps[len(steps)-1].objective; out.Stats.Objective != last {
			t.Errorf("%s: Stats.Objective %g, last step %g", name, out.Stats.Objective, last)
		}
	}
}

// Kernel is exp(sum_t mu_t K_t / tr_L K_t) over every point, the
// generated Gaussians included, from the reported weights and thetas.
func TestKernelIsTheLearnedExp(t *testing.T) {
	for _, name := range []string{Name, NameInf} {
		in := rings(50, 3, "linear", "noise")
		res, err := newLearner(t, name, `{"c": 10}`).FitResult(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if name == NameInf && len(res.Generated) == 0 {
			t.Fatalf("twolayer-inf generated no Gaussian on the rings")
		}
		n := in.N()
		tr := make([]float64, len(in.Kernels))
		for k, kt := range in.Kernels {
			for i, l := range in.Labels {
				if l != learners.Unlabeled {
					tr[k] += kt.At(i, i)
				}
			}
		}
		for i := range n {
			for j := range n {
				e := 0.0
				for k, kt := range in.Kernels {
					if res.Weights[k] < 0 {
						t.Fatalf("%s: weight %g", name, res.Weights[k])
					}
					e += res.Weights[k] * kt.At(i, j) / tr[k]
				}
				d := 0.0
				for f := range 2 {
					v := in.Features.At(i, f) - in.Features.At(j, f)
					d += v * v
				}
				for _, g := range res.Generated {
					e += g.Weight * g.Scale * math.Exp(-g.Theta*d)
				}
				if want := math.Exp(e); math.Abs(res.Kernel.At(i, j)-want) > 1e-12*want {
					t.Fatalf("%s: K[%d,%d] = %.15g, want %.15g", name, i, j, res.Kernel.At(i, j), want)
				}
			}
		}
	}
}

// With tight tolerances B1 ends at a first-order stationary point of F
// over mu >= 0: g_t ~ 0 where mu_t > 0, g_t <= 0 where mu_t = 0.
func TestStationary(t *testing.T) {
	l := newLearner(t, Name, `{"c": 10, "svm_eps": 1e-9, "tol": 1e-12, "mu_tol": 1e-9, "max_iter": 2000}`)
	in := rings(40, 4, "linear", "noise", "rbf")
	out, err := l.Fit(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	p := setup(t, l, in)
	pt, err := p.eval(context.Background(), out.Weights, p.bufs[0])
	if err != nil {
		t.Fatal(err)
	}
	for k, g := range p.ascent(pt) {
		if out.Weights[k] > 0 && math.Abs(g) > 1e-4 || out.Weights[k] == 0 && g > 1e-4 {
			t.Errorf("mu_%d = %g, g_%d = %g", k, out.Weights[k], k, g)
		}
	}
	if out.Stats.Gap > 1e-4 {
		t.Errorf("Stats.Gap (stationarity) %g", out.Stats.Gap)
	}
	if out.Weights[2] == 0 {
		t.Errorf("the informative Gaussian has weight 0: %v", out.Weights)
	}
}

// The pricing objective's derivative in log theta (eq. 4.7, sign fixed)
// matches central differences, for both stopping rules.
func TestPricingDerivative(t *testing.T) {
	for _, stop := range []string{"derivative", "quadratic"} {
		l := newLearner(t, NameInf, fmt.Sprintf(`{"c": 10, "stop": %q}`, stop))
		in := rings(40, 5, "linear")
		p := setup(t, l, in)
		pt, err := p.eval(context.Background(), []float64{2}, p.bufs[0])
		if err != nil {
			t.Fatal(err)
		}
		pr := newPricing(p, kernelmath.SqDistances(in.Features))
		pr.solve(pt)
		for _, z := range []float64{-3, -1, 0.5, 2} {
			_, dj := pr.value(z)
			const h = 1e-6
			jp, _ := pr.value(z + h)
			jm, _ := pr.value(z - h)
			if fd := (jp - jm) / (2 * h); math.Abs(dj-fd) > 1e-6*(1+math.Abs(fd)) {
				t.Errorf("%s: dJ/dlog theta at %g = %.10g, central difference %.10g", stop, z, dj, fd)
			}
		}
	}
}

// On the rings a linear kernel cannot separate the classes: twolayer-inf
// adds Gaussians, which lowers F well below twolayer's, and leaves the
// input alone (its kernel list has spare capacity here).
func TestInfGeneratesKernels(t *testing.T) {
	in := rings(80, 6, "linear", "rbf")
	spare := in.Kernels[1]
	in.Kernels = in.Kernels[:1]
	base, err := newLearner(t, Name, `{"c": 10}`).Fit(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := newLearner(t, NameInf, `{"c": 10}`).FitResult(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Generated) == 0 || res.Output.Stats.Objective > 0.8*base.Stats.Objective {
		t.Errorf("generated %v, F %g against twolayer's %g", res.Generated, res.Output.Stats.Objective, base.Stats.Objective)
	}
	for _, g := range res.Generated {
		if !(g.Theta > 0) || g.Weight < 0 || g.Scale != 1/60.0 {
			t.Errorf("generated %+v", g)
		}
	}
	if len(in.Kernels) != 1 || in.Kernels[:2][1] != spare {
		t.Error("the fit wrote to the input's kernel list")
	}
}

// A fit stopped by max_iter returns its result and ErrNotConverged.
func TestNotConverged(t *testing.T) {
	for _, name := range []string{Name, NameInf} {
		out, err := newLearner(t, name, `{"max_iter": 1, "tol": 0, "mu_tol": 0}`).Fit(context.Background(), rings(40, 7, "linear", "rbf"))
		if !errors.Is(err, learners.ErrNotConverged) || out == nil || out.Stats.Converged {
			t.Errorf("%s: err %v, output %v", name, err, out)
		}
	}
}

// Kernels too large for the exponential are an error, not bad input and
// not a panic.
func TestOverflow(t *testing.T) {
	in := rings(20, 8, "linear")
	in.Kernels[0].ScaleSym(1e4, in.Kernels[0])
	_, err := newLearner(t, Name, `{"normalize": "none"}`).Fit(context.Background(), in)
	if !errors.Is(err, errOverflow) || errors.Is(err, learners.ErrInput) {
		t.Errorf("got %v, want the overflow error", err)
	}
}
