package hsicnpk

import (
	"context"
	"fmt"
	"testing"

	"github.com/kernelrank/kernelrank/learners"
)

// BenchmarkFit200 times one fit over a re-ranking window of n = 200
// candidates: the Corel5k images tagged "sky" (or, without the data, a
// synthetic window with the same structure), full rank and low rank. The
// product targets are 150 ms (full) and 15 ms (m <= 30) per query.
func BenchmarkFit200(b *testing.B) {
	x, kt, src := window(b, 200)
	in := &learners.Input{Features: x, Target: kt}
	for _, rank := range []int{0, 10, 30} {
		b.Run(fmt.Sprintf("%s/rank=%d", src, rank), func(b *testing.B) {
			l := &Learner{cfg: config{k: 5, c: 10, budget: 1, rank: rank, tol: 1e-4, maxIter: 500}}
			b.ReportAllocs()
			var it int
			for i := 0; i < b.N; i++ {
				out, err := l.Fit(context.Background(), in)
				if err != nil {
					b.Fatal(err)
				}
				it = out.Stats.Iterations
			}
			b.ReportMetric(float64(it), "iters")
		})
	}
}
