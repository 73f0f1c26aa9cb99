package cmvu

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/kit/npkl"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

func newLearner(t *testing.T, params string) *Learner {
	t.Helper()
	l, _, err := learners.New(Name, json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	return l.(*learners.Resolved).Plugin().(*Learner)
}

func TestRegistered(t *testing.T) {
	s, ok := learners.Lookup(Name)
	if !ok || s.Kind != learners.KindEmbedding || s.Needs != learners.NeedKernels|learners.NeedLabels {
		t.Fatalf("spec %+v", s)
	}
	want := config{c: 3, budget: 1, k: 5, dim: 2, maxIter: 500, tol: 1e-4, solver: npkl.Auto, seed: 1}
	if got := newLearner(t, "").cfg; got != want {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
}

func TestNeedsTwoClasses(t *testing.T) {
	x := mat.NewDense(6, 1, []float64{0, 1, 2, 3, 4, 5})
	in := &learners.Input{Kernels: []*mat.SymDense{kernelmath.Linear(x)}, Labels: []int{0, 0, learners.Unlabeled, 0, 0, 0}}
	if _, err := newLearner(t, "").Fit(context.Background(), in); !errors.Is(err, learners.ErrInput) {
		t.Fatalf("err = %v, want ErrInput", err)
	}
}

// labelledSpiral returns one turn of the spiral r = t with the first half
// of the points (along the curve) labelled 0 and the second half 1.
func labelledSpiral(n int) *learners.Input {
	x := mat.NewDense(n, 2, nil)
	labels := make([]int, n)
	for i := 0; i < n; i++ {
		t := math.Pi + 2*math.Pi*float64(i)/float64(n-1)
		x.Set(i, 0, t*math.Cos(t))
		x.Set(i, 1, t*math.Sin(t))
		if i >= n/2 {
			labels[i] = 1
		}
	}
	return &learners.Input{Kernels: []*mat.SymDense{kernelmath.Linear(x)}, Labels: labels}
}

// distanceError is the mean relative error of the neighbour distances of k
// against those of the input.
func distanceError(in *learners.Input, k *mat.SymDense) float64 {
	d0, d := kernelmath.KernelDistances(in.Kernels[0]), kernelmath.KernelDistances(k)
	pairs := kernelmath.KNNPairs(d0, 5, false)
	s := 0.0
	for _, p := range pairs {
		s += math.Abs(d.At(p.I, p.J)-d0.At(p.I, p.J)) / d0.At(p.I, p.J)
	}
	return s / float64(len(pairs))
}

// rankCorrelation is Spearman's correlation of v with its index.
func rankCorrelation(v []float64) float64 {
	idx := make([]float64, len(v))
	rank := make([]float64, len(v))
	for i := range v {
		idx[i] = float64(i)
		for j := range v {
			if v[j] < v[i] {
				rank[i]++
			}
		}
	}
	return stat.Correlation(rank, idx, nil)
}

// A spiral coloured by which half of the curve a point lies on: the
// HSIC term pulls the halves apart, the distance constraints keep the curve
// connected, so the curve unfolds along the labels: the first coordinate
// orders the points along the curve (KPCA: rank correlation 0.5). Raising C
// makes the neighbour distances more faithful.
func TestColouredSpiralUnfolds(t *testing.T) {
	in := labelledSpiral(60)
	kpca, err := npkl.Embed(in.Kernels[0], 2)
	if err != nil {
		t.Fatal(err)
	}
	prevErr := math.Inf(1)
	for _, c := range []float64{1, 3, 10} {
		out, err := newLearner(t, `{"C": `+formatFloat(c)+`}`).Fit(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		rc := math.Abs(rankCorrelation(mat.Col(nil, 0, out.Embedding)))
		de := distanceError(in, out.Kernel)
		t.Logf("C = %g: %+v; rank correlation along the curve %.3f (KPCA %.3f); neighbour distance error %.3f",
			c, out.Stats, rc, math.Abs(rankCorrelation(mat.Col(nil, 0, kpca))), de)
		if rc < 0.85 {
			t.Fatalf("C = %g: the first coordinate does not follow the curve (rank correlation %.3f)", c, rc)
		}
		if de >= prevErr {
			t.Fatalf("C = %g: distance error %.3f did not fall (was %.3f)", c, de, prevErr)
		}
		prevErr = de
	}
}

func formatFloat(v float64) string { b, _ := json.Marshal(v); return string(b) }

// Two classes lying along the direction of least variance: KPCA's first
// coordinate follows the irrelevant high-variance direction; CMVU's
// separates the classes.
func TestSeparatesClasses(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 80
	x := mat.NewDense(n, 2, nil)
	labels := make([]int, n)
	for i := 0; i < n; i++ {
		labels[i] = i % 2
		x.Set(i, 0, 3*r.NormFloat64())
		x.Set(i, 1, float64(2*labels[i]-1)*0.5+0.05*r.NormFloat64())
	}
	// Half the points of each class unlabelled: their rows of Y are zero.
	observed := append([]int(nil), labels...)
	for i := range observed {
		if i%4 == 0 || i%4 == 3 {
			observed[i] = learners.Unlabeled
		}
	}
	kpca, err := npkl.Embed(kernelmath.Linear(x), 2)
	if err != nil {
		t.Fatal(err)
	}
	base := splitAccuracy(mat.Col(nil, 0, kpca), labels)
	for _, c := range []struct {
		name   string
		labels []int
		want   float64
	}{{"all labelled", labels, 0.97}, {"half labelled", observed, 0.85}} {
		in := &learners.Input{Kernels: []*mat.SymDense{kernelmath.Linear(x)}, Labels: c.labels}
		out, err := newLearner(t, "").Fit(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		acc := splitAccuracy(mat.Col(nil, 0, out.Embedding), labels)
		t.Logf("%s: accuracy of the best threshold on the first coordinate (all points): CMVU %.3f, KPCA %.3f (%+v)", c.name, acc, base, out.Stats)
		if acc < c.want || base > 0.75 {
			t.Fatalf("%s: CMVU %.3f (want >= %g), KPCA %.3f (want <= 0.75)", c.name, acc, c.want, base)
		}
	}
}

// splitAccuracy is the accuracy of the best rule "class 1 iff v > t" (or
// its reverse) over all thresholds t.
func splitAccuracy(v []float64, labels []int) float64 {
	best := 0
	for _, t := range v {
		right := 0
		for i, x := range v {
			if (x > t) == (labels[i] == 1) {
				right++
			}
		}
		best = max(best, right, len(v)-right)
	}
	return float64(best) / float64(len(v))
}
