package twolayer_test

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
	"github.com/kernelrank/kernelrank/learners/kit/learnertest"
	"github.com/kernelrank/kernelrank/learners/mkl"
	"github.com/kernelrank/kernelrank/learners/twolayer"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// The supervised MKL learners side by side: the baselines of learners/mkl
// and the two-layer learners.
var supervised = []string{mkl.LpMKL, mkl.Level, twolayer.Name, twolayer.NameInf}

func fit(t *testing.T, name, params string, in *learners.Input) *learners.Output {
	t.Helper()
	l, _, err := learners.New(name, json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.Fit(context.Background(), in)
	if err != nil && !(errors.Is(err, learners.ErrNotConverged) && out != nil) {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// informative returns n points, half of them labelled, and m Gaussian
// kernels exp(-|x-y|^2 / 2d) of d-dimensional features: those of kernel 0
// separate the classes (means -1 and +1 on every coordinate, deviation
// 1.5), those of kernels 1..m-1 are independent noise. Features (for
// twolayer-inf) are those of kernels 0 and 1.
func informative(n, m, d int, seed uint64) (*learners.Input, []int) {
	r := rand.New(rand.NewPCG(seed, 21))
	truth := make([]int, n)
	in := &learners.Input{Labels: make([]int, n), Features: mat.NewDense(n, 2*d, nil)}
	for t := range m {
		x := mat.NewDense(n, d, nil)
		for i := range n {
			truth[i] = i % 2
			for f := range d {
				v := r.NormFloat64()
				if t == 0 {
					v = float64(2*truth[i]-1) + 1.5*v
				}
				x.Set(i, f, v)
				if t < 2 {
					in.Features.Set(i, t*d+f, v)
				}
			}
		}
		in.Kernels = append(in.Kernels, kernelmath.RBF(x, 2*float64(d)))
	}
	for i := range n {
		in.Labels[i] = truth[i]
		if i >= n/2 {
			in.Labels[i] = learners.Unlabeled
		}
	}
	return in, truth
}

// One informative kernel among ten of noise, on three draws of 160
// points: every MKL learner gives it most of its weight, measured in the
// norm it constrains or penalises (|theta|_2^2 for lpmkl's default p = 2,
// which spreads weight by design; the sum for the others), and beats the
// uniform combination on the held-out half by 5 points or more on
// average. C = 1: with C = 10 the two-layer learners also weight the noise
// kernels, whose near-identity parts raise the training margin of
// exp(sum_t mu_t K_t) for an L1 price of 1 per unit (a benefit that grows
// with the duals, so with C).
func TestInformativeKernel(t *testing.T) {
	const c, draws = 1, 3
	acc := map[string]float64{}
	for seed := range uint64(draws) {
		in, truth := informative(160, 11, 3, seed)
		acc[mkl.Uniform] += learnertest.HeldOutAccuracy(t, fit(t, mkl.Uniform, "", in).Kernel, in.Labels, truth, c) / draws
		for _, name := range supervised {
			out := fit(t, name, fmt.Sprintf(`{"c": %d}`, c), in)
			w := slices.Clone(out.Weights)
			if name == mkl.LpMKL {
				floats.Mul(w, w)
			}
			if w[0] <= 0.5*floats.Sum(w) {
				t.Errorf("%s, draw %d: weights %.3g, want most on kernel 0", name, seed, out.Weights)
			}
			acc[name] += learnertest.HeldOutAccuracy(t, out.Kernel, in.Labels, truth, c) / draws
		}
	}
	for _, name := range supervised {
		t.Logf("%-13s mean held-out accuracy %.1f%% (uniform %.1f%%)", name, acc[name], acc[mkl.Uniform])
		if acc[name] < acc[mkl.Uniform]+5 {
			t.Errorf("%s: mean held-out accuracy %.1f%%, uniform %.1f%%", name, acc[name], acc[mkl.Uniform])
		}
	}
}

// The thesis' protocol (§4.5.1) on ionosphere, three random 50/50 splits
// with C = 100 (the thesis chooses C by 5-fold CV over 10^-2..10^2; the CV
// of internal/eval picks 10 or 100 on these unit-trace kernels). Table 4.2
// reports, over 20 splits: MKL^level 91.7 +- 1.9, LpMKL 92.6 +- 1.4
// (best p), 2LMKL 92.3 +- 1.5, 2LMKL^Inf 94.4 +- 0.9. Each mean here must
// lie within 3 of the thesis' (three splits vary by about 2-3 points).
// twolayer-inf starts, as in the thesis, from the 13 kernels on all
// features.
func TestIonosphere(t *testing.T) {
	if testing.Short() {
		t.Skip("real-data protocol: skipped with -short")
	}
	x, y := learnertest.LIBSVMSet(t, "ionosphere_scale")
	thesis := map[string]float64{mkl.LpMKL: 92.6, mkl.Level: 91.7, twolayer.Name: 92.3, twolayer.NameInf: 94.4}
	acc := map[string][]float64{}
	for seed := range uint64(3) {
		s := learnertest.NewMKLSplit(x, y, seed)
		for _, name := range append([]string{mkl.Uniform}, supervised...) {
			in := &learners.Input{Kernels: s.Kernels, Labels: s.Labels, Features: s.Features}
			params := `{"c": 100}`
			switch name {
			case mkl.Uniform:
				params = ""
			case twolayer.NameInf:
				in.Kernels = s.Kernels[:13]
			}
			acc[name] = append(acc[name], s.Accuracy(t, fit(t, name, params, in).Kernel, 100))
		}
	}
	for _, name := range append([]string{mkl.Uniform}, supervised...) {
		mean := floats.Sum(acc[name]) / 3
		want, ok := thesis[name]
		if !ok { // AvgKernel is not in Table 4.2
			t.Logf("%-13s %.1f%% (splits %.1f)", name, mean, acc[name])
			continue
		}
		t.Logf("%-13s %.1f%% (splits %.1f), thesis %.1f%%", name, mean, acc[name], want)
		if math.Abs(mean-want) > 3 {
			t.Errorf("%s: mean accuracy %.1f%%, thesis %.1f%%", name, mean, want)
		}
	}
}
