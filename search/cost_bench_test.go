package search

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"encoding/json"

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
// and over the full ones (n = 200), the median window's size, the median
// number of points the learner fits in a full window (one a cluster of
// near-duplicates) and how many windows failed (timed to the failure), and
// logs the table with the worst windows' queries, on two corpora: Corel5k, and a generated corpus of
// repeated features, Corel5k's 5,000 images each 20 times (100,000 images:
// a copy has its original's features and keywords). Each window is
// re-ranked by every path of costPaths, in rotating order (the metrics end
// in the path's name); on the repeated corpus the served path's worst full
// window is also reported over Corel5k's median full window (a full window
// of distinct images), and the log also compares each path's ranking with
// the full solve's: the share of windows with the same top 10, the Kendall
// tau of the full solve's top 50 and the largest change of a VisualRank
// score. Run it alone (-benchtime 1x, -v for the whole log): it takes
// several minutes.
func BenchmarkWindowCost(b *testing.B) {
	dir, ok := dataset.DataDir()
	if !ok {
		b.Skip("../shared/data not found (set KERNELRANK_SHARED_DATA)")
	}
	ml, err := dataset.LoadCorel5k(dir)
	if err != nil {
		b.Fatal(err)
	}
	var corelMedian float64 // the served path's median full Corel5k window, ms
	for _, c := range []struct {
		name   string
		copies int
	}{{"corel5k", 1}, {"repeated-100k", 20}} {
		b.Run(c.name, func(b *testing.B) {
			ix := indexCorel(b, ml, c.copies)
			e := New(ix, nil, Options{})
			paths := costPaths(b)
			full, served := &paths[1], &paths[len(paths)-1]
			qs := costQueryList(ml.LabelNames)
			for b.Loop() {
				for i := range paths {
					paths[i].reset()
				}
				var sizes, points []int
				for qi, q := range qs {
					w, err := e.Candidates(context.Background(), q, DefaultWindow, 0)
					if err != nil {
						b.Fatal(err)
					}
					win := served.plan.Split(w.Candidates)
					if !served.plan.Votes(win) {
						continue
					}
					sizes = append(sizes, len(win.Ranked))
					if len(win.Ranked) == DefaultWindow {
						points = append(points, win.Points())
					}
					res := make([][]rerank.Result, len(paths))
					for k := range paths {
						i := (qi + k) % len(paths) // alternate the order
						res[i] = paths[i].add(b, q, w.Candidates)
					}
					for i := 2; i < len(paths); i++ {
						if res[1] != nil && res[i] != nil {
							paths[i].agree = append(paths[i].agree, agreementOf(res[1], res[i]))
						}
					}
				}
				slices.Sort(sizes)
				for i := range paths {
					report(b, paths[i].all, "-"+paths[i].name)
					report(b, paths[i].full, "-n200-"+paths[i].name)
					b.ReportMetric(float64(paths[i].failed), "failed-"+paths[i].name)
				}
				b.ReportMetric(float64(sizes[len(sizes)/2]), "median-window")
				slices.Sort(points)
				if len(points) > 0 {
					b.ReportMetric(float64(points[len(points)/2]), "median-points-n200")
				}
				across := ""
				if c.copies == 1 && len(served.full) > 0 {
					corelMedian = pct(served.full, 0.5)
				} else if corelMedian > 0 && len(served.full) > 0 {
					r := pct(served.full, 1) / corelMedian
					b.ReportMetric(r, "worst-n200-over-corel5k-p50-served")
					across = fmt.Sprintf("\nserved: the worst full window over Corel5k's median full window: %.2f", r)
				}
				b.ReportMetric(float64(len(served.all)), "windows")
				b.ReportMetric(float64(len(served.full)), "windows-n200")
				table := "| path | windows (n = 200) | p50, p99, worst | n = 200: p50, p99, worst | worst / p50, n = 200 | worst window | failed |\n|---|---|---|---|---|---|---|"
				agreeTable := "| path | windows | top-10 set identical | Kendall tau, top 50: mean, min | max VisualRank change (x n): p50, p99, max |\n|---|---|---|---|---|"
				for i := range paths {
					table += "\n" + paths[i].row()
					if i > 1 {
						agreeTable += "\n" + paths[i].agreeRow()
					}
				}
				b.Logf("%s, cpu-ms a window:\n%s%s\nrankings against %s:\n%s", c.name, table, across, full.name, agreeTable)
			}
		})
	}
}

// costPaths are the re-rankings BenchmarkWindowCost compares on every
// window: each-copy, every candidate a point of the learner
// (rerank.Options.FitEachCopy, the path before a learner fitted one point a
// cluster of near-duplicates) with npk-fused's full solve; full-solve, the
// served path but with the gap certificate npk-fused had before its
// looser default (tol 1e-4); and the served default, last.
func costPaths(b *testing.B) []windowCosts {
	full := json.RawMessage(`{"tol":1e-4}`)
	paths := []windowCosts{
		{name: "each-copy", opt: rerank.Options{Params: full, FitEachCopy: true}},
		{name: "full-solve", opt: rerank.Options{Params: full}},
		{name: "served"},
	}
	for i := range paths {
		paths[i].opt.Voters = DefaultVoters
		p, err := rerank.NewPlan(paths[i].opt)
		if err != nil {
			b.Fatal(err)
		}
		paths[i].plan = p
	}
	return paths
}

