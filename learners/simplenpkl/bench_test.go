package simplenpkl_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kernelrank/kernelrank/internal/metrics"
	"github.com/kernelrank/kernelrank/learners"
	_ "github.com/kernelrank/kernelrank/learners/cmvu"
	"github.com/kernelrank/kernelrank/learners/kit/kernelmath"
	"github.com/kernelrank/kernelrank/learners/kit/npkl"
	_ "github.com/kernelrank/kernelrank/learners/mve"
	"github.com/kernelrank/kernelrank/learners/simplenpkl"
	_ "github.com/kernelrank/kernelrank/learners/spe"
	"gonum.org/v1/gonum/mat"
)

var allLosses = []string{"linear", "square-hinge", "square", "hinge"}

// fit builds a learner and fits it, accepting a fit that stopped at its cap.
func fit(b *testing.B, name, params string, in *learners.Input) *learners.Output {
	l, _, err := learners.New(name, []byte(params))
	if err != nil {
		b.Fatal(err)
	}
	out, err := l.Fit(context.Background(), in)
	if err != nil && !errors.Is(err, learners.ErrNotConverged) {
		b.Fatal(err)
	}
	return out
}

// pairAccuracy clusters a kernel with kernel k-means and scores it with the
// pairwise accuracy of the thesis.
func pairAccuracy(b *testing.B, k *mat.SymDense, labels []int, classes int) float64 {
	c, err := kernelmath.KernelKMeans(context.Background(), k, classes, kernelmath.KMeansOptions{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	return metrics.PairwiseAccuracy(labels, c.Labels)
}

// BenchmarkFit times one SimpleNPKL fit per loss (defaults otherwise: the
// kNN graph on the standardised features) on iris, wine and ionosphere, with
// the pairs of the thesis protocol (random pairs until 70% of the points
// are connected components, spec 3.10.1; seed 1). It reports the Protocol 1
// iterations and the pairwise accuracy of kernel k-means on the kernel.
func BenchmarkFit(b *testing.B) {
	for _, set := range []string{"iris", "wine_recognition", "ionosphere"} {
		x, labels, classes := loadUCI(b, set)
		must, cannot, err := simplenpkl.SampleConstraints(labels, 0.7, 1, simplenpkl.AllPairs)
		if err != nil {
			b.Fatal(err)
		}
		in := &learners.Input{Features: x, MustLink: must, CannotLink: cannot}
		for _, loss := range allLosses {
			b.Run(fmt.Sprintf("%s/n=%d/%s", set, len(labels), loss), func(b *testing.B) {
				params := fmt.Sprintf(`{"loss": %q}`, loss)
				b.ReportAllocs()
				var out *learners.Output
				for b.Loop() {
					out = fit(b, simplenpkl.Name, params, in)
				}
				b.ReportMetric(float64(out.Stats.Iterations), "iters")
				b.ReportMetric(100*pairAccuracy(b, out.Kernel, labels, classes), "pairacc%")
			})
		}
	}
}

// BenchmarkA1a is the scalability run of Table 3.7 on a1a: N in {400,
// 800, 1605} (seeded random subsets below 1,605), 4,104 x N / 1,605 random
// pairs (the thesis' a1a count), k = 50, B = N, C = 1, the kNN graph on
// the raw binary features (graph_input=kernel, the linear kernel), the linear and square
// hinge losses. It reports the pairwise accuracy of kernel k-means on the
// learned kernel and, for comparison, on the linear kernel (k-means). Run
// with -benchtime=1x and compare ns/op across N for the growth.
func BenchmarkA1a(b *testing.B) {
	x, labels, classes := loadA1a(b)
	_, d := x.Dims()
	for _, n := range []int{400, 800, 1605} {
		xs := mat.NewDense(n, d, nil)
		ls := make([]int, n)
		for r, i := range rand.New(rand.NewPCG(uint64(n), 0xa1a)).Perm(len(labels))[:n] {
			xs.SetRow(r, x.RawRowView(i))
			ls[r] = labels[i]
		}
		pairs := int(math.Round(4104 * float64(n) / 1605))
		must, cannot, err := simplenpkl.SamplePairs(ls, pairs, 1)
		if err != nil {
			b.Fatal(err)
		}
		base := kernelmath.Linear(xs)
		in := &learners.Input{Kernels: []*mat.SymDense{base}, MustLink: must, CannotLink: cannot}
		kmeans := 100 * pairAccuracy(b, base, ls, classes)
		for _, loss := range []string{"linear", "square-hinge"} {
			b.Run(fmt.Sprintf("N=%d/%s", n, loss), func(b *testing.B) {
				params := fmt.Sprintf(`{"loss": %q, "k": 50, "B": %d, "C": 1, "graph_input": "kernel"}`, loss, n)
				b.ReportAllocs()
				var out *learners.Output
				for b.Loop() {
					out = fit(b, simplenpkl.Name, params, in)
				}
				b.ReportMetric(float64(out.Stats.Iterations), "iters")
				b.ReportMetric(100*pairAccuracy(b, out.Kernel, ls, classes), "pairacc%")
				b.ReportMetric(kmeans, "kmeans-pairacc%")
			})
		}
	}
}

// BenchmarkEigensolvers times one evaluation of the closed form (the
// linear loss) on a1a (N = 1,605, k = 50, 4,104 pairs, C = 1, B = N) with
// the dense partial eigensolver and with Lanczos, keeping every positive
// eigenpair or Prop. 3.27's rank estimate (127 for m = 8,208 ordered pairs)
// or 32: the measurement behind npkl.AutoDenseMax.
func BenchmarkEigensolvers(b *testing.B) {
	x, labels, _ := loadA1a(b)
	n := len(labels)
	must, cannot, err := simplenpkl.SamplePairs(labels, 4104, 1)
	if err != nil {
		b.Fatal(err)
	}
	pairs, t, err := simplenpkl.Constraints(must, cannot)
	if err != nil {
		b.Fatal(err)
	}
	g := npkl.NormalizedAdjacency(n, kernelmath.KNNPairs(kernelmath.KernelDistances(kernelmath.Linear(x)), 50, false))
	pataki := int((math.Sqrt(8*float64(2*len(pairs))+1) - 1) / 2)
	for _, c := range []struct {
		solver npkl.Eigensolver
		rank   int
	}{{npkl.Dense, 0}, {npkl.Dense, pataki}, {npkl.Lanczos, pataki}, {npkl.Lanczos, 32}} {
		b.Run(fmt.Sprintf("%v/max_rank=%d", c.solver, c.rank), func(b *testing.B) {
			pr := &npkl.Problem{Base: npkl.NegLaplacian(g), Pairs: pairs, Kind: npkl.Entry,
				B: float64(n), P: 2, MaxRank: c.rank, Solver: c.solver, Seed: 1}
			b.ReportAllocs()
			var k npkl.Factor
			for b.Loop() {
				if k, _, err = npkl.Evaluate(pr, t); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(k.Lambda)), "eigenpairs")
		})
	}
}

// BenchmarkEmbeddings times the three SimpleNPKL embeddings at their
// defaults on the protocol of Tables 3.8-3.9: 100 random points of the two
// largest wine classes (raw features, linear base kernel; half the labels
// for CMVU). The thesis reports 0.34 s (MVE+NPKL) and 0.51 s (SPE+NPKL).
func BenchmarkEmbeddings(b *testing.B) {
	x, labels, _ := loadUCI(b, "wine_recognition")
	count := map[int]int{}
	for _, l := range labels {
		count[l]++
	}
	var two []int // the rows of the two largest classes
	for i, l := range labels {
		if count[l] != min(count[0], count[1], count[2]) {
			two = append(two, i)
		}
	}
	_, d := x.Dims()
	xs := mat.NewDense(100, d, nil)
	ls := make([]int, 100)
	for r, i := range rand.New(rand.NewPCG(1, 0xe3b)).Perm(len(two))[:100] {
		xs.SetRow(r, x.RawRowView(two[i]))
		ls[r] = labels[two[i]]
		if r%2 == 1 {
			ls[r] = learners.Unlabeled
		}
	}
	in := &learners.Input{Kernels: []*mat.SymDense{kernelmath.Linear(xs)}}
	for _, name := range []string{"cmvu", "mve", "spe"} {
		b.Run(name, func(b *testing.B) {
			in := *in
			if name == "cmvu" {
				in.Labels = ls
			}
			b.ReportAllocs()
			var out *learners.Output
			for b.Loop() {
				out = fit(b, name, "", &in)
			}
			b.ReportMetric(float64(out.Stats.Iterations), "iters")
		})
	}
}
