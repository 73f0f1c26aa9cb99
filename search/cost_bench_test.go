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
// and over the full ones (n = 200), the median window's size and how many
// windows failed (timed to the failure), and logs the table with the worst
// windows' queries, on two corpora: Corel5k, and a generated corpus of
// repeated features, Corel5k's 5,000 images each 20 times (100,000 images:
// a copy has its original's features and keywords). Each window is
// re-ranked twice, in alternating order, by the path before a learner fitted
// one point a cluster of near-duplicates (Options.FitEachCopy: the metrics
// ending in -before) and by the served one. Run it alone (-benchtime 1x):
// it takes several minutes.
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
	}{{"corel5k", 1}, {"repeated-100k", 20}} {
		b.Run(c.name, func(b *testing.B) {
			ix := indexCorel(b, ml, c.copies)
			e := New(ix, nil, Options{})
			var paths [2]windowCosts // before, after
			for i, each := range []bool{true, false} {
				p, err := rerank.NewPlan(rerank.Options{Voters: DefaultVoters, FitEachCopy: each})
				if err != nil {
					b.Fatal(err)
				}
				paths[i].plan = p
			}
			qs := costQueryList(ml.LabelNames)
			for b.Loop() {
				paths[0].reset()
				paths[1].reset()
				var sizes []int
				for qi, q := range qs {
					w, err := e.Candidates(context.Background(), q, DefaultWindow, 0)
					if err != nil {
						b.Fatal(err)
					}
					ranked, rest := paths[1].plan.Split(w.Candidates)
					if !paths[1].plan.Votes(ranked) {
						continue
					}
					sizes = append(sizes, len(ranked))
					for k := range paths {
						paths[(qi+k)%2].add(b, q, ranked, rest)
					}
				}
				slices.Sort(sizes)
				for i, suffix := range []string{"-before", ""} {
					report(b, paths[i].all, suffix)
					report(b, paths[i].full, "-n200"+suffix)
					b.ReportMetric(float64(paths[i].failed), "failed"+suffix)
				}
				b.ReportMetric(float64(sizes[len(sizes)/2]), "median-window")
				b.ReportMetric(float64(len(paths[1].all)), "windows")
				b.ReportMetric(float64(len(paths[1].full)), "windows-n200")
				b.Logf("%s, cpu-ms a window:\n| path | windows (n = 200) | p50, p99, worst | n = 200: p50, p99, worst | worst / p50, n = 200 | worst window | failed |\n|---|---|---|---|---|---|---|\n%s\n%s",
					c.name, paths[0].row("before"), paths[1].row("after"))
			}
		})
	}
}

// windowCosts are the costs of one path (plan) over the queries.
type windowCosts struct {
	plan      *rerank.Plan
	all, full []time.Duration // every window, and those of DefaultWindow
	worst     time.Duration
	worstAt   string
	failed    int
}

func (c *windowCosts) reset() {
	c.all, c.full, c.worst, c.worstAt, c.failed = nil, nil, 0, "", 0
}

// add times the plan's kernel and ranking of one window.
func (c *windowCosts) add(b *testing.B, q string, ranked, rest []rerank.Candidate) {
	start := cputime.Process()
	k, stats, err := c.plan.Kernel(context.Background(), ranked)
	if err != nil {
		// Counted, and timed to the failure: a request that gets this
		// error has waited as long.
		c.failed++
		b.Logf("%q (n %d): %v", q, len(ranked), err)
		stats = &learners.Stats{}
	} else {
		c.plan.Rank(k, ranked, rest)
	}
	took := cputime.Process() - start
	c.all = append(c.all, took)
	if len(ranked) == DefaultWindow {
		c.full = append(c.full, took)
	}
	if took > c.worst {
		c.worst, c.worstAt = took, fmt.Sprintf("%q (n %d, %d iterations)", q, len(ranked), stats.Iterations)
	}
}

// row is a table row of the 50th and 99th percentiles and the worst
// window (every window; n = 200), the worst over the median full window and
// the worst window's query.
func (c *windowCosts) row(name string) string {
	p := func(d []time.Duration) string {
		if len(d) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f, %.1f, %.1f", pct(d, 0.5), pct(d, 0.99), pct(d, 1))
	}
	ratio := "-"
	if len(c.full) > 0 {
		ratio = fmt.Sprintf("%.1f", pct(c.full, 1)/pct(c.full, 0.5))
	}
	return fmt.Sprintf("| %s | %d (%d) | %s | %s | %s | %s | %d |", name, len(c.all), len(c.full),
		p(c.all), p(c.full), ratio, c.worstAt, c.failed)
}

// pct is the q-quantile of took (lower value), in ms.
func pct(took []time.Duration, q float64) float64 {
	s := slices.Clone(took)
	slices.Sort(s)
	return float64(s[int(q*float64(len(s)-1))].Microseconds()) / 1000
}

// report reports the 50th and 99th percentiles and the maximum of took,
// in ms, with suffix after their units.
func report(b *testing.B, took []time.Duration, suffix string) {
	if len(took) == 0 {
		return
	}
	b.ReportMetric(pct(took, 0.5), "p50-cpu-ms"+suffix)
	b.ReportMetric(pct(took, 0.99), "p99-cpu-ms"+suffix)
	b.ReportMetric(pct(took, 1), "worst-cpu-ms"+suffix)
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
