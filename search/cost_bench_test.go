package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/kernelrank/kernelrank/internal/cputime"
	"github.com/kernelrank/kernelrank/internal/dataset"
	"github.com/kernelrank/kernelrank/learners"
	"github.com/kernelrank/kernelrank/rerank"
)

// costQueries is how many queries BenchmarkWindowCost times.
const costQueries = 1000

// BenchmarkWindowCost is the cost of re-ranking a query's window with the
// default re-ranker (npk-fused), uncached (kernel and VisualRank, the text
// stage not counted), in CPU time (cputime.Process: the process does
// nothing else meanwhile, and other work on the machine inflates it far
// less than wall time), over 1,000 seeded queries: every Corel5k keyword, then
// pairs of keywords (matching either) until there are 1,000. It reports the
// 50th and 99th percentiles and the worst window, in ms, over every window
// and over the full ones (n = 200), the median window's size, and logs
// the worst window's query and how many windows failed (timed to the
// failure), on two corpora: Corel5k, and a generated corpus of
// repeated features, Corel5k's 5,000 images each four times (20,000 images:
// a copy has its original's features and keywords). Run it alone
// (-benchtime 1x): each corpus takes a minute or two.
func BenchmarkWindowCost(b *testing.B) {
	dir, ok := dataset.DataDir()
	if !ok {
		b.Skip("../shared/data not found (set KERNELRANK_SHARED_DATA)")
	}
	ml, err := dataset.LoadCorel5k(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		copies int
	}{{"corel5k", 1}, {"repeated-20k", 4}} {
		b.Run(c.name, func(b *testing.B) {
			ix := indexCorel(b, ml, c.copies)
			e := New(ix, nil, Options{})
			p, err := rerank.NewPlan(rerank.Options{Voters: DefaultVoters})
			if err != nil {
				b.Fatal(err)
			}
			qs := costQueryList(ml.LabelNames)
			for b.Loop() {
				var all, full []time.Duration // every window, and those of DefaultWindow
				var sizes []int
				worst, worstAt, failed := time.Duration(0), "", 0
				for _, q := range qs {
					w, err := e.Candidates(context.Background(), q, DefaultWindow, 0)
					if err != nil {
						b.Fatal(err)
					}
					ranked, rest := p.Split(w.Candidates)
					if !p.Votes(ranked) {
						continue
					}
					start := cputime.Process()
					k, stats, err := p.Kernel(context.Background(), ranked)
					if err != nil {
						// Counted, and timed to the failure: a request
						// that gets this error has waited as long.
						failed++
						b.Logf("%q (n %d): %v", q, len(ranked), err)
						stats = &learners.Stats{}
					} else {
						p.Rank(k, ranked, rest)
					}
					took := cputime.Process() - start
					all, sizes = append(all, took), append(sizes, len(ranked))
					if len(ranked) == DefaultWindow {
						full = append(full, took)
					}
					if took > worst {
						worst, worstAt = took, fmt.Sprintf("%q (n %d, %d iterations)", q, len(ranked), stats.Iterations)
					}
				}
				slices.Sort(sizes)
				report(b, all, "")
				report(b, full, "-n200")
				b.ReportMetric(float64(sizes[len(sizes)/2]), "median-window")
				b.ReportMetric(float64(len(all)), "windows")
				b.ReportMetric(float64(len(full)), "windows-n200")
				b.ReportMetric(float64(failed), "failed")
				b.Logf("the worst window: %s", worstAt)
			}
		})
	}
}

// report reports the 50th and 99th percentiles and the maximum of took,
// in ms, with suffix after their units.
func report(b *testing.B, took []time.Duration, suffix string) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	at := func(q float64) float64 { return float64(took[int(q*float64(len(took)-1))].Microseconds()) / 1000 }
	b.ReportMetric(at(0.5), "p50-cpu-ms"+suffix)
	b.ReportMetric(at(0.99), "p99-cpu-ms"+suffix)
	b.ReportMetric(at(1), "worst-cpu-ms"+suffix)
}

// costQueryList is every keyword, then seeded pairs of keywords, to
// costQueries queries.
func costQueryList(labels []string) []string {
	qs := slices.Clone(labels)
	rng := rand.New(rand.NewPCG(1, 2))
	for len(qs) < costQueries {
		qs = append(qs, labels[rng.IntN(len(labels))]+" "+labels[rng.IntN(len(labels))])
	}
	return qs[:costQueries]
}
