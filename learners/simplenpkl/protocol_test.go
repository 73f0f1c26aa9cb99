package simplenpkl_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kernelrank/kernelrank/internal/metrics"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/learners/simplenpkl"
	"gonum.org/v1/gonum/mat"
)

// The clustering protocol of Table 3.2 (spec 3.10.1) on a fast subset: per
// repetition random pairs until 70% of the points are connected components,
// SimpleNPKL (square hinge loss, defaults) on the linear kernel of the raw
// features, kernel k-means with as many clusters as classes, pairwise
// accuracy; against kernel k-means on the linear kernel itself (the
// thesis' k-means column). The thesis reports iris 97.4 (SHL) vs 84.5
// (k-means) and wine 85.0 vs 71.2; its wine has 12 features of unstated
// preprocessing, and on the raw 13 (proline, in the hundreds, dominates the
// Euclidean kNN graph) SimpleNPKL does not beat k-means, so only iris is
// asserted.
func TestTable32Protocol(t *testing.T) {
	const reps = 3
	for _, name := range []string{"iris", "wine_recognition"} {
		x, labels, classes := loadUCI(t, name)
		base := learners.Linear(x)
		var accKM, accSHL float64
		for rep := 0; rep < reps; rep++ {
			seed := uint64(rep + 1)
			must, cannot, err := simplenpkl.SampleConstraints(labels, 0.7, seed, simplenpkl.AllPairs)
			if err != nil {
				t.Fatal(err)
			}
			km, err := learners.KernelKMeans(context.Background(), base, classes, learners.KMeansOptions{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			l, _, err := learners.New(simplenpkl.Name, nil)
			if err != nil {
				t.Fatal(err)
			}
			out, err := l.Fit(context.Background(), &learners.Input{Kernels: []*mat.SymDense{base}, MustLink: must, CannotLink: cannot})
			if err != nil && !errors.Is(err, learners.ErrNotConverged) {
				t.Fatal(err)
			}
			kk, err := learners.KernelKMeans(context.Background(), out.Kernel, classes, learners.KMeansOptions{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			accKM += metrics.PairwiseAccuracy(labels, km.Labels) / reps
			accSHL += metrics.PairwiseAccuracy(labels, kk.Labels) / reps
		}
		t.Logf("%s (%d repetitions): pairwise accuracy kernel k-means %.1f%%, SimpleNPKL-SHL + kernel k-means %.1f%%", name, reps, 100*accKM, 100*accSHL)
		if name == "iris" && (accSHL < 0.9 || accSHL < accKM+0.05) {
			t.Fatalf("iris: SimpleNPKL-SHL %.3f does not beat kernel k-means %.3f clearly (thesis: 97.4 vs 84.5)", accSHL, accKM)
		}
	}
}