// windowCosts are the costs of one path (plan) over the queries.
type windowCosts struct {
	name      string
	opt       rerank.Options
	plan      *rerank.Plan
	agree     []agreement     // against the full solve
	all, full []time.Duration // every window, and those of DefaultWindow
	worst     time.Duration
	worstAt   string
	failed    int
}

func (c *windowCosts) reset() {
	c.all, c.full, c.worst, c.worstAt, c.failed, c.agree = nil, nil, 0, "", 0, nil
}

// add times the plan's split (with its near-duplicate clusters), kernel and
// ranking of one window's candidates and returns the ranking (nil when the
// learner failed).
func (c *windowCosts) add(b *testing.B, q string, cands []rerank.Candidate) []rerank.Result {
	start := cputime.Process()
	win := c.plan.Split(cands)
	ranked := win.Ranked
	k, stats, err := c.plan.Kernel(context.Background(), win)
	if err != nil {
		// Counted, and timed to the failure: a request that gets this
		// error has waited as long.
		c.failed++
		b.Logf("%q (n %d): %v", q, len(ranked), err)
		stats = &learners.Stats{}
	}
	var res []rerank.Result
	if err == nil {
		res, _ = c.plan.Rank(k, win)
	}
	took := cputime.Process() - start
	c.all = append(c.all, took)
	if len(ranked) == DefaultWindow {
		c.full = append(c.full, took)
	}
	if took > c.worst {
		c.worst, c.worstAt = took, fmt.Sprintf("%q (n %d, %d points, %d iterations)", q, len(ranked), win.Points(), stats.Iterations)
	}
	return res
}

// row is a table row of the 50th and 99th percentiles and the worst
// window (every window; n = 200), the worst over the median full window and
// the worst window's query.
func (c *windowCosts) row() string {
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
	return fmt.Sprintf("| %s | %d (%d) | %s | %s | %s | %s | %d |", c.name, len(c.all), len(c.full),
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

// agreement is how far one window's ranking is from the full solve's.
type agreement struct {
	sameTop10 bool    // the same ten images on top, in any order
	tau       float64 // Kendall tau of the full solve's top 50 (or fewer), ordered by each
	maxChange float64 // largest change of an image's VisualRank score, times n (1 = a uniform score)
}

// agreementOf compares ranking got with ranking want (the full solve's).
func agreementOf(want, got []rerank.Result) agreement {
	score := make(map[string]float64, len(got))
	for _, r := range got {
		score[r.ID] = r.VisualRank
	}
	a := agreement{sameTop10: true}
	n := float64(len(want))
	for i, r := range want {
		a.maxChange = math.Max(a.maxChange, math.Abs(score[r.ID]-r.VisualRank)*n)
		if i < 10 && i < len(got) && !slices.ContainsFunc(want[:min(10, len(want))], func(w rerank.Result) bool { return w.ID == got[i].ID }) {
			a.sameTop10 = false
		}
	}
	// Kendall tau over the pairs the full solve orders (a tie there says
	// nothing to agree with); a pair tied in got counts as neither.
	top := want[:min(50, len(want))]
	conc, disc, pairs := 0, 0, 0
	for i := range top {
		for j := i + 1; j < len(top); j++ {
			if top[i].VisualRank == top[j].VisualRank {
				continue
			}
			pairs++
			switch si, sj := score[top[i].ID], score[top[j].ID]; {
			case si > sj:
				conc++
			case si < sj:
				disc++
			}
		}
	}
	a.tau = 1
	if pairs > 0 {
		a.tau = float64(conc-disc) / float64(pairs)
	}
	return a
}

// agreeRow is a table row of the path's agreement with the full solve.
func (c *windowCosts) agreeRow() string {
	if len(c.agree) == 0 {
		return fmt.Sprintf("| %s | 0 | - | - | - |", c.name)
	}
	same, tauSum, tauMin := 0, 0.0, 1.0
	var change []float64
	for _, a := range c.agree {
		if a.sameTop10 {
			same++
		}
		tauSum += a.tau
		tauMin = math.Min(tauMin, a.tau)
		change = append(change, a.maxChange)
	}
	slices.Sort(change)
	q := func(p float64) float64 { return change[int(p*float64(len(change)-1))] }
	n := float64(len(c.agree))
	return fmt.Sprintf("| %s | %d | %.1f%% | %.4f, %.3f | %.3f, %.3f, %.3f |", c.name, len(c.agree),
		100*float64(same)/n, tauSum/n, tauMin, q(0.5), q(0.99), q(1))
}
