package umkl

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
	"gonum.org/v1/gonum/mat"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.12g, want %.12g (tol %g)", what, got, want, tol)
	}
}

func newLearner(t testing.TB, params string) *Learner {
	t.Helper()
	l, _, err := learners.New(Name, json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	return l.(*learners.Resolved).Plugin().(*Learner)
}

// fitTrace fits and returns the output and the recorded steps.
func fitTrace(t testing.TB, l *Learner, in *learners.Input) (*learners.Output, []step) {
	t.Helper()
	var steps []step
	l.trace = func(s step) { steps = append(steps, s) }
	out, err := l.Fit(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return out, steps
}

// goldenInput is spec B.10: six raw points in R^2 and two Gaussian kernels
// exp(-|x-y|^2 / (2 sigma^2)), sigma = 1 and 3, each divided by its trace 6.
func goldenInput() *learners.Input {
	x := mat.NewDense(6, 2, []float64{0, 0, 1.0, 0.2, 0.4, 1.1, 2.0, 1.8, 2.5, 0.9, 1.6, 2.6})
	var ks []*mat.SymDense
	for _, sigma := range []float64{1, 3} {
		k := kernelmath.RBF(x, 2*sigma*sigma)
		k.ScaleSym(1.0/6, k)
		ks = append(ks, k)
	}
	return &learners.Input{Kernels: ks, Features: x}
}

// The golden trace of spec B.10 (an independent Python implementation):
// gamma = 1, B = 3, self allowed, ties to the lowest index, mu0 = (1/2, 1/2).
func TestGoldenTrace(t *testing.T) {
	out, steps := fitTrace(t, newLearner(t, `{"gamma": 1, "basis": 3}`), goldenInput())
	if len(steps) != 1 {
		t.Fatalf("%d mu-steps, want 1 (the second D-step repeats the sets)", len(steps))
	}
	s := steps[0]
	wantSets := [][]int{{0, 1, 2}, {1, 4, 2}, {2, 1, 5}, {3, 5, 4}, {4, 3, 5}, {5, 3, 4}}
	for i := range wantSets {
		if !slices.Equal(s.sets[i], wantSets[i]) {
			t.Errorf("B_%d = %v (selection order), want %v", i, s.sets[i], wantSets[i])
		}
	}
	const tol = 1e-8
	near(t, "Obj after the D-step", s.objD, 7.38765881127, tol)
	near(t, "W_11", s.w.At(0, 0), 2.63055350997, tol)
	near(t, "W_12", s.w.At(0, 1), 3.85676566966, tol)
	near(t, "W_22", s.w.At(1, 1), 5.83678722285, tol)
	near(t, "z_1", s.z[0], -13.6434128973, tol)
	near(t, "z_2", s.z[1], -16.9563878937, tol)
	near(t, "mu_1", s.mu[0], 0.429198757378, tol)
	near(t, "mu_2", s.mu[1], 0.570801242622, tol)
	near(t, "Obj after the mu-step", s.obj, 7.38576945739, tol)
	// 2 Obj = J(mu) + sum_i P_ii, sum_i P_ii = 26.03.
	near(t, "2 Obj - J", 2*s.obj-s.qp.Objective, 26.03, 1e-10)
	if s.qp.Gap > 1e-10 {
		t.Errorf("Frank-Wolfe gap %g", s.qp.Gap)
	}
	near(t, "final mu_1", out.Weights[0], 0.429198757378, tol)
	near(t, "final mu_2", out.Weights[1], 0.570801242622, tol)
	if !out.Stats.Converged || out.Stats.Iterations != 1 {
		t.Errorf("stats %+v", out.Stats)
	}
	near(t, "Stats.Objective", out.Stats.Objective, 7.38576945739, tol)
	// Kernel = sum mu_t K_t.
	in := goldenInput()
	for i := range 6 {
		for j := range 6 {
			want := out.Weights[0]*in.Kernels[0].At(i, j) + out.Weights[1]*in.Kernels[1].At(i, j)
			near(t, fmt.Sprintf("K[%d,%d]", i, j), out.Kernel.At(i, j), want, 1e-15)
		}
	}
}

// randomInput returns n standardised random points in d dimensions, in
// three loose groups, and the spec's 13(d+1) base kernels.
func randomInput(n, d int, seed uint64) *learners.Input {
	r := rand.New(rand.NewPCG(seed, 5))
	x := mat.NewDense(n, d, nil)
	for i := range n {
		for f := range d {
			v := r.NormFloat64()
			if f == i%3 {
				v += 2
			}
			x.Set(i, f, v)
		}
	}
	z, _, _ := kernelmath.Standardize(x)
	return &learners.Input{Kernels: kernelmath.MKLBaseKernels(z), Features: z}
}

// jOf returns J(d) = d'Qd + c'd for point i and basis set, from scratch.
func jOf(pr *problem, k []float64, i int, set []int) float64 {
	n := pr.n
	v := 0.0
	for _, a := range set {
		v += k[i*n+a] * (2*pr.gamma*pr.dist[i*n+a] - 2*pr.p[i*n+a])
		for _, b := range set {
			v += k[i*n+a] * k[i*n+b] * pr.p[a*n+b]
		}
	}
	return v
}

// The incremental greedy equals a greedy that recomputes J(d + e_j) - J(d)
// from scratch for every candidate.
func TestGreedyMatchesRecomputation(t *testing.T) {
	for _, exclude := range []bool{false, true} {
		in := randomInput(30, 4, 1)
		pr, err := newProblem(in, config{gamma: 3, basis: 5, excludeSelf: exclude, normalize: true})
		if err != nil {
			t.Fatal(err)
		}
		mu := make([]float64, pr.m)
		r := rand.New(rand.NewPCG(2, 3))
		for t := range mu {
			mu[t] = r.Float64()
		}
		k := make([]float64, pr.n*pr.n)
		pr.combine(mu, k)
		sets := pr.dstep(k)
		for i := range pr.n {
			var want []int
			for range pr.b {
				best, bestInc := -1, math.Inf(1)
				for j := range pr.n {
					if slices.Contains(want, j) || exclude && j == i {
						continue
					}
					if inc := jOf(pr, k, i, append(slices.Clone(want), j)) - jOf(pr, k, i, want); inc < bestInc-1e-12 {
						best, bestInc = j, inc
					}
				}
				want = append(want, best)
			}
			if !slices.Equal(sets[i], want) {
				t.Errorf("exclude_self=%v: B_%d = %v, recomputed %v", exclude, i, sets[i], want)
			}
		}
	}
}

// On a larger problem (d = 5 > B = 4, so the P[B,B] factor is truncated,
// and 78 kernels): W equals its definition sum_i (k_t,i o d_i)' P
// (k_s,i o d_i), 2 Obj = J + tr P, the mu-step never raises Obj, the
// Frank-Wolfe gap of every mu-step is <= 1e-10 max(1, |J|), and the weights
// are on the simplex.
func TestMuStepProperties(t *testing.T) {
	in := randomInput(40, 5, 7)
	l := newLearner(t, `{"gamma": 10, "basis": 4}`)
	out, steps := fitTrace(t, l, in)
	if len(steps) < 2 {
		t.Fatalf("only %d mu-steps", len(steps))
	}
	pr, err := newProblem(in, l.cfg)
	if err != nil {
		t.Fatal(err)
	}
	trP := 0.0
	for i := range pr.n {
		trP += pr.p[i*pr.n+i]
	}
	for it, s := range steps {
		name := fmt.Sprintf("step %d", it)
		if it == 0 {
			for a := range pr.m {
				for b := a; b < pr.m; b++ {
					want := 0.0
					for i, set := range s.sets {
						for _, j := range set {
							for _, l := range set {
								want += pr.base(a, i, j) * pr.p[j*pr.n+l] * pr.base(b, i, l)
							}
						}
					}
					near(t, fmt.Sprintf("%s W[%d,%d]", name, a, b), s.w.At(a, b), want, 1e-12*(1+math.Abs(want)))
				}
			}
		}
		near(t, name+" 2 Obj - J", 2*s.obj-s.qp.Objective, trP, 1e-10*trP)
		if s.obj > s.objD+1e-12*math.Abs(s.objD) {
			t.Errorf("%s: the mu-step raised Obj from %.15g to %.15g", name, s.objD, s.obj)
		}
		if s.qp.Gap > 1e-10*max(1, math.Abs(s.qp.Objective)) {
			t.Errorf("%s: Frank-Wolfe gap %g", name, s.qp.Gap)
		}
	}
	sum := 0.0
	for _, w := range out.Weights {
		if w < 0 {
			t.Errorf("negative weight %g", w)
		}
		sum += w
	}
	near(t, "sum of weights", sum, 1, 1e-12)
	best := math.Inf(1)
	for _, s := range steps {
		best = min(best, s.obj)
	}
	near(t, "Stats.Objective is the best", out.Stats.Objective, best, 0)
}

func TestExcludeSelf(t *testing.T) {
	_, steps := fitTrace(t, newLearner(t, `{"gamma": 1, "basis": 3, "exclude_self": true}`), goldenInput())
	for _, s := range steps {
		for i, set := range s.sets {
			if slices.Contains(set, i) {
				t.Errorf("B_%d = %v holds %d", i, set, i)
			}
		}
	}
}

// normalize = "trace" makes the result independent of the kernels' scales.
func TestTraceNormalisation(t *testing.T) {
	in := goldenInput()
	scaled := &learners.Input{Features: in.Features}
	for t, k := range in.Kernels {
		s := mat.NewSymDense(6, nil)
		s.ScaleSym(float64(7*t+3), k)
		scaled.Kernels = append(scaled.Kernels, s)
	}
	a, _ := fitTrace(t, newLearner(t, `{"gamma": 1, "basis": 3}`), in)
	b, _ := fitTrace(t, newLearner(t, `{"gamma": 1, "basis": 3}`), scaled)
	for i := range a.Weights {
		near(t, "weight", b.Weights[i], a.Weights[i], 1e-12)
	}
	// The zero kernel is accepted as it is (it adds nothing); a non-zero
	// kernel with trace 0 is indefinite and cannot be normalised.
	zero := &learners.Input{Features: in.Features, Kernels: []*mat.SymDense{mat.NewSymDense(6, nil), in.Kernels[0]}}
	out, err := newLearner(t, ``).Fit(context.Background(), zero)
	if err != nil || math.Abs(out.Weights[0]+out.Weights[1]-1) > 1e-12 {
		t.Errorf("zero kernel: %v, weights %v", err, out)
	}
	indefinite := mat.NewSymDense(6, nil)
	indefinite.SetSym(0, 1, 1)
	bad := &learners.Input{Features: in.Features, Kernels: []*mat.SymDense{indefinite, in.Kernels[0]}}
	if _, err := newLearner(t, ``).Fit(context.Background(), bad); !errors.Is(err, learners.ErrInput) {
		t.Errorf("zero-trace non-zero kernel: got %v, want ErrInput", err)
	}
}

func TestCancelledMidway(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	l := newLearner(t, `{"gamma": 10, "basis": 4, "tol": 0}`)
	l.trace = func(step) { cancel() }
	if _, err := l.Fit(ctx, randomInput(30, 3, 9)); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}
